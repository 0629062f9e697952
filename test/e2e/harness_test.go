// Package e2e runs the real example-cloud-controller-manager binary against
// a real etcd + kube-apiserver (internal/testcluster), the Example cloud
// simulator over HTTP, and real terraform with the provider mirror. The CCM
// authenticates as the chart's ServiceAccount with exactly the RBAC that
// deploy/chart renders (helm template; with its defaults, the objects of
// deploy/base), so a missing permission fails here.
//
// Each test has its own API server, simulator and controllers. Those that
// assert nothing of time call t.Parallel (five environments at a time,
// the long tests first: main_test.go),
// using the CPU one test leaves idle while it waits on the cloud: what
// the others count is their own (terraform processes through a wrapper of
// their own, the goroutines of their own controller). The soak (its heap
// bound), chaos, conformance, sharding, crash, drain and damping tests
// run alone, first.
package e2e

import (
	"bytes"
	"cmp"
	"context"
	"fmt"
	"maps"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes"
	"sigs.k8s.io/yaml"

	"github.com/example/cloud-provider-example/deploy"
	"github.com/example/cloud-provider-example/exampleapi"
	"github.com/example/cloud-provider-example/internal/clustertraffic"
	"github.com/example/cloud-provider-example/internal/freeport"
	"github.com/example/cloud-provider-example/internal/gatewaycrds"
	"github.com/example/cloud-provider-example/internal/need"
	"github.com/example/cloud-provider-example/internal/testcluster"
	"github.com/example/cloud-provider-example/internal/testcpu"
	"github.com/example/cloud-provider-example/internal/testkit"
	"github.com/example/cloud-provider-example/internal/tftest"
	"github.com/example/cloud-provider-example/simulator/simtest"
)

const (
	region = "ex-west-1"
	// namespace is the CCM's own (the chart's default, deploy/base's): its
	// ServiceAccount, plan records, approvals and kubernetes-backend states.
	namespace = deploy.Namespace
	ccmSA     = deploy.ServiceAccount
)

type options struct {
	state          string // local (default), kubernetes or pg
	pgConnStrFile  string // state: pg
	policy         string // cluster apply policy (default auto)
	driftInterval  string // enables drift checks
	lockTimeout    string // default 20s
	staleLockAge   string // default 30s
	provisionDelay time.Duration
	// extraArgs are appended to the CCM's flags; extraEnv to its
	// environment.
	extraArgs []string
	extraEnv  []string
	// rules are the policy rules (review.policy.rules); nil means none,
	// unless shippedRules asks for the controller's defaults.
	rules        []map[string]any
	shippedRules bool
	// approvers is review.approvals.required (default 1).
	approvers int
	// adoption is loadBalancer.adoption (default: not allowed).
	adoption map[string]any
	// lbPublicPrefix is the cloud's public load balancer pool (default:
	// the simulator's 254 addresses).
	lbPublicPrefix netip.Prefix
	// tlsResync is loadBalancer.tlsSecrets.resyncInterval (default 30s).
	tlsResync string
	// poolsPrune is loadBalancer.targetPools.pruneInterval (default 10m).
	poolsPrune string
	// targetPools are more loadBalancer.targetPools settings.
	targetPools map[string]any
	// addresses is loadBalancer.addresses.
	addresses map[string]any
	// tc is the distribution the CCM runs (terraform.distribution, terraform.binary);
	// zero: tftest.Get's (terraform on PATH).
	tc tftest.Toolchain
	// shipped runs the chart's throughput settings (shippedThroughput)
	// instead of the tests' own: benchmarks and the soak.
	shipped bool
	// countProcesses gives the CCM a terraform wrapper that logs every
	// process it starts (env.procs).
	countProcesses bool
	// webhook serves the admission webhooks (installWebhooks installs
	// their configurations).
	webhook bool
	// encryption is terraform.encryption (tofu only); secrets are
	// created in the controller's namespace before it starts.
	encryption map[string]any
	secrets    []*v1.Secret
	// replicas is how many controllers run (default 1); more than one
	// shards the Services over them (sharding.enabled, a 4s lease), each
	// with its own workspaces, audit log and ports, as pods would.
	replicas int
	// gatewayAPI installs Gateway API's CRDs, turns the front-end on
	// (gatewayAPI.enabled) and gives the controller the chart's RBAC for
	// it.
	gatewayAPI bool
	// crdChannel is the channel of those CRDs (default standard).
	crdChannel gatewaycrds.Channel
	// hostnameClaimGrace is gatewayAPI.hostnameClaimGrace (default 15m).
	hostnameClaimGrace string
	// workloads runs kube-controller-manager, kube-scheduler and kwok
	// beside the API server, so that Deployments get Ready pods on the
	// env's nodes (testcluster.WithWorkloads).
	workloads bool
	// traffic makes the env carry traffic (with workloads): the cloud's
	// data plane serves the load balancers, pods of clustertraffic.EchoImage
	// run example-echo at their IPs and are Ready once it listens, and
	// nodes forward their node ports. Such envs run one at a time: they
	// share the namespace's addresses (traffic_test.go).
	traffic bool
}

