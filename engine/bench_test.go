package engine_test

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/hashicorp/terraform-exec/tfexec"
	"github.com/zclconf/go-cty/cty"
	corev1 "k8s.io/api/core/v1"

	"github.com/example/cloud-provider-example/annotations"
	"github.com/example/cloud-provider-example/engine"
	"github.com/example/cloud-provider-example/exampleapi"
	"github.com/example/cloud-provider-example/internal/testkit"
	"github.com/example/cloud-provider-example/internal/tftest"
	"github.com/example/cloud-provider-example/modules"
	"github.com/example/cloud-provider-example/policy"
	"github.com/example/cloud-provider-example/renderer"
	"github.com/example/cloud-provider-example/runner"
	"github.com/example/cloud-provider-example/simulator/simtest"
	"github.com/example/cloud-provider-example/state"
)

// cpuTime is this process's and its waited-for children's (terraform and
// the provider plugins it starts) user+system CPU.
func cpuTime() time.Duration {
	var self, kids syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &self)
	_ = syscall.Getrusage(syscall.RUSAGE_CHILDREN, &kids)
	tv := func(t syscall.Timeval) time.Duration { return time.Duration(t.Nano()) }
	return tv(self.Utime) + tv(self.Stime) + tv(kids.Utime) + tv(kids.Stime)
}

// measure runs op b.N times and reports median wall, CPU and terraform
// processes per op (the targets: create ≤ 0.8 s median, no-op ≤ 1 ms with
// 0 processes).
func measure(b *testing.B, f *fixture, op func(i int)) {
	measureFigures(b, func() int64 { return f.procs.Total(b) }, op)
}

func BenchmarkLoadBalancer(b *testing.B) {
	f := newFixtureWith(b, 4, engine.Options{})
	nodes := []*corev1.Node{f.node(b, "n1"), f.node(b, "n2")}
	b.Run("create", func(b *testing.B) {
		measure(b, f, func(i int) {
			_, _, err := f.eng.ReconcileLoadBalancer(testkit.Context(b), annotations.Read(service(fmt.Sprintf("create-%d-%d", b.N, i), 80)), nodes, auto)
			testkit.Must(b, err)
		})
	})
	svc := service("steady", 80)
	_, _, err := f.eng.ReconcileLoadBalancer(testkit.Context(b), annotations.Read(svc), nodes, auto)
	testkit.Must(b, err)
	port := int32(1000)
	b.Run("update", func(b *testing.B) {
		measure(b, f, func(int) {
			port++ // every op a real change, across benchmark rounds too
			svc.Spec.Ports[0].Port = port
			_, _, err := f.eng.ReconcileLoadBalancer(testkit.Context(b), annotations.Read(svc), nodes, auto)
			testkit.Must(b, err)
		})
	})
	b.Run("noop-fastpath", func(b *testing.B) {
		measure(b, f, func(int) {
			_, out, err := f.eng.ReconcileLoadBalancer(testkit.Context(b), annotations.Read(svc), nodes, auto)
			testkit.Must(b, err)
			if !out.Result.FastPath {
				b.Fatal("no fast path")
			}
		})
	})
	b.Run("destroy", func(b *testing.B) {
		svcs := make([]*corev1.Service, b.N)
		for i := range svcs {
			svcs[i] = service(fmt.Sprintf("destroy-%d-%d", b.N, i), 80)
			_, _, err := f.eng.ReconcileLoadBalancer(testkit.Context(b), annotations.Read(svcs[i]), nodes, auto)
			testkit.Must(b, err)
		}
		measure(b, f, func(i int) {
			_, err := f.eng.RemoveLoadBalancer(testkit.Context(b), annotations.Read(svcs[i]), auto)
			testkit.Must(b, err)
		})
	})
}

// Twenty Services created at once, at runner concurrency 1, 2 and 4.
func BenchmarkTwentyServices(b *testing.B) {
	for _, c := range []int{1, 2, 4} {
		b.Run(fmt.Sprintf("concurrency-%d", c), func(b *testing.B) {
			f := newFixtureWith(b, c, engine.Options{})
			nodes := []*corev1.Node{f.node(b, "n1")}
			measure(b, f, func(i int) {
				var wg sync.WaitGroup
				for s := range 20 {
					wg.Go(func() {
						if _, _, err := f.eng.ReconcileLoadBalancer(testkit.Context(b), annotations.Read(service(fmt.Sprintf("s%d-%d-%d", b.N, i, s), 80)), nodes, auto); err != nil {
							b.Error(err)
						}
					})
				}
				wg.Wait()
			})
		})
	}
}

