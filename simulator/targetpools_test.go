package simulator_test

import (
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	clocktesting "k8s.io/utils/clock/testing"

	"github.com/example/cloud-provider-example/exampleapi"
	"github.com/example/cloud-provider-example/simulator/simtest"
)

func poolReq(name string, targets ...string) exampleapi.CreateTargetPoolRequest {
	return exampleapi.CreateTargetPoolRequest{Name: name, Region: "ex-west-1", Targets: targets}
}

func TestTargetPoolLifecycle(t *testing.T) {
	c := startControl(t)
	n1, n2 := c.createInstance(instanceReq("n1", "ex-west-1a")), c.createInstance(instanceReq("n2", "ex-west-1b"))

	req := poolReq("workers", n1.ID)
	req.Tags = map[string]string{"k8s.example.com/cluster-id": "prod"}
	var tp exampleapi.TargetPool
	resp := c.must(http.StatusCreated, "POST", "/v1/target-pools", req, &tp)
	if !strings.HasPrefix(tp.ID, "tp-") || tp.Name != "workers" || tp.Region != "ex-west-1" || tp.Version != 1 ||
		!slices.Equal(tp.Targets, []string{n1.ID}) || tp.Tags["k8s.example.com/cluster-id"] != "prod" ||
		tp.CreatedAt.IsZero() || !tp.UpdatedAt.Equal(tp.CreatedAt) {
		t.Fatalf("new target pool %+v", tp)
	}
	if resp.header.Get("ETag") != `"1"` || resp.header.Get("Location") != "/v1/target-pools/"+tp.ID {
		t.Errorf("create headers %v", resp.header)
	}
	if got := c.pools().get(tp.ID); got.ID != tp.ID || !slices.Equal(got.Targets, tp.Targets) {
		t.Errorf("get %+v", got)
	}

	// Names are unique per region.
	c.apiError(http.StatusConflict, "POST", "/v1/target-pools", poolReq("workers"))
	east := poolReq("workers")
	east.Region = "ex-east-1"
	c.pools().create(east)
	var l exampleapi.ListResponse[exampleapi.TargetPool]
	c.must(http.StatusOK, "GET", "/v1/target-pools?name=workers&region=ex-west-1", nil, &l)
	if len(l.Items) != 1 || l.Items[0].ID != tp.ID {
		t.Errorf("filtered list %+v", l.Items)
	}

	// PUT replaces targets and tags under If-Match.
	upd := exampleapi.UpdateTargetPoolRequest{Targets: []string{n2.ID, n1.ID}}
	c.apiError(http.StatusPreconditionFailed, "PUT", "/v1/target-pools/"+tp.ID, upd, "If-Match", `"7"`)
	var got exampleapi.TargetPool
	resp = c.must(http.StatusOK, "PUT", "/v1/target-pools/"+tp.ID, upd, &got, "If-Match", `"1"`)
	if got.Version != 2 || !slices.Equal(got.Targets, []string{n2.ID, n1.ID}) || got.Tags != nil ||
		got.Name != "workers" || !got.UpdatedAt.After(tp.UpdatedAt) || !got.CreatedAt.Equal(tp.CreatedAt) {
		t.Errorf("after update %+v", got)
	}
	if resp.header.Get("ETag") != `"2"` {
		t.Errorf("update ETag %q", resp.header.Get("ETag"))
	}
	// An empty pool is valid, and answers [] rather than null.
	resp = c.must(http.StatusOK, "PUT", "/v1/target-pools/"+tp.ID, `{"targets": []}`, nil)
	if !strings.Contains(string(resp.body), `"targets":[]`) {
		t.Errorf("empty pool body %s", resp.body)
	}

	c.apiError(http.StatusPreconditionFailed, "DELETE", "/v1/target-pools/"+tp.ID, nil, "If-Match", `"1"`)
	c.must(http.StatusNoContent, "DELETE", "/v1/target-pools/"+tp.ID, nil, nil)
	c.apiError(http.StatusNotFound, "GET", "/v1/target-pools/"+tp.ID, nil)
	c.apiError(http.StatusNotFound, "PUT", "/v1/target-pools/"+tp.ID, upd)
	c.apiError(http.StatusNotFound, "DELETE", "/v1/target-pools/"+tp.ID, nil)
	// The name is free again.
	c.pools().create(poolReq("workers"))
}

