// Package testcluster runs a real, throw-away Kubernetes control plane
// (etcd + kube-apiserver, no kubelet, no controller-manager) on loopback for
// tests and the demo; with Options.Workloads also the controller-manager,
// the scheduler and kwok's fake kubelets.
//
// The binaries come from hack/control-plane.sh, which builds them from the Go
// module proxy on first use (~11 min cold) and caches them outside the repo;
// its progress is streamed to the log (a cold build needs a go test -timeout
// above the default 10m; make test gives 25m). Startup then takes 3-4 s on
// an idle 2-core machine, up to ~7 s under load.
//
// The apiserver authenticates an admin with a static token (group
// system:masters), the test's Options.Users with static tokens too (any
// groups) and ServiceAccounts with real signed tokens (TokenRequest API); authorization is Node,RBAC as in a real cluster, so RBAC bound to a
// ServiceAccount applies (ServiceAccountKubeconfig). The Service ClusterIP
// and NodePort allocators run inside the apiserver, so LoadBalancer Services
// get their nodePorts as in a real cluster.
//
// A start costs 3-5 s of CPU (etcd about 0.8, kube-apiserver 3, until
// /readyz; the progress line says each one's), then little while idle.
// Tests that assert nothing of each other's objects share one control
// plane per package (Shared; TestMain calls Main, which stops it), each
// in a namespace of its own (Namespace): runner's and engine's tests of
// the kubernetes state backend (states, their Secrets and Lease locks are
// a namespace's) and shard's (Leases). A test starts its own (Start) when
// it stops its control plane or checks what is cluster-wide: deploy's
// (the chart's ClusterRoles and admission policies, users), this
// package's (users, Stop), webhook's (webhook configurations), and every
// end-to-end test: its controllers watch every Service and Node and own
// fixed names in their namespace (leader election, shard Leases, plan
// records, the chart's RBAC), so two tests on one API server would act
// on each other's objects. Packages with one such test (records,
// reviewpage, gatewaycontroller, cmd/examplectl) start one anyway.
package testcluster

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sync"
	"time"

	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
)

// Options configure Run.
type Options struct {
	// Dir holds the data, certificates, kubeconfigs and process logs
	// (etcd.log, kube-apiserver.log). Empty: a new temp dir, removed by Close.
	Dir string
	// Log receives progress lines; nil discards them.
	Log io.Writer
	// BinDir holds etcd and kube-apiserver. Empty: $EXAMPLE_CONTROL_PLANE_DIR,
	// else the output of hack/control-plane.sh.
	BinDir string
	// APIServerArgs are appended to the kube-apiserver command line
	// (a later --flag wins).
	APIServerArgs []string
	// ReadyTimeout bounds the start of the processes, not the binary build
	// (default 3m).
	ReadyTimeout time.Duration
	// Users are authenticated with static tokens (UserConfig,
	// WriteUserKubeconfig); they have no rights until bound by RBAC.
	Users []User
	// Workloads also runs kube-controller-manager, kube-scheduler and
	// kwok, so that Deployments get Ready pods on fake nodes
	// (startWorkloads); their binaries are built on first use.
	Workloads bool
	// PodReadyAnnotation, with Workloads, makes kwok set a pod Ready only
	// once this annotation of it is "true": a pod runner sets it when the
	// pod's process listens (stages.go). Empty: Ready once it has an IP.
	PodReadyAnnotation string
}

// Cluster is a running control plane.
type Cluster struct {
	// AdminKubeconfig is the path of a kubeconfig for the admin
	// (system:masters), for tools and child processes.
	AdminKubeconfig string
	Admin           *rest.Config
	Client          kubernetes.Interface
	// URL is the apiserver's https://127.0.0.1:port.
	URL string
	// Dir is Options.Dir (or the temp dir made for it).
	Dir string
	// Version is the kube-apiserver's, as /version says (v1.36.5).
	Version string

	caData     []byte
	userTokens map[string]string
	etcdURL    string
	log        io.Writer
	removeDir  bool
	etcd       *process
	apiserver  *process
	workloads  []*process // Options.Workloads
	// podReadyAnnotation is Options.PodReadyAnnotation.
	podReadyAnnotation string
	closeOnce          sync.Once
	closeErr           error
}