// The per-change cost of policy rules: none, the defaults (actions only,
// from the plan stream) and a rule that reads attribute values (one
// terraform show -json per plan). Compare tf-procs/op: the first two must
// be equal.
func BenchmarkPolicy(b *testing.B) {
	defaults, err := policy.Compile(policy.Defaults)
	if err != nil {
		b.Fatal(err)
	}
	values, err := policy.Compile([]policy.Rule{{Name: "no-large", Effect: policy.Deny, Message: "m",
		When: `values.exists(a, has(values[a].after.type) && values[a].after.type == "lb-large")`}})
	if err != nil {
		b.Fatal(err)
	}
	for _, c := range []struct {
		name  string
		rules *policy.Rules
	}{{"no-rules", nil}, {"default-rules", defaults}, {"values-rule", values}} {
		f := newFixtureWith(b, 4, engine.Options{Rules: c.rules})
		nodes := []*corev1.Node{f.node(b, "n1")}
		b.Run(c.name+"/create", func(b *testing.B) {
			measure(b, f, func(i int) {
				if _, _, err := f.eng.ReconcileLoadBalancer(testkit.Context(b), annotations.Read(service(fmt.Sprintf("c-%d-%d", b.N, i), 80)), nodes, auto); err != nil {
					b.Fatal(err)
				}
			})
		})
		svc := service("steady", 80)
		if _, _, err := f.eng.ReconcileLoadBalancer(testkit.Context(b), annotations.Read(svc), nodes, auto); err != nil {
			b.Fatal(err)
		}
		port := int32(2000)
		b.Run(c.name+"/update", func(b *testing.B) {
			measure(b, f, func(int) {
				port++
				svc.Spec.Ports[0].Port = port
				if _, _, err := f.eng.ReconcileLoadBalancer(testkit.Context(b), annotations.Read(svc), nodes, auto); err != nil {
					b.Fatal(err)
				}
			})
		})
	}
}

// figures are one operation's per-change cost, for the side-by-side table.
type figures struct {
	wall  time.Duration // median
	cpu   time.Duration // per op: this process (in-process provider, simulator) and its children
	procs float64       // terraform processes per op
}

// measureFigures is measure, also returning the figures; procs counts the
// terraform processes started so far.
func measureFigures(b *testing.B, procs func() int64, op func(i int)) figures {
	walls := make([]time.Duration, 0, b.N)
	cpu0, procs0 := cpuTime(), procs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		start := time.Now()
		op(i)
		walls = append(walls, time.Since(start))
	}
	b.StopTimer()
	slices.Sort(walls)
	f := figures{wall: walls[len(walls)/2], cpu: (cpuTime() - cpu0) / time.Duration(b.N), procs: float64(procs()-procs0) / float64(b.N)}
	b.ReportMetric(f.wall.Seconds(), "wall-s/op(median)")
	b.ReportMetric(f.cpu.Seconds(), "cpu-s/op")
	b.ReportMetric(f.procs, "tf-procs/op")
	return f
}

// benchFixture is newFixtureWith at concurrency 4 with set's changes to
// the runner's configuration, without provisioning delay (the figures are
// terraform's and the controller's).
func benchFixture(b *testing.B, set func(*runner.Config)) *fixture {
	b.Helper()
	sim := simtest.Start(b, simtest.WithProvisionDelay(0))
	f := &fixture{sim: sim, stateDir: filepath.Join(b.TempDir(), "states")}
	api, err := exampleapi.New(exampleapi.Options{Endpoint: sim.URL, Token: sim.Token})
	if err != nil {
		b.Fatal(err)
	}
	f.api = api
	tc := tftest.Get(b)
	f.procs = tftest.CountProcesses(b, tc.Terraform)
	cfg := runner.Config{
		Terraform:     runner.BinaryConfig{Path: f.procs.Wrapper},
		WorkDir:       filepath.Join(b.TempDir(), "work"),
		CLIConfigFile: tc.CLIConfig,
		LockFile:      tc.LockFile,
		Concurrency:   4,
		Env:           map[string]string{"EXAMPLE_TOKEN": sim.Token},
	}
	set(&cfg)
	r := startRunner(b, cfg)
	states, err := state.New(state.Config{Type: state.TypeLocal, Local: &state.LocalConfig{Dir: f.stateDir}}, state.Options{})
	if err != nil {
		b.Fatal(err)
	}
	f.eng = engine.New(renderer.Config{ClusterID: "test", Region: region, Endpoint: sim.URL, NetworkName: "default"}, states, r, engine.Options{})
	return f
}