// TestLoadBalancerForwardsToTargetPool: a load balancer referencing a pool
// shows the reference and no targets; updating the pool changes nothing on
// the load balancer (no version bump, same body), so a drift check of the
// load balancer sees no change.
func TestLoadBalancerForwardsToTargetPool(t *testing.T) {
	sim := simtest.Start(t, simtest.WithProvisionDelay(0))
	c := control(t, sim)
	n1, n2 := c.createInstance(instanceReq("n1", "ex-west-1a")), c.createInstance(instanceReq("n2", "ex-west-1b"))
	a, b := c.pools().create(poolReq("a", n1.ID)), c.pools().create(poolReq("b", n2.ID))

	var lbs []exampleapi.LoadBalancer
	for i := range 3 {
		spec := lbSpec(fmt.Sprintf("web-%d", i))
		spec.TargetPoolID = a.ID
		lbs = append(lbs, c.lbs().create(spec))
	}
	before := c.do("GET", "/v1/load-balancers/"+lbs[0].ID, nil)
	if lb := c.lbs().get(lbs[0].ID); lb.TargetPoolID != a.ID || len(lb.Targets) != 0 {
		t.Fatalf("load balancer with a pool: %+v", lb.LoadBalancerSpec)
	}
	if !strings.Contains(string(before.body), `"target_pool_id":"`+a.ID+`"`) || strings.Contains(string(before.body), `"targets"`) {
		t.Errorf("load balancer body %s", before.body)
	}

	c.must(http.StatusOK, "PUT", "/v1/target-pools/"+a.ID, exampleapi.UpdateTargetPoolRequest{Targets: []string{n1.ID, n2.ID}}, nil)
	after := c.do("GET", "/v1/load-balancers/"+lbs[0].ID, nil)
	if string(after.body) != string(before.body) || after.header.Get("ETag") != before.header.Get("ETag") {
		t.Errorf("a pool update changed the load balancer:\n%s\n%s", before.body, after.body)
	}

	// Referenced pools cannot be deleted; the conflict names the users.
	e := c.apiError(http.StatusConflict, "DELETE", "/v1/target-pools/"+a.ID, nil)
	for _, lb := range lbs {
		if !strings.Contains(e.Message, lb.ID) {
			t.Errorf("conflict %q does not name %s", e.Message, lb.ID)
		}
	}
	if !strings.Contains(e.Message, "3 load balancers") {
		t.Errorf("conflict %q", e.Message)
	}

	// Moving between pools, and back to targets, is an update.
	upd := func(pool string, targets ...string) exampleapi.LoadBalancer {
		var lb exampleapi.LoadBalancer
		c.must(http.StatusOK, "PUT", "/v1/load-balancers/"+lbs[0].ID, exampleapi.UpdateLoadBalancerRequest{
			Listeners: lbs[0].Listeners, TargetPoolID: pool, Targets: targets}, &lb)
		return lb
	}
	if lb := upd(b.ID); lb.TargetPoolID != b.ID || lb.Version != 2 {
		t.Errorf("moved to pool b: %+v", lb)
	}
	if e := c.apiError(http.StatusConflict, "DELETE", "/v1/target-pools/"+b.ID, nil); !strings.Contains(e.Message, "1 load balancer ("+lbs[0].ID+")") {
		t.Errorf("conflict on b: %q", e.Message)
	}
	if lb := upd("", n1.ID); lb.TargetPoolID != "" || !slices.Equal(lb.Targets, []string{n1.ID}) {
		t.Errorf("moved to targets: %+v", lb)
	}
	c.must(http.StatusNoContent, "DELETE", "/v1/target-pools/"+b.ID, nil, nil)
	for _, lb := range lbs[1:] {
		c.must(http.StatusNoContent, "DELETE", "/v1/load-balancers/"+lb.ID, nil, nil)
	}
	c.must(http.StatusNoContent, "DELETE", "/v1/target-pools/"+a.ID, nil, nil)
}

