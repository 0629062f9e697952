package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"sigs.k8s.io/yaml"

	"github.com/example/cloud-provider-example/deploy"
	"github.com/example/cloud-provider-example/internal/clustertraffic"
	"github.com/example/cloud-provider-example/internal/freeport"
	"github.com/example/cloud-provider-example/internal/gatewaycrds"
	"github.com/example/cloud-provider-example/internal/netns"
	"github.com/example/cloud-provider-example/internal/testcluster"
	"github.com/example/cloud-provider-example/simulator"
)

// demo is everything the supervisor started.
type demo struct {
	dir, bin   string
	procs      []*exec.Cmd // stopped in reverse order
	cluster    *testcluster.Cluster
	token, ro  string
	api, meta  string
	kubeconfig string
	// webhook is where the CCM serves its admission webhooks.
	webhook string
	// helm renders the controller's RBAC from the chart (Gateway API's
	// rights with it); traffic runs the pods and forwards the node ports.
	helm    string
	traffic *clustertraffic.Traffic
}

// supervise starts the demo, prints what happens, then keeps everything
// running until SIGTERM (example-demo down). It runs in a user and
// network namespace of its own, where the cloud's addresses are local.
func supervise(dir, bin, helm string) error {
	code, inside, err := netns.Run(simulator.LocalPrefixes...)
	if err != nil {
		return err
	}
	if !inside {
		os.Exit(code)
	}
	if err := os.WriteFile(pidFile(dir), []byte(strconv.Itoa(os.Getpid())), 0o600); err != nil {
		return err
	}
	d := &demo{dir: dir, bin: bin, helm: helm}
	stop := make(chan os.Signal, 1)
	signal.Notify(stop, syscall.SIGTERM, syscall.SIGINT)
	err = d.start()
	if err != nil {
		fmt.Printf("%s: %v\n", failedMarker, err)
	} else {
		fmt.Println(readyMarker)
		<-stop
	}
	d.stop()
	os.Remove(pidFile(dir))
	return err
}

func (d *demo) start() error {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Minute)
	defer cancel()
	step("starting the Example cloud simulator (seeded from hack/seed-demo.yaml)")
	if err := d.startCloud(); err != nil {
		return err
	}
	step("starting a local control plane (etcd, kube-apiserver, kube-controller-manager, kube-scheduler and kwok as every node's kubelet; built from source on first use, cached)")
	c, err := testcluster.Run(ctx, testcluster.Options{Dir: filepath.Join(d.dir, "control-plane"), Log: os.Stdout,
		Workloads: true, PodReadyAnnotation: clustertraffic.ListeningAnnotation})
	if err != nil {
		return fmt.Errorf("control plane: %w", err)
	}
	d.cluster = c
	step("running the pods' processes at their IPs and forwarding the nodes' node ports (as kubelet and kube-proxy would)")
	logs := filepath.Join(d.dir, "pods")
	if err := os.MkdirAll(logs, 0o700); err != nil {
		return err
	}
	trafficLog, err := os.Create(filepath.Join(d.dir, "traffic.log"))
	if err != nil {
		return err
	}
	if d.traffic, err = clustertraffic.Start(context.Background(), clustertraffic.Options{Client: c.Client,
		EchoBinary: filepath.Join(d.bin, "example-echo"), LogDir: logs, Log: slog.New(slog.NewTextHandler(trafficLog, nil))}); err != nil {
		return err
	}
	step("installing Gateway API's CRDs (" + strings.Join(gatewaycrds.Kinds, ", ") + ")")
	if err := gatewaycrds.Apply(ctx, c.Client, c.Admin); err != nil {
		return err
	}
	step("installing the CCM's ServiceAccount and RBAC as deploy/chart renders them with gatewayAPI.enabled")
	all, err := deploy.ChartObjects(ctx, d.helm, map[string]any{"gatewayAPI": map[string]any{"enabled": true}})
	if err != nil {
		return err
	}
	if err := deploy.Apply(ctx, c.Client, deploy.RBACOf(all)); err != nil {
		return err
	}
	if d.kubeconfig, err = c.WriteServiceAccountKubeconfig(ctx, deploy.Namespace, deploy.ServiceAccount); err != nil {
		return err
	}
	step("starting example-cloud-controller-manager (local state backend)")
	if err := d.startCCM(); err != nil {
		return err
	}
	step("installing its admission webhooks from deploy/base (the preview and the author stamp), reaching it at " + d.webhook)
	hooks, err := deploy.WebhooksAt("https://"+d.webhook, 0)
	if err != nil {
		return err
	}
	if err := deploy.Apply(ctx, c.Client, hooks); err != nil {
		return err
	}
	return d.show(ctx)
}