// BenchmarkProviderModes: the per-change cost of a Service (create,
// update, no-op, destroy) with the provider attached (served in-process)
// and spawned (started by terraform), and beside them a naive cycle on the
// same module in a fresh directory: init, plan, apply, show, output. The
// figures are printed side by side at the end.
func BenchmarkProviderModes(b *testing.B) {
	ops := []string{"create", "update", "noop", "destroy"}
	modes := []runner.ProviderMode{runner.ProviderAttached, runner.ProviderSpawned}
	got := map[string]figures{}
	for _, mode := range modes {
		f := benchFixture(b, func(c *runner.Config) { c.Provider = mode })
		nodes := []*corev1.Node{f.node(b, "n1"), f.node(b, "n2")}
		procs := func() int64 { return f.procs.Total(b) }
		reconcile := func(b *testing.B, svc *corev1.Service) *engine.Outcome {
			_, out, err := f.eng.ReconcileLoadBalancer(testkit.Context(b), annotations.Read(svc), nodes, auto)
			if err != nil {
				b.Fatal(err)
			}
			return out
		}
		// A first object, so every create below is a new workspace like
		// those of a running controller (its initialisation copied).
		reconcile(b, service("warm-up", 80))
		svc := service("steady", 80)
		reconcile(b, svc)
		port := int32(1000)
		run := map[string]func(b *testing.B) figures{
			"create": func(b *testing.B) figures {
				return measureFigures(b, procs, func(i int) { reconcile(b, service(fmt.Sprintf("create-%d-%d", b.N, i), 80)) })
			},
			"update": func(b *testing.B) figures {
				return measureFigures(b, procs, func(int) {
					port++ // every op a real change, across benchmark rounds too
					svc.Spec.Ports[0].Port = port
					reconcile(b, svc)
				})
			},
			"noop": func(b *testing.B) figures {
				return measureFigures(b, procs, func(int) {
					if !reconcile(b, svc).Result.FastPath {
						b.Fatal("no fast path")
					}
				})
			},
			"destroy": func(b *testing.B) figures {
				svcs := make([]*corev1.Service, b.N)
				for i := range svcs {
					svcs[i] = service(fmt.Sprintf("destroy-%d-%d", b.N, i), 80)
					reconcile(b, svcs[i])
				}
				return measureFigures(b, procs, func(i int) {
					if _, err := f.eng.RemoveLoadBalancer(testkit.Context(b), annotations.Read(svcs[i]), auto); err != nil {
						b.Fatal(err)
					}
				})
			},
		}
		for _, op := range ops {
			b.Run(string(mode)+"/"+op, func(b *testing.B) { got[string(mode)+"/"+op] = run[op](b) })
		}
	}
	b.Run("naive/create", func(b *testing.B) { got["naive/create"] = naiveCycle(b) })

	fmt.Printf("\nper change (median wall, CPU per op, terraform processes per op; provisioning delay 0)\n")
	fmt.Printf("%-8s  %-26s  %-26s  %s\n", "", "attached", "spawned", "naive: version+init+plan+apply+show+output")
	cell := func(k string) string {
		f, ok := got[k]
		if !ok {
			return ""
		}
		return fmt.Sprintf("%6.3fs %6.3fs cpu %4.1f tf", f.wall.Seconds(), f.cpu.Seconds(), f.procs)
	}
	for _, op := range ops {
		fmt.Printf("%-8s  %-26s  %-26s  %s\n", op, cell("attached/"+op), cell("spawned/"+op), cell("naive/"+op))
	}
	if n, a := got["naive/create"], got["attached/create"]; a.wall > 0 {
		fmt.Printf("naive create / attached create: wall %.1fx, CPU %.1fx\n", n.wall.Seconds()/a.wall.Seconds(), n.cpu.Seconds()/a.cpu.Seconds())
	}
}

