package engine_test

import (
	"fmt"
	"sort"
	"sync"
	"syscall"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/example/cloud-provider-example/engine"
	"github.com/example/cloud-provider-example/policy"
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
	walls := make([]time.Duration, 0, b.N)
	cpu0, procs0 := cpuTime(), total(f.eng.Runner().Processes())
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		start := time.Now()
		op(i)
		walls = append(walls, time.Since(start))
	}
	b.StopTimer()
	sort.Slice(walls, func(i, j int) bool { return walls[i] < walls[j] })
	b.ReportMetric(walls[len(walls)/2].Seconds(), "wall-s/op(median)")
	b.ReportMetric((cpuTime()-cpu0).Seconds()/float64(b.N), "cpu-s/op")
	b.ReportMetric(float64(total(f.eng.Runner().Processes())-procs0)/float64(b.N), "tf-procs/op")
}

func BenchmarkLoadBalancer(b *testing.B) {
	f := newFixtureWith(b, 4, engine.Options{})
	nodes := []*corev1.Node{f.node(b, "n1"), f.node(b, "n2")}
	must := func(err error) {
		if err != nil {
			b.Fatal(err)
		}
	}
	b.Run("create", func(b *testing.B) {
		measure(b, f, func(i int) {
			_, _, err := f.eng.ReconcileLoadBalancer(ctxT(b), service(fmt.Sprintf("create-%d-%d", b.N, i), 80), nodes, auto)
			must(err)
		})
	})
	svc := service("steady", 80)
	_, _, err := f.eng.ReconcileLoadBalancer(ctxT(b), svc, nodes, auto)
	must(err)
	port := int32(1000)
	b.Run("update", func(b *testing.B) {
		measure(b, f, func(int) {
			port++ // every op a real change, across benchmark rounds too
			svc.Spec.Ports[0].Port = port
			_, _, err := f.eng.ReconcileLoadBalancer(ctxT(b), svc, nodes, auto)
			must(err)
		})
	})
	b.Run("noop-fastpath", func(b *testing.B) {
		measure(b, f, func(int) {
			_, out, err := f.eng.ReconcileLoadBalancer(ctxT(b), svc, nodes, auto)
			must(err)
			if !out.Result.FastPath {
				b.Fatal("no fast path")
			}
		})
	})
	b.Run("destroy", func(b *testing.B) {
		svcs := make([]*corev1.Service, b.N)
		for i := range svcs {
			svcs[i] = service(fmt.Sprintf("destroy-%d-%d", b.N, i), 80)
			_, _, err := f.eng.ReconcileLoadBalancer(ctxT(b), svcs[i], nodes, auto)
			must(err)
		}
		measure(b, f, func(i int) {
			_, err := f.eng.RemoveLoadBalancer(ctxT(b), svcs[i], auto)
			must(err)
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
						if _, _, err := f.eng.ReconcileLoadBalancer(ctxT(b), service(fmt.Sprintf("s%d-%d-%d", b.N, i, s), 80), nodes, auto); err != nil {
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
				if _, _, err := f.eng.ReconcileLoadBalancer(ctxT(b), service(fmt.Sprintf("c-%d-%d", b.N, i), 80), nodes, auto); err != nil {
					b.Fatal(err)
				}
			})
		})
		svc := service("steady", 80)
		if _, _, err := f.eng.ReconcileLoadBalancer(ctxT(b), svc, nodes, auto); err != nil {
			b.Fatal(err)
		}
		port := int32(2000)
		b.Run(c.name+"/update", func(b *testing.B) {
			measure(b, f, func(int) {
				port++
				svc.Spec.Ports[0].Port = port
				if _, _, err := f.eng.ReconcileLoadBalancer(ctxT(b), svc, nodes, auto); err != nil {
					b.Fatal(err)
				}
			})
		})
	}
}
