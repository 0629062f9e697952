//go:build linux

package runner_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"

	"github.com/example/cloud-provider-example/internal/testcluster"
	"github.com/example/cloud-provider-example/internal/testkit"
	"github.com/example/cloud-provider-example/runner"
	"github.com/example/cloud-provider-example/state"
)

// The kubernetes backend locks a state that does not exist yet (a Lease,
// operation "init") to create it. A terraform killed before the state
// Secret is written leaves that Lease held, and every later run fails to
// load the state: ErrStateLocked while the lock is young, forced open once
// it is older than StaleLockAge. The state is created by terraform init
// in a runner's first workspace, by the plan in one whose initialisation
// was copied.
func TestKubernetesInitLockOfKilledHolderIsForcedOpen(t *testing.T) {
	c := testcluster.Shared(t)
	ns := c.Namespace(t)
	px := startSecretBlockingProxy(t, c, ns)
	backend := state.Config{Type: state.TypeKubernetes, Kubernetes: &state.KubernetesConfig{Namespace: ns, KubeconfigPath: px.kubeconfig}}
	for _, killed := range []string{"init", "plan"} {
		t.Run(killed, func(t *testing.T) {
			e, clk := staleLockEnv(t)
			unlocked := e.forcedOpen()
			job := func(name string) runner.Job {
				// With a client, as the CCM makes them: it opens the Lease.
				b, err := state.New(backend, state.Options{Kube: c.Client})
				testkit.Must(t, err)
				tg, err := b.Location(state.Object{Cluster: "test", Kind: "service", Namespace: "default", Name: name})
				testkit.Must(t, err)
				j := e.job(t, tg.Key, lbModule{name: name, block: toBlock(tg.Block)})
				j.Env, j.CLIWorkspace, j.DeleteState, j.Unlock = tg.Env, tg.CLIWorkspace, tg.Delete, tg.Unlock
				return j
			}
			if killed == "plan" {
				// Another object first: the killed one's init is a copy.
				e.ensure(t, job("other-"+killed))
			}
			name := "killed-" + killed
			j := job(name)
			killHolder(t, c, px, e, j, killed)
			holder := leaseHolder(t, c, ns, j.Key)
			if holder == "" {
				t.Fatal("Lease released after the kill: no crashed holder")
			}
			if _, err := c.Client.CoreV1().Secrets(ns).Get(testkit.Context(t), "tfstate-default-"+j.Key, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
				t.Fatalf("state Secret after the kill: %v, want none", err)
			}

			_, err := e.r.Ensure(testkit.Context(t), j, runner.EnsureOptions{})
			if !errors.Is(err, runner.ErrStateLocked) {
				t.Fatalf("young lock: want ErrStateLocked, got %v", err)
			}
			if id, _, _, ok := runner.HeldLock(err); !ok || id != holder {
				t.Fatalf("HeldLock = %q %v, want %s", id, ok, holder)
			}
			if len(unlocked()) != 0 || len(e.lbs(t, name)) != 0 {
				t.Fatal("a young lock was forced open or the cloud changed")
			}
			// The lock ages past StaleLockAge on the runner's clock.
			clk.SetTime(clk.Now().Add(2*time.Second + time.Millisecond))
			if _, err := e.r.Ensure(testkit.Context(t), j, runner.EnsureOptions{}); err != nil {
				t.Fatalf("stale lock: %v", err)
			}
			if !slices.Equal(unlocked(), []string{holder}) || len(e.lbs(t, name)) != 1 {
				t.Fatalf("force-unlocked %v (want [%s]), LBs %d", unlocked(), holder, len(e.lbs(t, name)))
			}
			if h := leaseHolder(t, c, ns, j.Key); h != "" {
				t.Fatalf("Lease still held by %s after the apply", h)
			}
		})
	}
}