// naiveCycle creates the engine's load balancer module the way a script
// would: a fresh directory, the provider from the mirror, and five
// terraform processes (init, plan -out, apply, show, output), with the
// runner's plugin settings (no TLS between terraform and the provider).
func naiveCycle(b *testing.B) figures {
	sim := simtest.Start(b, simtest.WithProvisionDelay(0))
	tc := tftest.Get(b)
	api, err := exampleapi.New(exampleapi.Options{Endpoint: sim.URL, Token: sim.Token})
	if err != nil {
		b.Fatal(err)
	}
	f := &fixture{sim: sim, api: api}
	nodes := []*corev1.Node{f.node(b, "n1"), f.node(b, "n2")}
	lock, err := os.ReadFile(tc.LockFile)
	if err != nil {
		b.Fatal(err)
	}
	// Counted from the OS: terraform-exec checks the version of each new
	// handle too (a process before the five commands).
	counter := tftest.CountProcesses(b, tc.Terraform)
	tc.Terraform = counter.Wrapper
	states := b.TempDir()
	return measureFigures(b, func() int64 { return counter.Total(b) }, func(i int) {
		dir := b.TempDir()
		cfg := renderer.Config{ClusterID: "test", Region: region, Endpoint: sim.URL, NetworkName: "default",
			Backend: renderer.Backend{Type: "local", Attrs: []renderer.Attr{{Name: "path", Value: cty.StringVal(filepath.Join(states, fmt.Sprintf("%d-%d.tfstate", b.N, i)))}}}}
		m, err := renderer.LoadBalancer(annotations.Read(service(fmt.Sprintf("naive-%d-%d", b.N, i), 80)), nodes, cfg)
		if err != nil {
			b.Fatal(err)
		}
		for name, data := range m.Files {
			if err := os.WriteFile(filepath.Join(dir, name), data, 0o644); err != nil {
				b.Fatal(err)
			}
		}
		if _, err := modules.WriteTo(filepath.Join(dir, "modules")); err != nil {
			b.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, ".terraform.lock.hcl"), lock, 0o644); err != nil {
			b.Fatal(err)
		}
		tf := tc.Exec(b, dir)
		if err := tf.SetEnv(tc.Env(map[string]string{"EXAMPLE_TOKEN": sim.Token})); err != nil {
			b.Fatal(err)
		}
		ctx := testkit.Context(b)
		plan := filepath.Join(dir, "plan.tfplan")
		steps := []func() error{
			func() error { return tf.Init(ctx) },
			func() error { _, err := tf.Plan(ctx, tfexec.Out(plan)); return err },
			func() error { return tf.Apply(ctx, tfexec.DirOrPlan(plan)) },
			func() error { _, err := tf.Show(ctx); return err },
			func() error { _, err := tf.Output(ctx); return err },
		}
		for _, step := range steps {
			if err := step(); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// BenchmarkProcessGC: the CPU of a Service's create and update with
// terraform's garbage collector as shipped (off until the process's
// memory limit, internal/tfgc) and as Go's default (collecting as it
// goes), side by side; processes counted from the OS. (Resident memory:
// 11 MiB more per plan, measured with /usr/bin/time on 2026-12-02.)
func BenchmarkProcessGC(b *testing.B) {
	modes := []struct {
		name  string
		limit int64
	}{{"shipped", 0}, {"go-default", -1}}
	got := map[string]figures{}
	for _, m := range modes {
		f := benchFixture(b, func(c *runner.Config) { c.ProcessMemoryLimit = m.limit })
		nodes := []*corev1.Node{f.node(b, "n1")}
		reconcile := func(b *testing.B, svc *corev1.Service) {
			if _, _, err := f.eng.ReconcileLoadBalancer(testkit.Context(b), annotations.Read(svc), nodes, auto); err != nil {
				b.Fatal(err)
			}
		}
		reconcile(b, service("warm-up", 80))
		svc := service("steady", 80)
		reconcile(b, svc)
		port := int32(1000)
		b.Run(m.name+"/create", func(b *testing.B) {
			got[m.name+"/create"] = measureFigures(b, func() int64 { return f.procs.Total(b) }, func(i int) {
				reconcile(b, service(fmt.Sprintf("create-%d-%d", b.N, i), 80))
			})
		})
		b.Run(m.name+"/update", func(b *testing.B) {
			got[m.name+"/update"] = measureFigures(b, func() int64 { return f.procs.Total(b) }, func(int) {
				port++
				svc.Spec.Ports[0].Port = port
				reconcile(b, svc)
			})
		})
	}
	fmt.Printf("\nper change, CPU (the controller's and its terraform processes') and median wall\n")
	fmt.Printf("%-8s  %-22s  %-22s  %s\n", "", "shipped", "go-default", "CPU shipped/go-default")
	for _, op := range []string{"create", "update"} {
		s, g := got["shipped/"+op], got["go-default/"+op]
		ratio := 0.0
		if g.cpu > 0 {
			ratio = s.cpu.Seconds() / g.cpu.Seconds()
		}
		fmt.Printf("%-8s  cpu %6.3fs wall %6.3fs  cpu %6.3fs wall %6.3fs  %.2f\n", op, s.cpu.Seconds(), s.wall.Seconds(), g.cpu.Seconds(), g.wall.Seconds(), ratio)
	}
}
