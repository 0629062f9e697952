package exampleapi_test

import (
	"errors"
	"maps"
	"testing"
	"time"

	"github.com/example/cloud-provider-example/exampleapi"
	"github.com/example/cloud-provider-example/internal/testkit"
	"github.com/example/cloud-provider-example/simulator/simtest"
)

// trafficLB is an active load balancer on a pool (with a long
// deregistration delay) holding two instances, returned in id order.
func trafficLB(t *testing.T, c *exampleapi.Client) (lb *exampleapi.LoadBalancer, pool *exampleapi.TargetPool, a, b string) {
	t.Helper()
	a, b = mustInstance(t, c, "t-a", "ex-west-1a").ID, mustInstance(t, c, "t-b", "ex-west-1b").ID
	if b < a {
		a, b = b, a
	}
	pool, err := c.CreateTargetPool(testkit.Context(t), exampleapi.CreateTargetPoolRequest{Name: "workers", Region: region,
		Targets: []string{a, b}, DeregistrationDelaySeconds: 600})
	if err != nil {
		t.Fatal(err)
	}
	spec := lbSpec("web")
	spec.TargetPoolID = pool.ID
	if lb, err = c.CreateLoadBalancer(testkit.Context(t), spec); err != nil {
		t.Fatal(err)
	}
	return lb, pool, a, b
}

// TestTrafficMethods drives OpenConnections, Connections and TargetHealth
// through a drain, and their errors.
func TestTrafficMethods(t *testing.T) {
	c := startClient(t, simtest.WithProvisionDelay(0))
	lb, pool, a, b := trafficLB(t, c)

	got, err := c.OpenConnections(testkit.Context(t), lb.ID, 3)
	if err != nil || got.Count != 3 || !maps.Equal(got.Assigned, map[string]int{a: 2, b: 1}) {
		t.Fatalf("open 3: %+v %v", got, err)
	}
	if _, err := c.UpdateTargetPool(testkit.Context(t), pool.ID, exampleapi.UpdateTargetPoolRequest{Targets: []string{a}, DeregistrationDelaySeconds: 600}, 0); err != nil {
		t.Fatal(err)
	}
	if got, err = c.OpenConnections(testkit.Context(t), lb.ID, 2); err != nil || !maps.Equal(got.Assigned, map[string]int{a: 2}) {
		t.Fatalf("open 2 while %s drains: %+v %v", b, got, err)
	}
	conns, err := c.Connections(testkit.Context(t), lb.ID)
	if err != nil {
		t.Fatal(err)
	}
	want := []exampleapi.TargetConnections{
		{ID: a, State: exampleapi.ConnectionServing, ConnectionCounts: exampleapi.ConnectionCounts{Assigned: 4, Open: 4}},
		{ID: b, State: exampleapi.ConnectionDraining, ConnectionCounts: exampleapi.ConnectionCounts{Assigned: 1, Open: 1}},
	}
	if len(conns.Targets) != 2 || conns.Targets[0] != want[0] || conns.Targets[1].ConnectionCounts != want[1].ConnectionCounts ||
		conns.Targets[1].State != want[1].State || conns.Targets[1].DrainingUntil == nil || time.Until(*conns.Targets[1].DrainingUntil) < 9*time.Minute ||
		conns.Totals != (exampleapi.ConnectionCounts{Assigned: 5, Open: 5}) {
		t.Errorf("connections %+v, want %+v", conns, want)
	}
	health, err := c.TargetHealth(testkit.Context(t), lb.ID)
	if err != nil || len(health) != 2 || health[0].ID != a || health[0].Health != exampleapi.TargetHealthy ||
		health[1].ID != b || health[1].Health != exampleapi.TargetDraining || health[1].Reason == "" {
		t.Errorf("target health %+v %v", health, err)
	}

	if _, err := c.UpdateTargetPool(testkit.Context(t), pool.ID, exampleapi.UpdateTargetPoolRequest{DeregistrationDelaySeconds: 600}, 0); err != nil {
		t.Fatal(err)
	}
	_, err = c.OpenConnections(testkit.Context(t), lb.ID, 1)
	if !exampleapi.IsNoServingTargets(err) || !exampleapi.IsConflict(err) {
		t.Errorf("empty pool: want no_serving_targets, got %v", err)
	}
	_, err = c.OpenConnections(testkit.Context(t), lb.ID, 0)
	var apiErr *exampleapi.APIError
	if !errors.Is(err, exampleapi.ErrInvalid) || !errors.As(err, &apiErr) || apiErr.Field != "count" {
		t.Errorf("count 0: %v", err)
	}
	if _, err := c.Connections(testkit.Context(t), "lb-gone"); !exampleapi.IsNotFound(err) {
		t.Errorf("unknown load balancer: %v", err)
	}
	if _, err := c.TargetHealth(testkit.Context(t), "lb-gone"); !exampleapi.IsNotFound(err) {
		t.Errorf("unknown load balancer: %v", err)
	}
}

// With answers lost and retried, every connection is counted once: the
// client's Idempotency-Key makes a retry a replay.
func TestOpenConnectionsRetriesCountOnce(t *testing.T) {
	sim := simtest.Start(t, simtest.WithProvisionDelay(0))
	c := newClient(t, sim, func(o *exampleapi.Options) { o.RetryMax = 30 })
	lb, _, _, _ := trafficLB(t, c)
	sim.SetFaults(t, exampleapi.Faults{DropRate: 0.3})
	const calls = 20
	for range calls {
		if _, err := c.OpenConnections(testkit.Context(t), lb.ID, 1); err != nil {
			t.Fatal(err)
		}
	}
	sim.SetFaults(t, exampleapi.Faults{})
	conns, err := c.Connections(testkit.Context(t), lb.ID)
	if err != nil || conns.Totals.Assigned != calls {
		t.Errorf("%d calls of 1 connection under drops: %+v %v", calls, conns, err)
	}
}
