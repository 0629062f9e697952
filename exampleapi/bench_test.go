package exampleapi_test

import (
	"fmt"
	"testing"

	"github.com/example/cloud-provider-example/internal/testkit"
)

// Requests per second on loopback against the simulator (persisted with
// fsync), one client, GOMAXPROCS goroutines.
func BenchmarkGet(b *testing.B) {
	c := startClient(b)
	in := mustInstance(b, c, "bench", "ex-west-1a")
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			if _, err := c.GetInstance(testkit.Context(b), in.ID); err != nil {
				b.Error(err)
			}
		}
	})
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "req/s")
}

func BenchmarkCreate(b *testing.B) {
	c := startClient(b)
	b.ResetTimer()
	i := 0
	for b.Loop() {
		i++
		if _, err := c.CreateLoadBalancer(testkit.Context(b), lbSpec(fmt.Sprintf("bench-%d", i))); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "req/s")
}