func TestTargetPoolReferenceErrors(t *testing.T) {
	sim := simtest.Start(t)
	c := control(t, sim)
	n1 := c.createInstance(instanceReq("n1", "ex-west-1a"))
	west := c.pools().create(poolReq("west"))
	eastReq := poolReq("east")
	eastReq.Region = "ex-east-1"
	east := c.pools().create(eastReq)
	lb := c.lbs().create(lbSpec("existing"))

	withPool := func(pool string, targets ...string) exampleapi.LoadBalancerSpec {
		s := lbSpec("new-lb")
		s.TargetPoolID, s.Targets = pool, targets
		return s
	}
	tests := []struct {
		name, method, path string
		body               any
		status             int
		field, msg         string
	}{
		{"pool and targets", "POST", "/v1/load-balancers", withPool(west.ID, n1.ID), 400, "target_pool_id", "mutually exclusive with targets (1 given)"},
		{"not a pool id", "POST", "/v1/load-balancers", withPool(lb.ID), 400, "target_pool_id", `"` + lb.ID + `" is not a target pool id (tp-...)`},
		{"unknown pool", "POST", "/v1/load-balancers", withPool("tp-gone"), 400, "target_pool_id", `target pool "tp-gone" does not exist`},
		{"pool of another region", "POST", "/v1/load-balancers", withPool(east.ID), 400, "target_pool_id", "is in region ex-east-1, not ex-west-1"},
		{"update to unknown pool", "PUT", "/v1/load-balancers/" + lb.ID, exampleapi.UpdateLoadBalancerRequest{
			Listeners: lb.Listeners, TargetPoolID: "tp-gone"}, 400, "target_pool_id", "does not exist"},
		{"update with pool and targets", "PUT", "/v1/load-balancers/" + lb.ID, exampleapi.UpdateLoadBalancerRequest{
			Listeners: lb.Listeners, TargetPoolID: west.ID, Targets: []string{n1.ID}}, 400, "target_pool_id", "mutually exclusive"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			e := newAPI(t, sim.URL, sim.Token).apiError(tc.status, tc.method, tc.path, tc.body)
			if e.Field != tc.field || !strings.Contains(e.Message, tc.msg) {
				t.Errorf("field %q message %q, want %q containing %q", e.Field, e.Message, tc.field, tc.msg)
			}
		})
	}
	if got := c.lbs().get(lb.ID); got.Version != 1 {
		t.Errorf("a failed update changed the load balancer: %+v", got)
	}
}

// TestDeletedInstanceLeavesTargetPools: like load balancer targets, a
// deleted instance disappears from pools (their version moves); the load
// balancers using the pool do not change.
func TestDeletedInstanceLeavesTargetPools(t *testing.T) {
	c := startControl(t)
	n1, n2 := c.createInstance(instanceReq("n1", "ex-west-1a")), c.createInstance(instanceReq("n2", "ex-west-1b"))
	tp := c.pools().create(poolReq("workers", n1.ID, n2.ID))
	other := c.pools().create(poolReq("others", n2.ID))
	spec := lbSpec("web")
	spec.TargetPoolID = tp.ID
	lb := c.lbs().create(spec)

	c.must(http.StatusNoContent, "DELETE", "/v1/instances/"+n1.ID, nil, nil)
	if got := c.pools().get(tp.ID); !slices.Equal(got.Targets, []string{n2.ID}) || got.Version != 2 || !got.UpdatedAt.After(tp.UpdatedAt) {
		t.Errorf("after deleting a target: %+v", got)
	}
	if got := c.pools().get(other.ID); got.Version != 1 {
		t.Errorf("a pool without the instance changed: %+v", got)
	}
	if got := c.lbs().get(lb.ID); got.Version != 1 || got.TargetPoolID != tp.ID {
		t.Errorf("load balancer on the pool changed: %+v", got)
	}
	c.must(http.StatusNoContent, "DELETE", "/v1/instances/"+n2.ID, nil, nil)
	if got := c.pools().get(tp.ID); got.Targets == nil || len(got.Targets) != 0 {
		t.Errorf("pool after deleting every target: %+v", got)
	}
}