type env struct {
	t       testing.TB
	dir     string
	cluster *testcluster.Cluster
	kube    kubernetes.Interface
	sim     *simtest.Sim
	api     *exampleapi.Client
	ccmBin  string
	args    []string
	ccmEnv  []string
	ccm     *exec.Cmd
	ccmLog  string
	// stateDir holds local state files (state: local).
	stateDir string
	workDir  string
	auditLog string
	// securePort serves the CCM's /healthz and /metrics.
	securePort string
	// webhookPort serves the admission webhooks (options.webhook).
	webhookPort string
	// gatewayAPI: the front-end is on (options.gatewayAPI); its webhook
	// is installed with the others.
	gatewayAPI bool
	// procs counts the CCM's terraform processes from the OS (options.countProcesses).
	procs *tftest.ProcessLog
	// replicas are the controllers of a sharded env (options.replicas),
	// the first of them e.ccm; nil for one controller.
	replicas []*replica
	// meter adds up the CPU of the control plane and the controllers
	// (with their terraform), recorded for the test at its end.
	meter testcpu.Meter
	// podCIDRs counts the pod CIDRs given to nodes of an env with
	// workloads (options.workloads, options.traffic): each node its own
	// /24 of 10.244.0.0/16, which the route controller routes and kwok
	// takes pod IPs from, so the cloud reaches the pods (VPC-native).
	podCIDRs  int
	workloads bool
}

// replica is one controller of a sharded env.
type replica struct {
	name       string // its POD_NAME
	args       []string
	cmd        *exec.Cmd
	log        string
	auditLog   string
	securePort string
}

func ccmBinary(t testing.TB) string {
	bin := os.Getenv("EXAMPLE_BIN")
	if bin == "" {
		need.Missing(t, "EXAMPLE_BIN is unset: the e2e runs the built binaries (make build)")
	}
	path := filepath.Join(bin, "example-cloud-controller-manager")
	if _, err := os.Stat(path); err != nil {
		t.Fatalf("%v (run make build)", err)
	}
	return path
}

// chartRBAC renders deploy/chart once per test process and keeps what
// deploy.RBACObjects would keep of the base; gatewayRBAC with
// gatewayAPI.enabled.
var (
	chartRBAC   = sync.OnceValues(func() ([]runtime.Object, error) { return renderRBAC(nil) })
	gatewayRBAC = sync.OnceValues(func() ([]runtime.Object, error) {
		return renderRBAC(map[string]any{"gatewayAPI": map[string]any{"enabled": true}})
	})
)

func renderRBAC(values map[string]any) ([]runtime.Object, error) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	objs, err := deploy.ChartObjects(ctx, os.Getenv("EXAMPLE_HELM"), values)
	if err != nil {
		return nil, err
	}
	return deploy.RBACOf(objs), nil
}

