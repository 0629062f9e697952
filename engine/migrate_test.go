package engine_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/example/cloud-provider-example/annotations"
	"github.com/example/cloud-provider-example/engine"
	"github.com/example/cloud-provider-example/exampleapi"
	"github.com/example/cloud-provider-example/internal/testcluster"
	"github.com/example/cloud-provider-example/internal/testhttpbackend"
	"github.com/example/cloud-provider-example/internal/testkit"
	"github.com/example/cloud-provider-example/internal/testpg"
	"github.com/example/cloud-provider-example/internal/tests3"
	"github.com/example/cloud-provider-example/internal/tftest"
	"github.com/example/cloud-provider-example/modules"
	"github.com/example/cloud-provider-example/renderer"
	"github.com/example/cloud-provider-example/runner"
	"github.com/example/cloud-provider-example/simulator/simtest"
	"github.com/example/cloud-provider-example/state"
)

// migration is an engine on one backend, and what a test needs to make a
// state under a legacy key the way the previous release did.
type migration struct {
	sim    *simtest.Sim
	api    *exampleapi.Client
	eng    *engine.Engine
	r      *runner.Runner
	states *state.Backends
	render renderer.Config
}

func newMigration(t *testing.T, cfg state.Config, kube kubernetes.Interface) *migration {
	t.Helper()
	tc := tftest.Get(t)
	sim := simtest.Start(t)
	r := startRunner(t, runner.Config{
		Terraform:     runner.BinaryConfig{Path: tc.Terraform},
		WorkDir:       filepath.Join(t.TempDir(), "work"),
		CLIConfigFile: tc.CLIConfig,
		LockFile:      tc.LockFile,
		Concurrency:   2,
		Env:           map[string]string{"EXAMPLE_TOKEN": sim.Token},
	})
	states, err := state.New(cfg, state.Options{Kube: kube})
	if err != nil {
		t.Fatal(err)
	}
	api, err := exampleapi.New(exampleapi.Options{Endpoint: sim.URL, Token: sim.Token})
	if err != nil {
		t.Fatal(err)
	}
	render := renderer.Config{ClusterID: "test", Region: region, Endpoint: sim.URL, NetworkName: "default", ModulesDigest: modules.Digest()}
	return &migration{sim: sim, api: api, eng: engine.New(render, states, r, engine.Options{}), r: r, states: states, render: render}
}

