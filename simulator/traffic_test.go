package simulator_test

import (
	"maps"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	clocktesting "k8s.io/utils/clock/testing"

	"github.com/example/cloud-provider-example/exampleapi"
	"github.com/example/cloud-provider-example/simulator/simtest"
)

// Traffic model helpers.

func (a *api) openConns(lbID string, n int, headers ...string) exampleapi.ConnectionAssignment {
	a.t.Helper()
	return decoded[exampleapi.ConnectionAssignment](a, http.StatusCreated, "POST", "/v1/load-balancers/"+lbID+"/connections",
		exampleapi.OpenConnectionsRequest{Count: n}, headers...)
}

// conns reads the connections, by target id.
func (a *api) conns(lbID string) (exampleapi.Connections, map[string]exampleapi.TargetConnections) {
	a.t.Helper()
	c := decoded[exampleapi.Connections](a, http.StatusOK, "GET", "/v1/load-balancers/"+lbID+"/connections", nil)
	by := map[string]exampleapi.TargetConnections{}
	for _, tc := range c.Targets {
		by[tc.ID] = tc
	}
	return c, by
}

// health reads the target health, by target id.
func (a *api) health(lbID string) map[string]exampleapi.TargetHealth {
	a.t.Helper()
	h := decoded[exampleapi.TargetHealthResponse](a, http.StatusOK, "GET", "/v1/load-balancers/"+lbID+"/target-health", nil)
	by := map[string]exampleapi.TargetHealth{}
	for _, th := range h.Targets {
		by[th.ID] = th
	}
	return by
}

func (a *api) putPool(id string, delay int, targets ...string) exampleapi.TargetPool {
	a.t.Helper()
	return decoded[exampleapi.TargetPool](a, http.StatusOK, "PUT", "/v1/target-pools/"+id,
		exampleapi.UpdateTargetPoolRequest{Targets: targets, DeregistrationDelaySeconds: delay})
}

// trafficSetup is an active load balancer on a pool with the given delay
// and three running instances, the pool holding all of them; ids are in
// id order, the round robin's.
func trafficSetup(t *testing.T, delay int, opts ...simtest.Option) (c *api, sim *simtest.Sim, lbID, poolID string, ids []string) {
	sim = simtest.Start(t, append([]simtest.Option{simtest.WithProvisionDelay(0)}, opts...)...)
	c = control(t, sim)
	for _, name := range []string{"n1", "n2", "n3"} {
		ids = append(ids, c.createInstance(instanceReq(name, "ex-west-1a")).ID)
	}
	slices.Sort(ids)
	req := poolReq("workers", ids...)
	req.DeregistrationDelaySeconds = delay
	tp := c.pools().create(req)
	spec := lbSpec("web")
	spec.TargetPoolID = tp.ID
	return c, sim, c.lbs().create(spec).ID, tp.ID, ids
}

func wantCounts(t *testing.T, tc exampleapi.TargetConnections, state string, assigned, open, closed int64) {
	t.Helper()
	if tc.State != state || tc.Assigned != assigned || tc.Open != open || tc.Closed != closed {
		t.Errorf("target %s: %+v, want %s assigned %d open %d closed %d", tc.ID, tc, state, assigned, open, closed)
	}
}