func newEnv(t testing.TB, o options) *env {
	t.Helper()
	admit(t, o.traffic)
	e := &env{t: t, dir: t.TempDir(), ccmBin: ccmBinary(t), workloads: o.workloads || o.traffic}
	// The first cleanup runs last, once every process is reaped.
	t.Cleanup(func() {
		if e.cluster != nil {
			for _, ps := range e.cluster.Reaped() {
				e.meter.Add(ps)
			}
		}
		e.meter.Report(t)
	})
	if os.Getenv("EXAMPLE_HELM") == "" {
		need.Missing(t, "EXAMPLE_HELM is unset: the e2e installs the RBAC that deploy/chart renders with hack/helm.sh's helm")
	}
	tc := o.tc
	if tc.Distribution == "" {
		tc = tftest.Get(t)
	}
	if o.provisionDelay == 0 {
		o.provisionDelay = 200 * time.Millisecond
	}
	simOpts := []simtest.Option{simtest.WithProvisionDelay(o.provisionDelay)}
	if o.traffic {
		o.workloads = true
		simOpts = append(simOpts, simtest.WithDataPlane())
	}
	if o.lbPublicPrefix.IsValid() {
		simOpts = append(simOpts, simtest.WithLBPublicPrefix(o.lbPublicPrefix))
	}
	e.sim = simtest.Start(t, simOpts...)
	api, err := exampleapi.New(exampleapi.Options{Endpoint: e.sim.URL, Token: e.sim.Token})
	if err != nil {
		t.Fatal(err)
	}
	e.api = api
	var clusterOpts []testcluster.Option
	if o.workloads {
		clusterOpts = append(clusterOpts, testcluster.WithWorkloads())
	}
	if o.traffic {
		clusterOpts = append(clusterOpts, testcluster.WithPodReadyAnnotation(clustertraffic.ListeningAnnotation))
	}
	e.cluster = testcluster.Start(t, clusterOpts...)
	e.kube = e.cluster.Client
	if o.traffic {
		e.startTraffic()
	}

	// The CCM runs as the chart's ServiceAccount with exactly its RBAC (and
	// its pre-created leader-election Lease: it may not create one).
	rbac := chartRBAC
	if o.gatewayAPI {
		rbac, e.gatewayAPI = gatewayRBAC, true
		gatewaycrds.InstallChannel(t, e.kube, e.cluster.Admin, cmp.Or(o.crdChannel, gatewaycrds.Standard))
	}
	objs, err := rbac()
	if err != nil {
		t.Fatal(err)
	}
	if err := deploy.Apply(testkit.Context(t), e.kube, objs); err != nil {
		t.Fatal(err)
	}
	kubeconfig := e.cluster.ServiceAccountKubeconfig(t, namespace, ccmSA)

	tokenFile := filepath.Join(e.dir, "token")
	roFile := filepath.Join(e.dir, "readonly-token")
	testkit.Must(t, os.WriteFile(tokenFile, []byte(e.sim.Token), 0o600))
	testkit.Must(t, os.WriteFile(roFile, []byte(e.sim.ReadOnlyToken), 0o600))
	e.stateDir = filepath.Join(e.dir, "states")
	e.workDir = filepath.Join(e.dir, "work")
	st := map[string]any{"type": "local", "local": map[string]any{"dir": e.stateDir}}
	switch o.state {
	case "kubernetes":
		st = map[string]any{"type": "kubernetes", "kubernetes": map[string]any{"namespace": namespace, "kubeconfigPath": kubeconfig}}
	case "pg":
		st = map[string]any{"type": "pg", "pg": map[string]any{"connStrFile": o.pgConnStrFile, "schemaName": "ccm"}}
	}
	drift := map[string]any{"disabled": true}
	if o.driftInterval != "" {
		drift = map[string]any{"interval": o.driftInterval, "concurrency": 2}
	}
	if o.policy == "" {
		o.policy = "auto"
	}
	if o.lockTimeout == "" {
		o.lockTimeout = "20s"
	}
	if o.staleLockAge == "" {
		o.staleLockAge = "30s"
	}
	e.auditLog = filepath.Join(e.dir, "audit.jsonl")
	// The tests install the policies and wait until the API server
	// enforces them (waitAllowed, "the author policy in force"), then act
	// at once: no propagation time to sit out. review's unit tests cover it.
	approvals := map[string]any{"required": max(o.approvers, 1), "policyPropagation": "0s"}
	review := map[string]any{"namespace": namespace, "auditLog": e.auditLog, "drift": drift, "approvals": approvals}
	if !o.shippedRules {
		rules := o.rules
		if rules == nil {
			rules = []map[string]any{}
		}
		review["policy"] = map[string]any{"rules": rules}
	}
	lb := map[string]any{}
	if o.adoption != nil {
		lb["adoption"] = o.adoption
	}
	if o.tlsResync != "" {
		lb["tlsSecrets"] = map[string]any{"resyncInterval": o.tlsResync}
	}
	pools := maps.Clone(o.targetPools)
	if o.poolsPrune != "" {
		if pools == nil {
			pools = map[string]any{}
		}
		pools["pruneInterval"] = o.poolsPrune
	}
	if pools != nil {
		lb["targetPools"] = pools
	}
	if o.addresses != nil {
		lb["addresses"] = o.addresses
	}
	// The binary is given by path, as the shipped config does: the
	// controller then runs nothing to find it.
	binary := tc.Terraform
	if o.countProcesses {
		e.procs = tftest.CountProcesses(t, tc.Terraform)
		binary = e.procs.Wrapper
	}
	syncs := []string{"--concurrent-service-syncs=4"}
	tf := map[string]any{
		"binary": binary, "workDir": e.workDir, "cliConfig": tc.CLIConfig, "lockFile": tc.LockFile,
		"concurrency": 4, "lockTimeout": o.lockTimeout, "staleLockAge": o.staleLockAge, "applyPolicy": o.policy,
	}
	if o.shipped {
		ship, err := shippedThroughput()
		testkit.Must(t, err)
		syncs, tf["concurrency"] = ship.args, ship.concurrency
	}
	if tc.Distribution == tftest.Tofu {
		tf["distribution"] = "tofu"
	}
	if o.encryption != nil {
		tf["encryption"] = o.encryption
	}
	for _, sec := range o.secrets {
		_, err := e.kube.CoreV1().Secrets(namespace).Create(testkit.Context(t), sec, metav1.CreateOptions{})
		testkit.Must(t, err)
	}
	cfg := map[string]any{
		"clusterID":    "e2e",
		"region":       region,
		"api":          map[string]any{"endpoint": e.sim.URL, "tokenFile": tokenFile},
		"metadata":     map[string]any{"endpoint": e.sim.MetadataURL, "tokenFile": roFile, "cacheTTL": "1s"},
		"network":      map[string]any{"name": "default"},
		"terraform":    tf,
		"state":        st,
		"review":       review,
		"loadBalancer": lb,
	}
	if o.webhook {
		e.webhookPort = freePort(t)
		wh := map[string]any{"enabled": true, "address": "127.0.0.1:" + e.webhookPort,
			"certificates": map[string]any{"extraIPs": []string{"127.0.0.1"}}}
		if !o.shipped {
			// Tests check the plan's words, not the fallback's, on a
			// loaded machine; benchmarks keep the shipped budget.
			wh["previewBudget"] = "8s"
		}
		cfg["webhook"] = wh
	}
	if o.gatewayAPI {
		gw := map[string]any{"enabled": true}
		if o.hostnameClaimGrace != "" {
			gw["hostnameClaimGrace"] = o.hostnameClaimGrace
		}
		if !o.workloads {
			// No pods run without workloads: such a test's Gateways
			// forward to node ports, whose routing the simulator's
			// request endpoint shows. Pods are targets where they run
			// (TestGatewayTraffic, the conformance suite).
			gw["targetType"] = "node"
		}
		cfg["gatewayAPI"] = gw
	}
	if o.replicas > 1 {
		// Tests use a short lease, for quick failovers; benchmarks the
		// chart's.
		cfg["sharding"] = map[string]any{"enabled": true, "shards": 12, "leaseDuration": "4s"}
		if o.shipped {
			ship, err := shippedThroughput()
			testkit.Must(t, err)
			cfg["sharding"] = ship.sharding
		}
	}
	cfgPath := e.writeConfig(cfg, "")
	controllers := "cloud-node,cloud-node-lifecycle,service,route"
	if o.gatewayAPI {
		controllers += ",gateway" // as the shipped "*" would
	}

	e.args = []string{
		"--cloud-provider=example",
		"--cloud-config=" + cfgPath,
		"--kubeconfig=" + kubeconfig,
		"--authentication-kubeconfig=" + kubeconfig,
		"--authorization-kubeconfig=" + kubeconfig,
		"--bind-address=127.0.0.1",
		"--leader-elect=true",
		"--leader-elect-resource-namespace=" + deploy.LeaderElectionNamespace,
		"--leader-elect-resource-name=" + deploy.LeaderElectionLease,
		"--leader-elect-lease-duration=4s",
		"--leader-elect-renew-deadline=3s",
		"--leader-elect-retry-period=1s",
		"--use-service-account-credentials=false",
		"--controllers=" + controllers,
		"--configure-cloud-routes=true",
		"--allocate-node-cidrs=true",
		"--cluster-cidr=10.244.0.0/16,fd00:244::/48",
		"--node-monitor-period=1s",
		"--node-status-update-frequency=2s",
		"--route-reconciliation-period=2s",
		"-v=2",
	}
	e.args = append(e.args, syncs...)
	e.args = append(e.args, o.extraArgs...)
	e.ccmEnv = o.extraEnv
	if o.replicas > 1 {
		e.startReplicas(cfg, o.replicas)
	} else {
		e.startCCM()
	}
	e.waitLeader()
	// The CCM runs the distribution asked for: it logs the one it found.
	want := fmt.Sprintf("distribution=%q binary=%q", tc.Distribution, binary)
	testkit.Eventually(t, 30*time.Second, "CCM runs "+tc.Distribution, func() error {
		if data, _ := os.ReadFile(e.ccmLog); !strings.Contains(string(data), want) {
			return fmt.Errorf("no %s in the CCM log", want)
		}
		return nil
	})
	return e
}

