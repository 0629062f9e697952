package engine_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/example/cloud-provider-example/annotations"
	"github.com/example/cloud-provider-example/engine"
	"github.com/example/cloud-provider-example/exampleapi"
	"github.com/example/cloud-provider-example/internal/testkit"
	"github.com/example/cloud-provider-example/internal/tftest"
	"github.com/example/cloud-provider-example/policy"
	"github.com/example/cloud-provider-example/providerid"
	"github.com/example/cloud-provider-example/renderer"
	"github.com/example/cloud-provider-example/runner"
	"github.com/example/cloud-provider-example/simulator/simtest"
	"github.com/example/cloud-provider-example/state"
)

const region = "ex-west-1"

type fixture struct {
	sim *simtest.Sim
	api *exampleapi.Client
	eng *engine.Engine
	// stateDir holds the local backend's state files.
	stateDir string
	// tc is the toolchain (distribution) every engine of the fixture runs.
	tc tftest.Toolchain
	// procs, when set (benchmarks), counts the engines' terraform
	// processes from the OS: they run its wrapper.
	procs *tftest.ProcessLog
	// configure, when set, adjusts the rendering config of the engines
	// made after it is.
	configure func(*renderer.Config)
	// encryption, when set, is the state encryption (tofu) of the engines
	// made after it is.
	encryption *runner.Encryption
}

func newFixture(tb testing.TB, concurrency int) *fixture {
	return newFixtureWith(tb, concurrency, engine.Options{PlanText: true})
}

// newFixtureWith is newFixture with engine options (rules, plan store).
func newFixtureWith(tb testing.TB, concurrency int, o engine.Options) *fixture {
	tb.Helper()
	return newFixtureOn(tb, tftest.Get(tb), concurrency, o)
}

// newFixtureOn is newFixtureWith on a given toolchain (terraform or tofu).
// Benchmarks count their processes from the OS (fixture.procs).
func newFixtureOn(tb testing.TB, tc tftest.Toolchain, concurrency int, o engine.Options) *fixture {
	tb.Helper()
	sim := simtest.Start(tb)
	f := &fixture{sim: sim, stateDir: filepath.Join(tb.TempDir(), "states"), tc: tc}
	if _, bench := tb.(*testing.B); bench {
		f.procs = tftest.CountProcesses(tb, tc.Terraform)
	}
	api, err := exampleapi.New(exampleapi.Options{Endpoint: sim.URL, Token: sim.Token})
	if err != nil {
		tb.Fatal(err)
	}
	f.api = api
	f.eng = f.engine(tb, concurrency, o)
	return f
}

// engine returns a new engine over the fixture's cloud and states, with a
// work directory of its own: what a restarted controller gets.
func (f *fixture) engine(tb testing.TB, concurrency int, o engine.Options) *engine.Engine {
	tb.Helper()
	tc := f.tc
	sim := f.sim
	dir := tb.TempDir()
	bin := tc.Terraform
	if f.procs != nil {
		bin = f.procs.Wrapper
	}
	r := startRunner(tb, runner.Config{
		Terraform:     runner.BinaryConfig{Distribution: runner.Distribution(tc.Distribution), Path: bin},
		WorkDir:       filepath.Join(dir, "work"),
		CLIConfigFile: tc.CLIConfig,
		LockFile:      tc.LockFile,
		Concurrency:   concurrency,
		Env:           map[string]string{"EXAMPLE_TOKEN": sim.Token},
		Encryption:    f.encryption,
	})
	states, err := state.New(state.Config{Type: state.TypeLocal, Local: &state.LocalConfig{Dir: f.stateDir}}, state.Options{})
	if err != nil {
		tb.Fatal(err)
	}
	cfg := renderer.Config{ClusterID: "test", Region: region, Endpoint: sim.URL, NetworkName: "default"}
	if f.configure != nil {
		f.configure(&cfg)
	}
	return engine.New(cfg, states, r, o)
}

// startRunner is a runner of cfg, closed when tb ends: its in-process
// provider servers' sockets are otherwise left in $TMPDIR.
func startRunner(tb testing.TB, cfg runner.Config) *runner.Runner {
	tb.Helper()
	r, err := runner.New(context.Background(), cfg)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(r.Close)
	return r
}

// auto is the auto policy's review.
var auto = engine.Review{Policy: annotations.ApplyAuto}

// reviewed is a review under policy whose approvals approve exactly the
// plan ids in approved (as verified approvers would).
func reviewed(policy annotations.ApplyPolicy, approved ...string) engine.Review {
	return engine.Review{Policy: policy, Object: policyObject("default", "svc"), Approval: func(p *runner.Plan) engine.Approval {
		if slices.Contains(approved, p.ID) {
			return engine.Approval{Approved: true, Approvers: []string{"alice"}}
		}
		return engine.Approval{}
	}}
}