// New connections go round-robin over the serving targets in id order,
// continuing where the last call stopped; the counters add up.
func TestConnectionsRoundRobin(t *testing.T) {
	c, _, lb, _, ids := trafficSetup(t, 0)
	var a exampleapi.ConnectionAssignment
	resp := c.must(http.StatusCreated, "POST", "/v1/load-balancers/"+lb+"/connections", exampleapi.OpenConnectionsRequest{Count: 7}, &a)
	if want := map[string]int{ids[0]: 3, ids[1]: 2, ids[2]: 2}; a.LoadBalancerID != lb || a.Count != 7 || !maps.Equal(a.Assigned, want) {
		t.Fatalf("first 7: %+v, want %v", a, want)
	}
	if resp.header.Get("Location") != "/v1/load-balancers/"+lb+"/connections" || resp.header.Get("ETag") == "" {
		t.Errorf("headers %v", resp.header)
	}
	// Positions 7 and 8: the second and third target; the first is still
	// listed, with 0.
	if got, want := c.openConns(lb, 2).Assigned, map[string]int{ids[0]: 0, ids[1]: 1, ids[2]: 1}; !maps.Equal(got, want) {
		t.Errorf("next 2: %v, want %v", got, want)
	}
	all, by := c.conns(lb)
	for _, id := range ids {
		wantCounts(t, by[id], exampleapi.ConnectionServing, 3, 3, 0)
	}
	if all.LoadBalancerID != lb || len(all.Targets) != 3 || all.Totals != (exampleapi.ConnectionCounts{Assigned: 9, Open: 9}) {
		t.Errorf("connections %+v", all)
	}
	if !slices.IsSortedFunc(all.Targets, func(x, y exampleapi.TargetConnections) int { return strings.Compare(x.ID, y.ID) }) {
		t.Errorf("targets not in id order: %+v", all.Targets)
	}

	// A load balancer with its own targets works alike, from its own
	// counter.
	spec := lbSpec("direct")
	spec.Targets = []string{ids[2], ids[0]}
	direct := c.lbs().create(spec)
	if got, want := c.openConns(direct.ID, 3).Assigned, map[string]int{ids[0]: 2, ids[2]: 1}; !maps.Equal(got, want) {
		t.Errorf("own targets: %v, want %v", got, want)
	}
}

// A target removed with a delay gets no new connections, keeps its open
// ones and fails its health check until the delay ends; then its
// connections are closed and it is gone. Put back, it serves again, its
// old connections still closed. The cloud runs on a fake clock: the
// delay ends when the test steps it.
func TestDrainingTargetKeepsItsConnectionsUntilItsDelayEnds(t *testing.T) {
	clk := clocktesting.NewFakePassiveClock(time.Now())
	c, _, lb, pool, ids := trafficSetup(t, 1, simtest.WithClock(clk))
	c.openConns(lb, 6) // 2 each
	removed := ids[1]
	tp := c.putPool(pool, 1, ids[0], ids[2])
	until := tp.Draining[0].Until

	_, by := c.conns(lb)
	wantCounts(t, by[removed], exampleapi.ConnectionDraining, 2, 2, 0)
	if du := by[removed].DrainingUntil; du == nil || !du.Equal(until) {
		t.Errorf("draining_until %v, want %v", du, until)
	}
	h := c.health(lb)
	if h[removed].Health != exampleapi.TargetDraining || !strings.Contains(h[removed].Reason, "503") ||
		h[ids[0]].Health != exampleapi.TargetHealthy || len(h) != 3 {
		t.Errorf("health while draining: %+v", h)
	}
	if got, want := c.openConns(lb, 4).Assigned, map[string]int{ids[0]: 2, ids[2]: 2}; !maps.Equal(got, want) {
		t.Errorf("while draining: %v, want %v (nothing for %s)", got, want, removed)
	}
	_, by = c.conns(lb)
	wantCounts(t, by[removed], exampleapi.ConnectionDraining, 2, 2, 0)
	wantCounts(t, by[ids[0]], exampleapi.ConnectionServing, 4, 4, 0)

	clk.SetTime(until)
	all, by := c.conns(lb)
	wantCounts(t, by[removed], exampleapi.ConnectionGone, 2, 0, 2)
	if by[removed].DrainingUntil != nil || all.Totals != (exampleapi.ConnectionCounts{Assigned: 10, Open: 8, Closed: 2}) {
		t.Errorf("after the delay: %+v", all)
	}
	if _, listed := c.health(lb)[removed]; listed {
		t.Errorf("target-health still lists %s after its delay", removed)
	}

	c.putPool(pool, 1, ids...)
	_, by = c.conns(lb)
	wantCounts(t, by[removed], exampleapi.ConnectionServing, 2, 0, 2)
	if got := c.openConns(lb, 3).Assigned[removed]; got != 1 {
		t.Errorf("put back: %d new connections, want 1", got)
	}
}