// writeConfig writes cfg as the cloud config of the replica named name
// ("" for a controller alone) and returns its path.
func (e *env) writeConfig(cfg map[string]any, name string) string {
	data, err := yaml.Marshal(cfg)
	testkit.Must(e.t, err)
	path := filepath.Join(e.dir, "cloud-config"+name+".yaml")
	testkit.Must(e.t, os.WriteFile(path, data, 0o600))
	return path
}

// startReplicas starts n sharded controllers, each with its own
// workspaces, audit log and ports (a pod's emptyDir and stdout); the first
// is e.ccm, with e's paths.
func (e *env) startReplicas(cfg map[string]any, n int) {
	tf, review := cfg["terraform"].(map[string]any), cfg["review"].(map[string]any)
	wh, _ := cfg["webhook"].(map[string]any)
	for i := range n {
		r := &replica{name: fmt.Sprintf("ccm-%d", i), auditLog: e.auditLog}
		if i > 0 {
			r.auditLog = filepath.Join(e.dir, r.name+"-audit.jsonl")
			review["auditLog"], tf["workDir"] = r.auditLog, filepath.Join(e.dir, r.name+"-work")
			if wh != nil {
				wh["address"] = "127.0.0.1:" + freePort(e.t)
			}
		}
		r.args = slices.Clone(e.args)
		for j, a := range r.args {
			if strings.HasPrefix(a, "--cloud-config=") {
				r.args[j] = "--cloud-config=" + e.writeConfig(cfg, "-"+r.name)
			}
		}
		e.replicas = append(e.replicas, r)
		e.startSharded(r)
	}
	e.ccm, e.ccmLog, e.securePort = e.replicas[0].cmd, e.replicas[0].log, e.replicas[0].securePort
}

