package engine_test

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/example/cloud-provider-example/annotations"
	"github.com/example/cloud-provider-example/engine"
	"github.com/example/cloud-provider-example/internal/testkit"
	"github.com/example/cloud-provider-example/review/reviewtest"
)

// shippedConcurrency is terraform.concurrency when the cloud config does
// not set it (a complete config that leaves it out).
func shippedConcurrency(b *testing.B) int {
	return reviewtest.Config(b, "").Terraform.Concurrency
}

func serviceIn(ns, name string, port int32) *corev1.Service {
	svc := service(name, port)
	svc.Namespace, svc.UID = ns, types.UID("uid-"+ns+"-"+name)
	return svc
}

// BenchmarkFairShare: namespace tenant-a flaps 3×concurrency Services
// without pause (every reconcile a real plan and apply, so every slot is
// busy and the rest wait), while one Service is created. Its create
// latency, median:
//   - idle: no flapping, for reference;
//   - other-namespace: created in tenant-b, which has its own fair share
//     of slots: it waits for one slot to free;
//   - same-namespace: created in tenant-a, queued behind tenant-a's own
//     operations: what every namespace got when all shared one FIFO.
//
// a-flaps/s shows tenant-a's throughput is kept (the scheduler gives
// every free slot to someone).
func BenchmarkFairShare(b *testing.B) {
	concurrency := shippedConcurrency(b)
	flappers := 3 * concurrency
	f := newFixtureWith(b, concurrency, engine.Options{})
	nodes := []*corev1.Node{f.node(b, "n1")}
	created := 0
	create := func(b *testing.B, ns string) {
		created++
		if _, _, err := f.eng.ReconcileLoadBalancer(testkit.Context(b), annotations.Read(serviceIn(ns, fmt.Sprintf("create-%d", created), 80)), nodes, auto); err != nil {
			b.Fatal(err)
		}
	}
	var flaps atomic.Int64
	latency := func(b *testing.B, ns string, flapping bool) {
		walls := make([]time.Duration, 0, b.N)
		flaps0 := flaps.Load()
		b.ResetTimer()
		start := time.Now()
		for range b.N {
			t := time.Now()
			create(b, ns)
			walls = append(walls, time.Since(t))
		}
		elapsed := time.Since(start)
		b.StopTimer()
		slices.Sort(walls)
		b.ReportMetric(float64(walls[len(walls)/2].Milliseconds()), "create-ms(median)")
		b.ReportMetric(float64(walls[len(walls)-1].Milliseconds()), "create-ms(max)")
		if flapping {
			b.ReportMetric(float64(flaps.Load()-flaps0)/elapsed.Seconds(), "a-flaps/s")
		}
	}
	create(b, "warm-up") // a first workspace: the others copy its initialisation
	b.Run("idle", func(b *testing.B) { latency(b, "tenant-b", false) })

	var (
		stop       atomic.Bool
		wg, warmed sync.WaitGroup
	)
	warmed.Add(flappers)
	for i := range flappers {
		svc := serviceIn("tenant-a", fmt.Sprintf("flap-%d", i), 80)
		wg.Go(func() {
			n := 0
			defer func() {
				if n == 0 { // failed before its create: not waited for
					warmed.Done()
				}
			}()
			for ; !stop.Load(); n++ {
				if n > 0 { // every reconcile after the create a real change: 81, 80, 81, ...
					p := &svc.Spec.Ports[0].Port
					*p = 80 + 81 - *p
				}
				ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
				_, _, err := f.eng.ReconcileLoadBalancer(ctx, annotations.Read(svc), nodes, auto)
				cancel()
				if err != nil {
					b.Error(err)
					return
				}
				flaps.Add(1)
				if n == 0 {
					warmed.Done()
				}
			}
		})
	}
	// Stopped before the fixture's cleanup: the operations running end
	// normally (no terraform killed).
	b.Cleanup(func() { stop.Store(true); wg.Wait() })
	warmed.Wait() // every flapper created: from now on, updates only
	b.Run("other-namespace", func(b *testing.B) { latency(b, "tenant-b", true) })
	b.Run("same-namespace", func(b *testing.B) { latency(b, "tenant-a", true) })
}