// legacyApply applies svc under its legacy key, as the previous release
// did: same module, the backend block of state.LegacyLocation.
func (m *migration) legacyApply(t *testing.T, svc *corev1.Service, nodes []*corev1.Node) (*state.Location, runner.Job) {
	t.Helper()
	legacy, err := m.states.LegacyLocation(object(svc))
	if err != nil {
		t.Fatal(err)
	}
	cfg := m.render
	cfg.Backend = engine.BackendBlock(legacy.Block)
	mod, err := renderer.LoadBalancer(annotations.Read(svc), nodes, cfg)
	if err != nil {
		t.Fatal(err)
	}
	job := runner.Job{
		Key: legacy.Key, Files: mod.Files, Hash: mod.Hash, Env: legacy.Env, CLIWorkspace: legacy.CLIWorkspace, DeleteState: legacy.Delete,
		Prepare: func(dir string) error { _, err := modules.WriteTo(filepath.Join(dir, "modules")); return err },
	}
	// The previous release's process: its own runner on the same work
	// directory.
	tc := tftest.Get(t)
	old := startRunner(t, runner.Config{
		Terraform: runner.BinaryConfig{Path: tc.Terraform}, WorkDir: m.r.WorkDir(), CLIConfigFile: tc.CLIConfig, LockFile: tc.LockFile,
		Env: map[string]string{"EXAMPLE_TOKEN": m.sim.Token},
	})
	res, err := old.Ensure(testkit.Context(t), job, runner.EnsureOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if res.Output("id") == "" {
		t.Fatal("legacy apply made no load balancer")
	}
	return legacy, job
}

func object(svc *corev1.Service) state.Object {
	return state.Object{Cluster: "test", Kind: "service", Namespace: svc.Namespace, Name: svc.Name}
}

func exists(t *testing.T, tg *state.Location) bool {
	t.Helper()
	ok, err := tg.Exists(testkit.Context(t))
	if err != nil {
		t.Fatal(err)
	}
	return ok
}

func (m *migration) lbs(t *testing.T) int {
	l, err := m.api.ListLoadBalancers(testkit.Context(t), exampleapi.LoadBalancerFilter{})
	if err != nil {
		t.Fatal(err)
	}
	return len(l)
}

func (m *migration) node(t *testing.T) *corev1.Node {
	f := &fixture{api: m.api}
	return f.node(t, "node-a")
}

// legacyKubernetesName finds a Service name whose legacy key the
// kubernetes backend accepted (not ending in -<digits>, at most 63).
func legacyKubernetesName(t *testing.T, b *state.Backends) string {
	bad := regexp.MustCompile(`-[0-9]+$`)
	for i := range 100 {
		name := fmt.Sprintf("web-%d", i)
		k, _ := b.LegacyKey(state.Object{Cluster: "test", Kind: "service", Namespace: "default", Name: name})
		if !bad.MatchString(k) && len(k) <= 63 {
			return name
		}
	}
	t.Fatal("no usable legacy name")
	return ""
}

// backends are the tested backends, each started for one test (the
// kubernetes one: a namespace of the shared control plane).
func backends() map[string]func(t *testing.T) (state.Config, kubernetes.Interface) {
	return map[string]func(t *testing.T) (state.Config, kubernetes.Interface){
		"local": func(t *testing.T) (state.Config, kubernetes.Interface) {
			return state.Config{Type: state.TypeLocal, Local: &state.LocalConfig{Dir: filepath.Join(t.TempDir(), "states")}}, nil
		},
		"kubernetes": func(t *testing.T) (state.Config, kubernetes.Interface) {
			c := testcluster.Shared(t)
			return state.Config{Type: state.TypeKubernetes, Kubernetes: &state.KubernetesConfig{Namespace: c.Namespace(t), KubeconfigPath: c.AdminKubeconfig}}, c.Client
		},
		"pg": func(t *testing.T) (state.Config, kubernetes.Interface) {
			srv := testpg.Start(t, testpg.WithPassword(`mig"ra\te @:/%`))
			t.Setenv("CCM_TEST_PG", srv.ConnStr)
			return state.Config{Type: state.TypePG, PG: &state.PGConfig{ConnStrEnv: "CCM_TEST_PG", SchemaName: "ccm"}}, nil
		},
		"http": func(t *testing.T) (state.Config, kubernetes.Interface) {
			srv := testhttpbackend.Start(t, testhttpbackend.WithBasicAuth("ccm", "migrate-pw"))
			dir := t.TempDir()
			testkit.Must(t, os.WriteFile(filepath.Join(dir, "user"), []byte("ccm"), 0o600))
			testkit.Must(t, os.WriteFile(filepath.Join(dir, "pass"), []byte("migrate-pw"), 0o600))
			return state.Config{Type: state.TypeHTTP, HTTP: &state.HTTPConfig{Address: srv.URL + "/states", UsernameFile: filepath.Join(dir, "user"), PasswordFile: filepath.Join(dir, "pass")}}, nil
		},
		"s3": func(t *testing.T) (state.Config, kubernetes.Interface) {
			srv := tests3.Start(t, tests3.WithCredentials("ccm-migrate", `mig"ra/te+s3 %41`))
			srv.CreateBucket("states")
			t.Setenv("AWS_ACCESS_KEY_ID", srv.AccessKey)
			t.Setenv("AWS_SECRET_ACCESS_KEY", srv.SecretKey)
			return state.Config{Type: state.TypeS3, S3: &state.S3Config{Bucket: "states", Region: srv.Region, KeyPrefix: "ccm", Endpoint: srv.Endpoint, UsePathStyle: true}}, nil
		},
	}
}

// A state made under the legacy key is moved on every tested backend:
// afterwards a plan under the new key changes nothing, the legacy state
// is gone, and a second migration, like one for an object that never had
// a legacy state, costs no terraform process.
func TestMigrateState(t *testing.T) {
	for name, setup := range backends() {
		t.Run(name, func(t *testing.T) {
			cfg, kube := setup(t)
			m := newMigration(t, cfg, kube)
			nodes := []*corev1.Node{m.node(t)}
			svc := service(legacyKubernetesName(t, m.states), 80)
			legacy, _ := m.legacyApply(t, svc, nodes)
			if !exists(t, legacy) || m.lbs(t) != 1 {
				t.Fatal("no legacy state or load balancer to migrate")
			}
			_, to, err := m.eng.RenderLoadBalancer(annotations.Read(svc), nodes, nil)
			if err != nil {
				t.Fatal(err)
			}
			current, _ := m.states.Location(object(svc))
			if exists(t, current) {
				t.Fatal("a state under the new key before migrating")
			}

			moved, err := m.eng.MigrateState(testkit.Context(t), object(svc), to)
			if err != nil || !moved {
				t.Fatalf("migrate: moved=%v err=%v", moved, err)
			}
			if exists(t, legacy) || !exists(t, current) {
				t.Fatalf("after migrating: legacy exists %v, new exists %v", exists(t, legacy), exists(t, current))
			}
			if _, err := os.Stat(filepath.Join(m.r.WorkDir(), legacy.Key)); !os.IsNotExist(err) {
				t.Errorf("legacy workspace directory left: %v", err)
			}
			p, err := m.r.Plan(testkit.Context(t), to, runner.PlanOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if p.HasChanges || m.lbs(t) != 1 {
				t.Fatalf("plan under the new key: changes %v (%s), %d load balancers", p.HasChanges, p.Summary, m.lbs(t))
			}

			procs := total(m.r.Processes())
			if moved, err := m.eng.MigrateState(testkit.Context(t), object(svc), to); err != nil || moved {
				t.Fatalf("second migrate: moved=%v err=%v", moved, err)
			}
			other := service("never-applied", 80)
			_, otherJob, _ := m.eng.RenderLoadBalancer(annotations.Read(other), nodes, nil)
			if moved, err := m.eng.MigrateState(testkit.Context(t), object(other), otherJob); err != nil || moved {
				t.Fatalf("migrate without legacy state: moved=%v err=%v", moved, err)
			}
			if n := total(m.r.Processes()); n != procs {
				t.Fatalf("checking for legacy states cost %d terraform processes", n-procs)
			}
		})
	}
}

// A crash between the copy and the deletion of the legacy state leaves
// two copies of one state (same lineage): the next migration sees the copy
// is done, deletes the legacy one and moves nothing twice.
func TestMigrateStateAfterCrash(t *testing.T) {
	all := backends()
	for _, name := range []string{"local", "http", "kubernetes", "s3"} { // pg deletes by workspace delete, not DeleteState
		t.Run(name, func(t *testing.T) {
			cfg, kube := all[name](t)
			m := newMigration(t, cfg, kube)
			nodes := []*corev1.Node{m.node(t)}
			svc := service(legacyKubernetesName(t, m.states), 80)
			legacy, from := m.legacyApply(t, svc, nodes)
			_, to, _ := m.eng.RenderLoadBalancer(annotations.Read(svc), nodes, nil)

			// The "crash": the deletion of the source fails after the copy.
			crash := errors.New("killed")
			from.DeleteState = func(context.Context) error { return crash }
			if _, err := m.r.MoveState(testkit.Context(t), from, to); !errors.Is(err, crash) {
				t.Fatalf("crashing move: %v", err)
			}
			current, _ := m.states.Location(object(svc))
			if !exists(t, legacy) || !exists(t, current) {
				t.Fatal("the crash should leave both copies")
			}

			moved, err := m.eng.MigrateState(testkit.Context(t), object(svc), to)
			if err != nil || !moved {
				t.Fatalf("migrate after crash: moved=%v err=%v", moved, err)
			}
			if exists(t, legacy) {
				t.Fatal("legacy state survived")
			}
			if p, err := m.r.Plan(testkit.Context(t), to, runner.PlanOptions{}); err != nil || p.HasChanges || m.lbs(t) != 1 {
				t.Fatalf("after recovery: %v %+v, %d load balancers", err, p, m.lbs(t))
			}
		})
	}
}

// A new-key state with resources of its own is never overwritten: both
// states stay, the error says so.
func TestMigrateStateConflict(t *testing.T) {
	m := newMigration(t, state.Config{Type: state.TypeLocal, Local: &state.LocalConfig{Dir: filepath.Join(t.TempDir(), "states")}}, nil)
	nodes := []*corev1.Node{m.node(t)}
	svc := service("web", 80)
	legacy, _ := m.legacyApply(t, svc, nodes)
	_, to, _ := m.eng.RenderLoadBalancer(annotations.Read(svc), nodes, nil)
	if _, err := m.r.Ensure(testkit.Context(t), to, runner.EnsureOptions{}); err != nil { // an unmigrated run
		t.Fatal(err)
	}
	_, err := m.eng.MigrateState(testkit.Context(t), object(svc), to)
	if !errors.Is(err, runner.ErrStateConflict) {
		t.Fatalf("want ErrStateConflict, got %v", err)
	}
	current, _ := m.states.Location(object(svc))
	if !exists(t, legacy) || !exists(t, current) {
		t.Fatal("a conflicting state was deleted")
	}
}

// The engine moves an object's state off its legacy key before its first
// run, once per process, and says so: a Service applied by the previous
// release is reconciled without a change, its plan record follows.
func TestReconcileMigratesLegacyState(t *testing.T) {
	cfg := state.Config{Type: state.TypeLocal, Local: &state.LocalConfig{Dir: filepath.Join(t.TempDir(), "states")}}
	m := newMigration(t, cfg, nil)
	var movedFrom, movedTo string
	eng := engine.New(m.render, m.states, m.r, engine.Options{Migrated: func(_ context.Context, from, to string) { movedFrom, movedTo = from, to }})
	nodes := []*corev1.Node{m.node(t)}
	svc := service("upgraded", 80)
	legacy, _ := m.legacyApply(t, svc, nodes)
	lb, out, err := eng.ReconcileLoadBalancer(testkit.Context(t), annotations.Read(svc), nodes, auto)
	if err != nil || lb == nil || (out.Applied != nil && out.Applied.HasChanges) || m.lbs(t) != 1 {
		t.Fatalf("first reconcile after the upgrade: %+v %+v %v, %d LBs", lb, out, err, m.lbs(t))
	}
	if movedFrom != legacy.Key || movedTo != out.Workspace || exists(t, legacy) {
		t.Fatalf("moved %q -> %q (workspace %s); legacy state left: %v", movedFrom, movedTo, out.Workspace, exists(t, legacy))
	}
}

// A Service deleted right after the upgrade: its state moves first, and
// the deletion destroys what it holds (no orphan search mistakes the
// legacy state's load balancer for one).
func TestDeleteMigratesLegacyStateFirst(t *testing.T) {
	cfg := state.Config{Type: state.TypeLocal, Local: &state.LocalConfig{Dir: filepath.Join(t.TempDir(), "states")}}
	m := newMigration(t, cfg, nil)
	finds := 0
	eng := engine.New(m.render, m.states, m.r, engine.Options{FindOrphan: func(context.Context, string, map[string]string) (string, error) {
		finds++
		return "", nil
	}})
	nodes := []*corev1.Node{m.node(t)}
	svc := service("deleted-after-upgrade", 80)
	legacy, _ := m.legacyApply(t, svc, nodes)
	out, err := eng.RemoveLoadBalancer(testkit.Context(t), annotations.Read(svc), auto)
	if err != nil || out.Applied == nil || !out.Applied.Destroy || m.lbs(t) != 0 || exists(t, legacy) {
		t.Fatalf("delete after the upgrade: %+v %v, %d LBs, legacy state left %v", out, err, m.lbs(t), exists(t, legacy))
	}
	if finds != 0 {
		t.Fatal("looked for an orphan although the moved state holds the load balancer")
	}
}