// startSharded starts replica r (again, after a kill: a new process, a new
// identity in the shards' Leases).
func (e *env) startSharded(r *replica) {
	env := e.ccmEnv
	e.ccmEnv = append(slices.Clone(env), "POD_NAME="+r.name)
	r.cmd, r.log, r.securePort = e.startServing(r.args)
	e.ccmEnv = env
}

// waitLeader waits until a CCM holds the pre-created Lease, which it may
// only get and update.
func (e *env) waitLeader() {
	leases := e.kube.CoordinationV1().Leases(deploy.LeaderElectionNamespace)
	testkit.Eventually(e.t, 30*time.Second, "CCM leads", func() error {
		l, err := leases.Get(testkit.Context(e.t), deploy.LeaderElectionLease, metav1.GetOptions{})
		if err != nil {
			return err
		}
		if l.Spec.HolderIdentity == nil || *l.Spec.HolderIdentity == "" {
			return fmt.Errorf("lease %s has no holder", l.Name)
		}
		return nil
	})
}

// startCCM starts the CCM binary; its log is printed when the test fails.
func (e *env) startCCM() {
	e.ccm, e.ccmLog, e.securePort = e.startServing(e.args)
}

// startServing starts a CCM with args on a free secure port, and again if
// a process of a parallel test took a port it listens on between
// freePort's look and the CCM's bind (seen in CI: the controller exited,
// "bind: address already in use"): on another secure port, or with its
// webhook port moved in its cloud config.
func (e *env) startServing(args []string) (*exec.Cmd, string, string) {
	for attempt := 1; ; attempt++ {
		port := freePort(e.t)
		cmd, log := e.startReplica(append([]string{"--secure-port=" + port}, args...))
		var taken string
		testkit.EventuallyEvery(e.t, time.Minute, 50*time.Millisecond, "the CCM serving on "+port, func() error {
			data, _ := os.ReadFile(log)
			switch {
			case bytes.Contains(data, []byte("Serving securely on")):
				return nil
			case bytes.Contains(data, []byte("address already in use")):
				if taken = takenPort(data); taken == "" {
					taken = port // words not read: the secure port, likeliest
				}
				return nil
			}
			return fmt.Errorf("not yet")
		})
		if taken == "" {
			return cmd, log, port
		}
		e.killCCM(cmd)
		if attempt == 3 {
			e.t.Fatalf("a port of the CCM was taken three times (last %s)", taken)
		}
		if taken != port && !e.movePort(args, taken) {
			e.t.Fatalf("port %s, which the CCM could not bind, is neither its secure port nor in its cloud config", taken)
		}
		e.t.Logf("port %s was taken before the CCM bound it: starting it again", taken)
	}
}