func policyObject(ns, name string) policy.Object {
	return policy.Object{Kind: "Service", Namespace: ns, Name: name}
}

// memStore is a PlanStore that keeps what a plan record would: the last
// apply and the plan awaiting approval, with its saved file.
type memStore struct {
	mu    sync.Mutex
	kept  map[string]*engine.Kept
	owner map[string]string
	loads int
}

func newMemStore() *memStore {
	return &memStore{kept: map[string]*engine.Kept{}, owner: map[string]string{}}
}

func (m *memStore) Load(_ context.Context, ws, owner string) (*engine.Kept, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.loads++
	if o := m.owner[ws]; o != "" && owner != "" && o != owner {
		return nil, fmt.Errorf("recorded for %s: %w", o, runner.ErrOwnerMismatch)
	}
	return m.kept[ws], nil
}

// keep records an outcome as the controller's review does.
func (m *memStore) keep(tb testing.TB, owner string, out *engine.Outcome) {
	tb.Helper()
	m.mu.Lock()
	defer m.mu.Unlock()
	m.owner[out.Workspace] = owner
	k := m.kept[out.Workspace]
	if k == nil {
		k = &engine.Kept{}
		m.kept[out.Workspace] = k
	}
	if r := out.Result; r != nil && !r.FastPath && r.Plan != nil {
		k.Applied = &engine.LastApply{HCLHash: r.Plan.Hash, Outputs: r.Outputs, At: time.Now()}
	}
	p := out.Awaiting
	if p == nil {
		k.Pending = nil
		return
	}
	data, err := os.ReadFile(p.File)
	if err != nil {
		tb.Fatal(err)
	}
	k.Pending = &engine.StoredPlan{Plan: *p, Verdicts: out.Verdicts, Data: data}
}

// node creates an instance and returns its Node.
func (f *fixture) node(tb testing.TB, name string) *corev1.Node {
	tb.Helper()
	in, err := f.api.CreateInstance(testkit.Context(tb), exampleapi.CreateInstanceRequest{Name: name, Type: "standard-2", Zone: region + "a"})
	if err != nil {
		tb.Fatal(err)
	}
	return &corev1.Node{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec:       corev1.NodeSpec{ProviderID: providerid.Format(region, in.ID)},
	}
}

func service(name string, ports ...int32) *corev1.Service {
	svc := &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default", UID: types.UID("uid-" + name)},
		Spec:       corev1.ServiceSpec{Type: corev1.ServiceTypeLoadBalancer},
	}
	for i, p := range ports {
		svc.Spec.Ports = append(svc.Spec.Ports, corev1.ServicePort{
			Name: fmt.Sprintf("p%d", i), Protocol: corev1.ProtocolTCP, Port: p, NodePort: 30000 + p,
		})
	}
	return svc
}

func instanceID(tb testing.TB, n *corev1.Node) string {
	id, err := providerid.Parse(n.Spec.ProviderID)
	if err != nil {
		tb.Fatal(err)
	}
	return id.InstanceID
}

func awaiting(t *testing.T, err error) string {
	t.Helper()
	var wait *engine.AwaitingApprovalError
	if !errors.As(err, &wait) {
		t.Fatalf("want AwaitingApprovalError, got %v", err)
	}
	return wait.PlanID
}

func (f *fixture) countLBs(t *testing.T) int {
	t.Helper()
	l, err := f.api.ListLoadBalancers(testkit.Context(t), exampleapi.LoadBalancerFilter{})
	if err != nil {
		t.Fatal(err)
	}
	return len(l)
}

// applied reconciles svc on nodes with eng under the auto policy, which
// must apply it, and returns its load balancer.
func applied(t *testing.T, eng *engine.Engine, svc *corev1.Service, nodes []*corev1.Node) *engine.LoadBalancer {
	t.Helper()
	lb, _, err := eng.ReconcileLoadBalancer(testkit.Context(t), annotations.Read(svc), nodes, auto)
	testkit.Must(t, err)
	return lb
}

// planned reconciles svc on nodes with eng under the manual policy: the
// plan made must await approval. It returns the plan's id and the outcome.
func planned(t *testing.T, eng *engine.Engine, svc *corev1.Service, nodes []*corev1.Node) (string, *engine.Outcome) {
	t.Helper()
	_, out, err := eng.ReconcileLoadBalancer(testkit.Context(t), annotations.Read(svc), nodes, reviewed(annotations.ApplyManual))
	return awaiting(t, err), out
}