func (d *demo) startCloud() error {
	d.token, d.ro = randomToken(), randomToken()
	d.api, d.meta = "127.0.0.1:"+freePort(), "127.0.0.1:"+freePort()
	for name, v := range map[string]string{"token": d.token, "readonly-token": d.ro} {
		if err := os.WriteFile(filepath.Join(d.dir, name), []byte(v), 0o600); err != nil {
			return err
		}
	}
	seed, err := repoFile("hack/seed-demo.yaml")
	if err != nil {
		return err
	}
	cmd := exec.Command(filepath.Join(d.bin, "example-cloud"),
		"--listen", d.api, "--metadata-listen", d.meta, "--data-dir", filepath.Join(d.dir, "cloud"),
		"--seed", seed, "--provision-delay", "3s", "--self-instance", "demo-control-plane", "--data-plane")
	cmd.Env = append(os.Environ(), "EXAMPLE_TOKEN="+d.token, "EXAMPLE_READONLY_TOKEN="+d.ro)
	if err := d.run(cmd, "example-cloud.log"); err != nil {
		return err
	}
	return waitHTTP("http://"+d.api+"/healthz", 20*time.Second)
}

func (d *demo) startCCM() error {
	d.webhook = "127.0.0.1:" + freePort()
	cfg := map[string]any{
		"clusterID": "demo",
		"region":    "ex-west-1",
		"api":       map[string]any{"endpoint": "http://" + d.api, "tokenFile": filepath.Join(d.dir, "token")},
		"metadata":  map[string]any{"endpoint": "http://" + d.meta, "tokenFile": filepath.Join(d.dir, "readonly-token")},
		"network":   map[string]any{"name": "demo"},
		"terraform": map[string]any{
			"workDir": filepath.Join(d.dir, "work"), "cliConfig": filepath.Join(d.bin, "terraform.rc"),
			"lockFile": filepath.Join(d.bin, "terraform-provider.lock.hcl"), "keepPlanText": true,
		},
		"state": map[string]any{"type": "local", "local": map[string]any{"dir": filepath.Join(d.dir, "state")}},
		// The CCM's rights are in its own namespace (deploy/base).
		"review": map[string]any{"namespace": deploy.Namespace},
		// A controller outside the cluster: reached by URL, so its
		// certificate names 127.0.0.1.
		"webhook":    map[string]any{"enabled": true, "address": d.webhook, "certificates": map[string]any{"extraIPs": []string{"127.0.0.1"}}},
		"gatewayAPI": map[string]any{"enabled": true},
	}
	data, err := yaml.Marshal(cfg)
	if err != nil {
		return err
	}
	cfgPath := filepath.Join(d.dir, "cloud-config.yaml")
	if err := os.WriteFile(cfgPath, data, 0o600); err != nil {
		return err
	}
	cmd := exec.Command(filepath.Join(d.bin, "example-cloud-controller-manager"),
		"--cloud-provider=example", "--cloud-config="+cfgPath,
		"--kubeconfig="+d.kubeconfig, "--authentication-kubeconfig="+d.kubeconfig, "--authorization-kubeconfig="+d.kubeconfig,
		"--bind-address=127.0.0.1", "--secure-port="+freePort(),
		"--leader-elect=true", "--use-service-account-credentials=false",
		"--configure-cloud-routes=true", "--allocate-node-cidrs=true", "--cluster-cidr=10.244.0.0/16",
		"--node-monitor-period=5s", "--route-reconciliation-period=10s",
		"--concurrent-service-syncs=8", "--kube-api-qps=100", "--kube-api-burst=200", "-v=2")
	return d.run(cmd, "ccm.log")
}

// run starts a process of the demo with its output in dir/log.
func (d *demo) run(cmd *exec.Cmd, log string) error {
	f, err := os.Create(filepath.Join(d.dir, log))
	if err != nil {
		return err
	}
	cmd.Stdout, cmd.Stderr = f, f
	// Die with the supervisor, whatever kills it.
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGTERM}
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("start %s: %w", filepath.Base(cmd.Path), err)
	}
	d.procs = append(d.procs, cmd)
	return nil
}

// stop stops the pods, the CCM, the control plane and the cloud, in that
// order.
func (d *demo) stop() {
	if d.traffic != nil {
		d.traffic.Stop()
	}
	for i := len(d.procs) - 1; i >= 0; i-- {
		p := d.procs[i]
		if i == 0 && d.cluster != nil {
			_ = d.cluster.Close() // after the CCM, before the cloud
		}
		_ = p.Process.Signal(syscall.SIGTERM)
		done := make(chan struct{})
		go func() { _, _ = p.Process.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			_ = p.Process.Kill()
		}
	}
	if len(d.procs) == 0 && d.cluster != nil {
		_ = d.cluster.Close()
	}
}

func step(msg string) { fmt.Printf("==> %s\n", msg) }

func randomToken() string {
	b := make([]byte, 16)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

func freePort() string {
	port, err := freeport.One()
	if err != nil {
		panic(err)
	}
	return strconv.Itoa(port)
}

// repoFile finds a file of the repository from the working directory.
func repoFile(rel string) (string, error) {
	p, err := filepath.Abs(rel)
	if err != nil {
		return "", err
	}
	if _, err := os.Stat(p); err != nil {
		return "", fmt.Errorf("%s: run the demo from the repository root (make demo): %w", rel, err)
	}
	return p, nil
}