// Put back before its delay ends, a draining target serves again with
// the connections it kept; its instance deleted, it is gone.
func TestDrainingTargetPutBackServesAgain(t *testing.T) {
	c, _, lb, pool, ids := trafficSetup(t, 600)
	c.openConns(lb, 3)
	c.putPool(pool, 600, ids[0], ids[2])
	if got := c.health(lb)[ids[1]].Health; got != exampleapi.TargetDraining {
		t.Fatalf("removed with a delay: health %q", got)
	}
	c.putPool(pool, 600, ids...)
	_, by := c.conns(lb)
	wantCounts(t, by[ids[1]], exampleapi.ConnectionServing, 1, 1, 0)
	if h := c.health(lb)[ids[1]]; h.Health != exampleapi.TargetHealthy || h.DrainingUntil != nil {
		t.Errorf("put back: health %+v", h)
	}
	if got := c.openConns(lb, 3).Assigned; !maps.Equal(got, map[string]int{ids[0]: 1, ids[1]: 1, ids[2]: 1}) {
		t.Errorf("put back: %v", got)
	}

	// A draining target whose instance is deleted is gone at once, though
	// the pool still lists it as draining.
	c.putPool(pool, 600, ids[0], ids[2])
	c.must(http.StatusNoContent, "DELETE", "/v1/instances/"+ids[1], nil, nil)
	_, by = c.conns(lb)
	wantCounts(t, by[ids[1]], exampleapi.ConnectionGone, 2, 0, 2)
	if h, listed := c.health(lb)[ids[1]]; listed {
		t.Errorf("target-health lists the deleted %s: %+v", ids[1], h)
	}
}

// Without a delay, removing a target (from a pool or from the load
// balancer's own targets) or deleting its instance closes its connections
// at once; put back, the closed ones stay closed.
func TestTargetLeavingWithoutDelayClosesItsConnections(t *testing.T) {
	c, _, lb, pool, ids := trafficSetup(t, 0)
	c.openConns(lb, 6)
	c.putPool(pool, 0, ids[0], ids[2])
	all, by := c.conns(lb)
	wantCounts(t, by[ids[1]], exampleapi.ConnectionGone, 2, 0, 2)
	if all.Totals != (exampleapi.ConnectionCounts{Assigned: 6, Open: 4, Closed: 2}) {
		t.Errorf("totals %+v", all.Totals)
	}
	c.putPool(pool, 0, ids...)
	_, by = c.conns(lb)
	wantCounts(t, by[ids[1]], exampleapi.ConnectionServing, 2, 0, 2)

	c.must(http.StatusNoContent, "DELETE", "/v1/instances/"+ids[2], nil, nil)
	_, by = c.conns(lb)
	wantCounts(t, by[ids[2]], exampleapi.ConnectionGone, 2, 0, 2)

	spec := lbSpec("direct")
	spec.Targets = []string{ids[0], ids[1]}
	direct := c.lbs().create(spec)
	c.openConns(direct.ID, 4)
	c.must(http.StatusOK, "PUT", "/v1/load-balancers/"+direct.ID, exampleapi.UpdateLoadBalancerRequest{
		Listeners: direct.Listeners, Targets: []string{ids[0]}}, nil)
	_, by = c.conns(direct.ID)
	wantCounts(t, by[ids[1]], exampleapi.ConnectionGone, 2, 0, 2)
	wantCounts(t, by[ids[0]], exampleapi.ConnectionServing, 2, 2, 0)
}

// A stopped instance gets no new connections, keeps its open ones and is
// unhealthy; with none serving, a call is refused and counts nothing.
func TestStoppedTargetsGetNoConnections(t *testing.T) {
	c, _, lb, pool, ids := trafficSetup(t, 0)
	c.openConns(lb, 3)
	setState := func(id, state string) {
		c.must(http.StatusOK, "PUT", "/v1/instances/"+id+"/state", exampleapi.SetInstanceStateRequest{State: state}, nil)
	}
	setState(ids[1], exampleapi.InstanceStopped)
	if got, want := c.openConns(lb, 4).Assigned, map[string]int{ids[0]: 2, ids[2]: 2}; !maps.Equal(got, want) {
		t.Errorf("with %s stopped: %v, want %v", ids[1], got, want)
	}
	_, by := c.conns(lb)
	wantCounts(t, by[ids[1]], exampleapi.ConnectionStopped, 1, 1, 0)
	if h := c.health(lb)[ids[1]]; h.Health != exampleapi.TargetUnhealthy || !strings.Contains(h.Reason, "stopped") {
		t.Errorf("stopped: health %+v", h)
	}

	setState(ids[0], exampleapi.InstanceStopped)
	setState(ids[2], exampleapi.InstanceStopped)
	before, _ := c.conns(lb)
	e := c.apiError(http.StatusConflict, "POST", "/v1/load-balancers/"+lb+"/connections", exampleapi.OpenConnectionsRequest{Count: 5})
	if e.Code != exampleapi.CodeNoServingTargets || !strings.Contains(e.Message, lb) {
		t.Errorf("all stopped: %+v", e)
	}
	if after, _ := c.conns(lb); after.Totals != before.Totals {
		t.Errorf("a refused call counted: %+v, before %+v", after.Totals, before.Totals)
	}
	// A draining target that is stopped fails its check as unhealthy: it
	// cannot even answer 503.
	c.putPool(pool, 600, ids[0], ids[2])
	if h := c.health(lb)[ids[1]]; h.Health != exampleapi.TargetUnhealthy {
		t.Errorf("stopped and draining: health %+v", h)
	}
	c.putPool(pool, 0)
	if e := c.apiError(http.StatusConflict, "POST", "/v1/load-balancers/"+lb+"/connections", exampleapi.OpenConnectionsRequest{Count: 1}); e.Code != exampleapi.CodeNoServingTargets {
		t.Errorf("empty pool: %+v", e)
	}
}