// Run starts etcd and kube-apiserver and returns once /readyz is ok. The
// processes outlive ctx (it bounds the start only); Close stops them, and they
// are killed if this process dies (Linux).
func Run(ctx context.Context, o Options) (_ *Cluster, err error) {
	started := time.Now()
	c := &Cluster{Dir: o.Dir, log: o.Log, podReadyAnnotation: o.PodReadyAnnotation}
	if c.log == nil {
		c.log = io.Discard
	}
	if o.ReadyTimeout == 0 {
		// A hang guard: with e2e tests five at a time beside other
		// packages and lint, an API server took over 60 s to be ready.
		o.ReadyTimeout = 3 * time.Minute
	}
	if c.Dir == "" {
		if c.Dir, err = makeTempDir(); err != nil {
			return nil, err
		}
		c.removeDir = true
	} else if err := os.MkdirAll(c.Dir, 0o700); err != nil {
		return nil, err
	}
	if c.Dir, err = filepath.Abs(c.Dir); err != nil {
		return nil, err
	}
	defer func() {
		if err != nil {
			err = errors.Join(err, c.Close())
		}
	}()

	var components []string
	if o.Workloads {
		components = workloadComponents
	}
	binDir, err := findBinaries(ctx, o.BinDir, components, c.log)
	if err != nil {
		return nil, err
	}
	sec, err := writeSecrets(c.Dir, o.Users)
	if err != nil {
		return nil, err
	}
	c.userTokens = sec.userTokens
	ctx, cancel := context.WithTimeout(ctx, o.ReadyTimeout)
	defer cancel()
	if err := c.startEtcd(ctx, binDir); err != nil {
		return nil, err
	}
	if err := c.startAPIServer(ctx, binDir, sec, o.APIServerArgs); err != nil {
		return nil, err
	}
	if o.Workloads {
		if err := c.startWorkloads(ctx, binDir, sec); err != nil {
			return nil, err
		}
	}
	v, err := c.Client.Discovery().ServerVersion()
	if err != nil {
		return nil, fmt.Errorf("kube-apiserver version: %w", err)
	}
	// make test-skew names the API server by $K8S_VERSION: a run against
	// another one (a stale $EXAMPLE_CONTROL_PLANE_DIR) must not pass as it.
	if want := os.Getenv("K8S_VERSION"); want != "" && v.GitVersion != want {
		return nil, fmt.Errorf("kube-apiserver is %s, $K8S_VERSION asks for %s", v.GitVersion, want)
	}
	c.Version = v.GitVersion
	c.progress("control plane %s%s ready at %s in %s, %s of CPU (logs and kubeconfigs in %s)",
		v.GitVersion, workloadsNote(o.Workloads), c.URL, time.Since(started).Round(10*time.Millisecond), c.CPU().Round(10*time.Millisecond), c.Dir)
	return c, nil
}

// CPU is the CPU time (user and system) the cluster's processes used so
// far: what a start costs, read when Run returns (Linux only: 0 elsewhere).
func (c *Cluster) CPU() time.Duration {
	var sum time.Duration
	for _, p := range c.processes() {
		if p != nil {
			sum += p.cpu()
		}
	}
	return sum
}

// Close stops the workloads' processes, kube-apiserver, then etcd, and
// removes Dir if Run made it.
// It is safe to call more than once.
func (c *Cluster) Close() error {
	c.closeOnce.Do(func() {
		var errs []error
		for _, p := range c.processes() {
			if p != nil {
				errs = append(errs, p.stop(3*time.Second))
			}
		}
		if c.removeDir {
			errs = append(errs, os.RemoveAll(c.Dir))
		}
		c.closeErr = errors.Join(errs...)
	})
	return c.closeErr
}

// LogTails returns the last n lines of each process log, for failure reports.
func (c *Cluster) LogTails(n int) string {
	var s string
	for _, p := range c.processes() {
		if p != nil {
			s += fmt.Sprintf("--- last lines of %s ---\n%s", p.logPath, tail(p.logPath, n))
		}
	}
	return s
}

func (c *Cluster) progress(format string, args ...any) {
	fmt.Fprintf(c.log, "testcluster: "+format+"\n", args...)
}

// Reaped are the states of the cluster's processes that have exited (all
// of them once Close returned): with the kernel's count of the CPU each
// used, for a test's meter (internal/testcpu).
func (c *Cluster) Reaped() []*os.ProcessState {
	var out []*os.ProcessState
	for _, p := range c.processes() {
		if p != nil && p.exited() {
			out = append(out, p.cmd.ProcessState)
		}
	}
	return out
}