// killHolder runs job while the proxy holds back the creation of its
// state Secret, and SIGKILLs its terraform once that holds the state's
// Lease: as a crash or an OOM kill would.
func killHolder(t *testing.T, c *testcluster.Cluster, px *secretBlockingProxy, e *env, job runner.Job, op string) {
	t.Helper()
	px.block.Store(true)
	defer px.block.Store(false)
	ctx, cancel := context.WithCancel(testkit.Context(t))
	defer cancel()
	done := make(chan error, 1)
	go func() {
		_, err := e.r.Ensure(ctx, job, runner.EnsureOptions{})
		done <- err
	}()
	blocked := px.blocked.Load()
	testkit.Eventually(t, 20*time.Second, "terraform holding the Lease while creating the state Secret", func() error {
		if px.blocked.Load() == blocked {
			return errors.New("no state Secret being created")
		}
		if leaseHolder(t, c, px.ns, job.Key) == "" {
			return errors.New("Lease not held")
		}
		return nil
	})
	// Cancelling only interrupts terraform (SIGINT), which then waits for
	// its held-back request (terraform-exec kills it 60s later).
	killTerraform(t, e.r.TerraformPath(), filepath.Join(e.r.WorkDir(), job.Key))
	cancel()
	select {
	case err := <-done:
		// The state is created by init or by plan, as the case says.
		if err == nil || !strings.Contains(err.Error(), "terraform "+op+" in workspace") {
			t.Fatalf("killed run: %v, want terraform %s to fail", err, op)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("Ensure did not return after its terraform was killed")
	}
}

// leaseHolder is the holderIdentity of the state lock of key, "" if none.
func leaseHolder(t *testing.T, c *testcluster.Cluster, ns, key string) string {
	t.Helper()
	l, err := c.Client.CoordinationV1().Leases(ns).Get(testkit.Context(t), "lock-tfstate-default-"+key, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return ""
	}
	testkit.Must(t, err)
	if l.Spec.HolderIdentity == nil {
		return ""
	}
	return *l.Spec.HolderIdentity
}

// secretBlockingProxy is a plain-http proxy to a cluster's apiserver,
// with the admin's credentials, that holds back the creation of Secrets
// in its namespace while block is on.
type secretBlockingProxy struct {
	kubeconfig string // for terraform: the proxy, no credentials
	ns         string
	block      atomic.Bool
	blocked    atomic.Int64 // requests held back so far
}

func startSecretBlockingProxy(t *testing.T, c *testcluster.Cluster, ns string) *secretBlockingProxy {
	t.Helper()
	target, err := url.Parse(c.URL)
	testkit.Must(t, err)
	rt, err := rest.TransportFor(c.Admin)
	testkit.Must(t, err)
	rp := &httputil.ReverseProxy{Rewrite: func(r *httputil.ProxyRequest) { r.SetURL(target) }, Transport: rt}
	px := &secretBlockingProxy{ns: ns}
	release := make(chan struct{})
	secrets := "/api/v1/namespaces/" + ns + "/secrets"
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if px.block.Load() && r.Method == http.MethodPost && r.URL.Path == secrets {
			px.blocked.Add(1)
			// Until terraform is gone, or the test ends without killing it.
			select {
			case <-r.Context().Done():
			case <-release:
			}
			http.Error(w, "held back by the test", http.StatusServiceUnavailable)
			return
		}
		rp.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	// Before srv.Close (cleanups run last first): a run left hanging on a
	// failed test gets its answer and ends.
	t.Cleanup(func() { close(release) })
	cfg := clientcmdapi.NewConfig()
	cfg.Clusters["proxy"] = &clientcmdapi.Cluster{Server: srv.URL}
	cfg.AuthInfos["proxy"] = &clientcmdapi.AuthInfo{}
	cfg.Contexts["proxy"] = &clientcmdapi.Context{Cluster: "proxy", AuthInfo: "proxy"}
	cfg.CurrentContext = "proxy"
	px.kubeconfig = filepath.Join(t.TempDir(), "proxy.kubeconfig")
	testkit.Must(t, clientcmd.WriteToFile(*cfg, px.kubeconfig))
	return px
}

// killTerraform SIGKILLs the one terraform process this test process
// started in dir, found in /proc (its binary, parent and working dir).
func killTerraform(t *testing.T, bin, dir string) {
	t.Helper()
	bin, err := filepath.EvalSymlinks(bin)
	testkit.Must(t, err)
	dir, err = filepath.EvalSymlinks(dir)
	testkit.Must(t, err)
	ents, err := os.ReadDir("/proc")
	testkit.Must(t, err)
	var pids []int
	for _, d := range ents {
		pid, err := strconv.Atoi(d.Name())
		if err != nil {
			continue
		}
		exe, _ := os.Readlink(fmt.Sprintf("/proc/%d/exe", pid))
		cwd, _ := os.Readlink(fmt.Sprintf("/proc/%d/cwd", pid))
		stat, _ := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
		// stat: "pid (comm) state ppid ...", comm may hold spaces.
		fields := strings.Fields(string(stat[strings.LastIndexByte(string(stat), ')')+1:]))
		if exe == bin && cwd == dir && len(fields) > 1 && fields[1] == strconv.Itoa(os.Getpid()) {
			pids = append(pids, pid)
		}
	}
	if len(pids) != 1 {
		t.Fatalf("terraform processes in %s: %v, want one", dir, pids)
	}
	testkit.Must(t, syscall.Kill(pids[0], syscall.SIGKILL))
}