func TestConnectionsValidation(t *testing.T) {
	sim := simtest.Start(t, simtest.WithProvisionDelay(10*time.Minute))
	c := control(t, sim)
	n1 := c.createInstance(instanceReq("n1", "ex-west-1a"))
	spec := lbSpec("web")
	spec.Targets = []string{n1.ID}
	lb := c.lbs().create(spec)
	path := "/v1/load-balancers/" + lb.ID + "/connections"
	tests := []struct {
		name, msg string
		body      any
	}{
		{"zero", "0 is out of range (accepted: 1-1000)", exampleapi.OpenConnectionsRequest{}},
		{"negative", "-1 is out of range", exampleapi.OpenConnectionsRequest{Count: -1}},
		{"too many", "1001 is out of range", exampleapi.OpenConnectionsRequest{Count: 1001}},
		{"not a number", "expected a JSON int", `{"count": "5"}`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			e := newAPI(t, sim.URL, sim.Token).apiError(http.StatusBadRequest, "POST", path, tc.body)
			if e.Code != exampleapi.CodeInvalid || e.Field != "count" || !strings.Contains(e.Message, tc.msg) {
				t.Errorf("%+v, want count: %q", e, tc.msg)
			}
		})
	}
	if e := c.apiError(http.StatusBadRequest, "POST", path, `{"count": 1, "targets": []}`); e.Field != "targets" {
		t.Errorf("unknown field: %+v", e)
	}
	if e := c.apiError(http.StatusBadRequest, "POST", path, nil); !strings.Contains(e.Message, "empty") {
		t.Errorf("no body: %+v", e)
	}
	for _, p := range []string{"/connections", "/target-health"} {
		c.apiError(http.StatusNotFound, "GET", "/v1/load-balancers/lb-gone"+p, nil)
	}
	c.apiError(http.StatusNotFound, "POST", "/v1/load-balancers/lb-gone/connections", exampleapi.OpenConnectionsRequest{Count: 1})
	// A load balancer still provisioning takes no connections yet.
	if e := c.apiError(http.StatusConflict, "POST", path, exampleapi.OpenConnectionsRequest{Count: 1}); !strings.Contains(e.Message, "provisioning") {
		t.Errorf("provisioning: %+v", e)
	}
	if all, _ := c.conns(lb.ID); all.Totals != (exampleapi.ConnectionCounts{}) || len(all.Targets) != 1 {
		t.Errorf("after refused calls: %+v", all)
	}
}

// With an Idempotency-Key, a retried call is answered again and counted
// once.
func TestOpenConnectionsIdempotent(t *testing.T) {
	c, _, lb, _, _ := trafficSetup(t, 0)
	first := c.openConns(lb, 5, "Idempotency-Key", "k1")
	var again exampleapi.ConnectionAssignment
	resp := c.must(http.StatusCreated, "POST", "/v1/load-balancers/"+lb+"/connections", exampleapi.OpenConnectionsRequest{Count: 5}, &again, "Idempotency-Key", "k1")
	if resp.header.Get("Idempotent-Replayed") != "true" || !maps.Equal(first.Assigned, again.Assigned) {
		t.Errorf("replay: %+v (replayed %q), want %+v", again, resp.header.Get("Idempotent-Replayed"), first)
	}
	if all, _ := c.conns(lb); all.Totals.Assigned != 5 {
		t.Errorf("a replay counted again: %+v", all.Totals)
	}
}