func TestTargetPoolValidation(t *testing.T) {
	sim := simtest.Start(t)
	c := control(t, sim)
	west := c.createInstance(instanceReq("node-west", "ex-west-1a"))
	east := c.createInstance(instanceReq("node-east", "ex-east-1a"))
	tp := c.pools().create(poolReq("existing"))
	with := func(mod func(*exampleapi.CreateTargetPoolRequest)) exampleapi.CreateTargetPoolRequest {
		r := poolReq("new-pool")
		mod(&r)
		return r
	}
	put := "/v1/target-pools/" + tp.ID
	tests := []struct {
		name, method, path string
		body               any
		field, msg         string
	}{
		{"no name", "POST", "/v1/target-pools", with(func(r *exampleapi.CreateTargetPoolRequest) { r.Name = "" }), "name", "required"},
		{"bad name", "POST", "/v1/target-pools", with(func(r *exampleapi.CreateTargetPoolRequest) { r.Name = "a b" }), "name", "not a valid name"},
		{"no region", "POST", "/v1/target-pools", with(func(r *exampleapi.CreateTargetPoolRequest) { r.Region = "" }), "region", "required"},
		{"unknown region", "POST", "/v1/target-pools", with(func(r *exampleapi.CreateTargetPoolRequest) { r.Region = "nowhere" }), "region", "unknown region"},
		{"too many targets", "POST", "/v1/target-pools", with(func(r *exampleapi.CreateTargetPoolRequest) { r.Targets = idsN("i-", 5001) }), "targets", "has 5001 targets (at most 5000)"},
		{"empty target", "POST", "/v1/target-pools", with(func(r *exampleapi.CreateTargetPoolRequest) { r.Targets = []string{west.ID, ""} }), "targets[1]", "must not be empty"},
		{"duplicate target", "POST", "/v1/target-pools", with(func(r *exampleapi.CreateTargetPoolRequest) { r.Targets = []string{west.ID, west.ID} }), "targets[1]", "duplicate target"},
		{"unknown target", "POST", "/v1/target-pools", with(func(r *exampleapi.CreateTargetPoolRequest) { r.Targets = []string{"i-gone"} }), "targets[0]", `instance "i-gone" does not exist`},
		{"target in other region", "POST", "/v1/target-pools", with(func(r *exampleapi.CreateTargetPoolRequest) { r.Targets = []string{east.ID} }), "targets[0]", "is in region ex-east-1"},
		{"too many tags", "POST", "/v1/target-pools", with(func(r *exampleapi.CreateTargetPoolRequest) { r.Tags = tagsN(51) }), "tags", "has 51 tags (at most 50)"},
		{"unknown field", "POST", "/v1/target-pools", `{"name":"p","region":"ex-west-1","targets":[],"members":[]}`, "members", "unknown field"},
		{"update too many targets", "PUT", put, exampleapi.UpdateTargetPoolRequest{Targets: idsN("i-", 5001)}, "targets", "at most 5000"},
		{"update unknown target", "PUT", put, exampleapi.UpdateTargetPoolRequest{Targets: []string{"i-x"}}, "targets[0]", "does not exist"},
		{"update other region", "PUT", put, exampleapi.UpdateTargetPoolRequest{Targets: []string{east.ID}}, "targets[0]", "is in region ex-east-1"},
		{"update bad tag", "PUT", put, exampleapi.UpdateTargetPoolRequest{Tags: map[string]string{"a=b": "c"}}, "tags", "must not contain '='"},
		{"update renames", "PUT", put, `{"name":"other","targets":[]}`, "name", "unknown field"},
		{"bad page size", "GET", "/v1/target-pools?page_size=0", nil, "page_size", "accepted: 1-1000"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			e := newAPI(t, sim.URL, sim.Token).apiError(http.StatusBadRequest, tc.method, tc.path, tc.body)
			if e.Code != exampleapi.CodeInvalid || e.Field != tc.field || !strings.Contains(e.Message, tc.msg) {
				t.Errorf("code %q field %q message %q, want field %q and a message containing %q", e.Code, e.Field, e.Message, tc.field, tc.msg)
			}
		})
	}
	if got := c.pools().get(tp.ID); got.Version != 1 {
		t.Errorf("failed updates changed the pool: %+v", got)
	}
}

func TestTargetPoolIdempotentCreateAndRace(t *testing.T) {
	sim := simtest.Start(t)
	c := control(t, sim)
	var first, second exampleapi.TargetPool
	c.must(http.StatusCreated, "POST", "/v1/target-pools", poolReq("p"), &first, "Idempotency-Key", "k1")
	r := c.must(http.StatusCreated, "POST", "/v1/target-pools", poolReq("p"), &second, "Idempotency-Key", "k1")
	if first.ID != second.ID || r.header.Get("Idempotent-Replayed") != "true" {
		t.Errorf("replay gave %s (replayed %q), want %s", second.ID, r.header.Get("Idempotent-Replayed"), first.ID)
	}
	c.apiError(http.StatusConflict, "POST", "/v1/target-pools", poolReq("other"), "Idempotency-Key", "k1")

	expectOneCreated(t, sim, 10, "/v1/target-pools", poolReq("race"))
}

func TestTargetPoolListPaginates(t *testing.T) {
	c := startControl(t)
	want := map[string]bool{}
	for i := range 7 {
		want[c.pools().create(poolReq(fmt.Sprintf("p%d", i))).ID] = true
	}
	var ids []string
	path := "/v1/target-pools?page_size=3"
	for {
		var l exampleapi.ListResponse[exampleapi.TargetPool]
		c.must(http.StatusOK, "GET", path, nil, &l)
		for _, tp := range l.Items {
			ids = append(ids, tp.ID)
		}
		if l.NextPageToken == "" {
			break
		}
		path = "/v1/target-pools?page_size=3&page_token=" + l.NextPageToken
	}
	if len(ids) != 7 || !slices.IsSorted(ids) {
		t.Fatalf("walked %v", ids)
	}
	for _, id := range ids {
		if !want[id] {
			t.Errorf("unexpected id %s", id)
		}
	}
}