// startReplica starts one more CCM process with args; killed at the
// test's end, its log printed when the test fails.
func (e *env) startReplica(args []string) (*exec.Cmd, string) {
	t := e.t
	logPath := filepath.Join(e.dir, fmt.Sprintf("ccm-%d.log", time.Now().UnixNano()))
	logf, err := os.Create(logPath)
	testkit.Must(t, err)
	cmd := exec.Command(e.ccmBin, args...)
	// TMPDIR: the sockets of its in-process provider servers (go-plugin's,
	// in $TMPDIR) go with the test's directory; a CCM killed leaves them
	// (a container's /tmp goes with it), about 400 in /tmp a run.
	cmd.Env = append(append(os.Environ(), "POD_NAMESPACE="+namespace, "TMPDIR="+e.dir), e.ccmEnv...) // as the Deployment's downward API
	cmd.Stdout, cmd.Stderr = logf, logf
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	testkit.Must(t, cmd.Start())
	t.Cleanup(func() {
		e.killCCM(cmd)
		logf.Close()
		if t.Failed() {
			data, _ := os.ReadFile(logPath)
			lines := strings.Split(string(data), "\n")
			if len(lines) > 120 {
				lines = lines[len(lines)-120:]
			}
			t.Logf("CCM log %s (last lines):\n%s", logPath, strings.Join(lines, "\n"))
		}
	})
	return cmd, logPath
}

func (e *env) killCCM(cmd *exec.Cmd) {
	if cmd == nil || cmd.Process == nil || cmd.ProcessState != nil {
		return
	}
	_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	ps, _ := cmd.Process.Wait()
	e.meter.Add(ps)
}

// nodeA is the one node most tests need: node-a in ex-west-1a, once the
// controller initialised it.
func (e *env) nodeA() {
	e.t.Helper()
	e.addNode("node-a", "ex-west-1a")
	e.waitNodesInitialised(1)
}

// addNode creates an instance and registers its Node the way a kubelet
// with --cloud-provider=external does: tainted uninitialized, no addresses.
func (e *env) addNode(name, zone string, podCIDRs ...string) *v1.Node {
	e.t.Helper()
	if _, err := e.api.CreateInstance(testkit.Context(e.t), exampleapi.CreateInstanceRequest{Name: name, Type: "standard-2", Zone: zone}); err != nil {
		e.t.Fatal(err)
	}
	n := &v1.Node{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: v1.NodeSpec{
			Taints: []v1.Taint{{Key: "node.cloudprovider.kubernetes.io/uninitialized", Value: "true", Effect: v1.TaintEffectNoSchedule}},
		},
	}
	if len(podCIDRs) == 0 && e.workloads {
		e.podCIDRs++
		podCIDRs = []string{fmt.Sprintf("10.244.%d.0/24", e.podCIDRs)}
	}
	if len(podCIDRs) > 0 {
		n.Spec.PodCIDR, n.Spec.PodCIDRs = podCIDRs[0], podCIDRs
	}
	n, err := e.kube.CoreV1().Nodes().Create(testkit.Context(e.t), n, metav1.CreateOptions{})
	if err != nil {
		e.t.Fatal(err)
	}
	return n
}

func (e *env) instance(name string) *exampleapi.Instance {
	e.t.Helper()
	l, err := e.api.ListInstances(testkit.Context(e.t), exampleapi.InstanceFilter{Name: name})
	if err != nil || len(l) != 1 {
		e.t.Fatalf("instance %s: %v %v", name, l, err)
	}
	return &l[0]
}

// waitGone waits until get finds no object called name: it is deleted,
// its finalizers removed. get is a typed client's Get, such as
// Services(ns).Get.
func waitGone[T any](t testing.TB, timeout time.Duration, name string, get func(context.Context, string, metav1.GetOptions) (T, error)) {
	t.Helper()
	testkit.Eventually(t, timeout, name+" gone", func() error {
		_, err := get(testkit.Context(t), name, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return nil
		}
		return fmt.Errorf("still there: %v", err)
	})
}

func freePort(t testing.TB) string {
	port, err := freeport.One()
	testkit.Must(t, err)
	return fmt.Sprint(port)
}
