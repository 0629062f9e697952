package ccm

// The cache seen from the controllers' side, against the simulator.

import (
	"errors"
	"sync"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"

	"github.com/example/cloud-provider-example/exampleapi"
)

func TestCacheOneRequestWithinTTL(t *testing.T) {
	t.Parallel()
	e := newInstEnv(t, time.Minute)
	inst := e.create(t, exampleapi.CreateInstanceRequest{Name: "node-a"})
	ctx, pid := t.Context(), "example://ex-west-1/"+inst.ID
	// What the node controllers ask about one node in one sync, twice,
	// starting by name as for a node that has no providerID yet.
	for range 2 {
		for _, node := range []*v1.Node{nodeNamed("node-a", ""), nodeNamed("node-a", pid)} {
			if _, err := e.inst.InstanceMetadata(ctx, node); err != nil {
				t.Fatal(err)
			}
			if _, err := e.inst.InstanceExists(ctx, node); err != nil {
				t.Fatal(err)
			}
			if _, err := e.inst.InstanceShutdown(ctx, node); err != nil {
				t.Fatal(err)
			}
		}
		if _, err := e.inst.NodeAddressesByProviderID(ctx, pid); err != nil {
			t.Fatal(err)
		}
		if _, err := e.inst.GetZoneByProviderID(ctx, pid); err != nil {
			t.Fatal(err)
		}
		if _, err := e.inst.GetZoneByNodeName(ctx, "node-a"); err != nil {
			t.Fatal(err)
		}
	}
	if n := e.requests(); n != 1 {
		t.Errorf("metadata requests = %d (%v), want 1", n, e.calls)
	}
}

func TestCacheCollapsesConcurrentLookups(t *testing.T) {
	t.Parallel()
	e := newInstEnv(t, time.Minute)
	inst := e.create(t, exampleapi.CreateInstanceRequest{Name: "node-a"})
	// Slow answers, so every caller arrives while the first is in flight.
	e.sim.SetFaults(t, exampleapi.Faults{LatencyMs: 200})
	node := nodeNamed("node-a", "example://ex-west-1/"+inst.ID)
	start := make(chan struct{})
	var wg sync.WaitGroup
	for range 32 {
		wg.Go(func() {
			<-start
			if _, err := e.inst.InstanceMetadata(t.Context(), node); err != nil {
				t.Error(err)
			}
		})
	}
	close(start)
	wg.Wait()
	if n := e.requests(); n != 1 {
		t.Errorf("metadata requests for 32 concurrent lookups = %d, want 1", n)
	}
}

func TestCacheAnswersWhileRateLimited(t *testing.T) {
	t.Parallel()
	e := newInstEnv(t, time.Minute)
	inst := e.create(t, exampleapi.CreateInstanceRequest{Name: "node-a"})
	ctx, node := t.Context(), nodeNamed("node-a", "example://ex-west-1/"+inst.ID)
	if _, err := e.inst.InstanceMetadata(ctx, node); err != nil {
		t.Fatal(err)
	}
	e.sim.SetFaults(t, exampleapi.Faults{RateLimit: 0.001, RateBurst: 1})
	for range 20 {
		if ok, err := e.inst.InstanceExists(ctx, node); err != nil || !ok {
			t.Fatalf("InstanceExists under rate limit = %v, %v", ok, err)
		}
	}
	// The limit is real: uncached lookups run into it.
	var limited error
	for _, name := range []string{"other-1", "other-2"} {
		if _, err := e.inst.InstanceExists(ctx, nodeNamed(name, "")); err != nil {
			limited = err
		}
	}
	if !errors.Is(limited, exampleapi.ErrRateLimited) {
		t.Errorf("uncached lookups under rate limit: %v; want a 429", limited)
	}
	if n := e.requests(); n != 3 {
		t.Errorf("metadata requests = %d, want 3 (one warm-up, two uncached)", n)
	}
}

func TestNotFoundCachedBriefly(t *testing.T) {
	t.Parallel()
	e := newInstEnv(t, 30*time.Second)
	ctx, node := t.Context(), nodeNamed("late", "")
	for range 3 {
		if ok, err := e.inst.InstanceExists(ctx, node); err != nil || ok {
			t.Fatalf("InstanceExists(missing) = %v, %v", ok, err)
		}
	}
	if n := e.requests(); n != 1 {
		t.Fatalf("metadata requests for a missing instance = %d, want 1 (negative cache)", n)
	}
	e.create(t, exampleapi.CreateInstanceRequest{Name: "late"})
	if ok, _ := e.inst.InstanceExists(ctx, node); ok {
		t.Fatal("a cached 404 was not used")
	}
	// 404s are kept a fifth of the TTL, well before a deletion is seen.
	e.clock.advance(e.inst.cache.negTTL)
	if ok, err := e.inst.InstanceExists(ctx, node); err != nil || !ok {
		t.Errorf("InstanceExists after create and the negative TTL = %v, %v; want true", ok, err)
	}
}