func TestTargetPoolsPersistAndSufferFaults(t *testing.T) {
	sim := simtest.Start(t, simtest.WithProvisionDelay(0))
	c := control(t, sim)
	n1 := c.createInstance(instanceReq("n1", "ex-west-1a"))
	tp := c.pools().create(poolReq("workers", n1.ID))
	spec := lbSpec("web")
	spec.TargetPoolID = tp.ID
	lb := c.lbs().create(spec)
	sim.Stop()

	sim = simtest.Start(t, simtest.WithDataDir(sim.DataDir))
	c = control(t, sim)
	if got := c.pools().get(tp.ID); !slices.Equal(got.Targets, []string{n1.ID}) || got.Version != 1 {
		t.Errorf("pool after restart %+v", got)
	}
	if got := c.lbs().get(lb.ID); got.TargetPoolID != tp.ID {
		t.Errorf("load balancer after restart %+v", got)
	}
	c.apiError(http.StatusConflict, "POST", "/v1/target-pools", poolReq("workers"))
	c.apiError(http.StatusConflict, "DELETE", "/v1/target-pools/"+tp.ID, nil)

	sim.SetFaults(t, exampleapi.Faults{ErrorRate: 1})
	for _, m := range []string{"GET", "POST"} {
		if r := c.do(m, "/v1/target-pools", poolReq("x")); r.status < 500 {
			t.Errorf("%s /v1/target-pools with error_rate 1: status %d", m, r.status)
		}
	}
}

// A target removed from a pool with a deregistration delay drains: listed
// with the end of its delay until then, gone after; put back, it stops
// draining. Without a delay it leaves at once. The cloud runs on a fake
// clock: the delay ends when the test steps it.
func TestTargetPoolDraining(t *testing.T) {
	clk := clocktesting.NewFakePassiveClock(time.Now())
	c := control(t, simtest.Start(t, simtest.WithClock(clk)))
	n1, n2, n3 := c.createInstance(instanceReq("n1", "ex-west-1a")), c.createInstance(instanceReq("n2", "ex-west-1b")), c.createInstance(instanceReq("n3", "ex-west-1a"))
	req := poolReq("draining", n1.ID, n2.ID, n3.ID)
	req.DeregistrationDelaySeconds = 1
	tp := c.pools().create(req)
	if tp.DeregistrationDelaySeconds != 1 || tp.Draining == nil || len(tp.Draining) != 0 {
		t.Fatalf("new pool %+v", tp)
	}
	put := func(delay int, targets ...string) exampleapi.TargetPool {
		var out exampleapi.TargetPool
		c.must(http.StatusOK, "PUT", "/v1/target-pools/"+tp.ID, exampleapi.UpdateTargetPoolRequest{Targets: targets, DeregistrationDelaySeconds: delay}, &out)
		return out
	}
	got := put(1, n1.ID, n3.ID)
	if len(got.Draining) != 1 || got.Draining[0].ID != n2.ID || !got.Draining[0].Until.Equal(clk.Now().Add(time.Second)) {
		t.Fatalf("after removing n2: draining %+v, want n2 for 1s", got.Draining)
	}
	if l := c.pools().get(tp.ID).Draining; len(l) != 1 || l[0].ID != n2.ID {
		t.Errorf("get: draining %+v", l)
	}
	if back := put(1, n1.ID, n2.ID, n3.ID); len(back.Draining) != 0 {
		t.Errorf("n2 put back still drains: %+v", back.Draining)
	}
	put(1, n1.ID)
	clk.SetTime(clk.Now().Add(time.Second - time.Nanosecond))
	if l := c.pools().get(tp.ID).Draining; len(l) != 2 {
		t.Errorf("just before the delay ends: draining %+v, want n2 and n3", l)
	}
	clk.SetTime(clk.Now().Add(time.Nanosecond))
	if l := c.pools().get(tp.ID).Draining; len(l) != 0 {
		t.Errorf("draining after the delay: %+v", l)
	}
	if now := put(0); len(now.Draining) != 0 {
		t.Errorf("without a delay, n1 drains: %+v", now.Draining)
	}
	bad := poolReq("too-long")
	bad.DeregistrationDelaySeconds = exampleapi.MaxDeregistrationDelay + 1
	c.apiError(http.StatusBadRequest, "POST", "/v1/target-pools", bad)
}
