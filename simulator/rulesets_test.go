package simulator_test

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/example/cloud-provider-example/exampleapi"
	"github.com/example/cloud-provider-example/simulator/simtest"
)

// keyed is an http rule of listener 80 ordered by key, forwarding to pool.
func keyed(name, key, pool string) exampleapi.Rule {
	return exampleapi.Rule{Name: name, ListenerPort: 80, OrderKey: key, PathType: "prefix", Path: "/" + name,
		Backends: []exampleapi.RuleBackend{backend(pool, 30001, 1)}}
}

// ruleSetSetup is a simulator with a target pool of one instance, and
// the spec of a load balancer with an http listener on port 80.
func ruleSetSetup(t *testing.T) (*simtest.Sim, *api, string, exampleapi.LoadBalancerSpec) {
	sim := simtest.Start(t, simtest.WithProvisionDelay(0))
	c := control(t, sim)
	pool := c.pools().create(poolReq("pool-a", c.createInstance(instanceReq("n-a", "ex-west-1a")).ID)).ID
	spec := lbSpec("gateway")
	spec.Listeners = []exampleapi.Listener{{Protocol: "http", Port: 80, TargetPort: 30080}}
	return sim, c, pool, spec
}

// A rule set is put whole (201, then 200 with the next version), read,
// listed by name, written under If-Match, persisted, and deleted; the
// http-requests endpoint names the set whose rule answered.
func TestRuleSetLifecycle(t *testing.T) {
	sim, c, pool, spec := ruleSetSetup(t)
	lb := c.lbs().create(spec)
	path := "/v1/load-balancers/" + lb.ID + "/rule-sets/"

	put := exampleapi.PutRuleSetRequest{Rules: []exampleapi.Rule{keyed("api", "k1", pool)}}
	first := c.must(http.StatusCreated, "PUT", path+"team-b", put, nil)
	if first.header.Get("ETag") != `"1"` || first.header.Get("Location") != path+"team-b" {
		t.Errorf("create: ETag %q, Location %q", first.header.Get("ETag"), first.header.Get("Location"))
	}
	put.Rules = append(put.Rules, keyed("web", "k2", pool))
	rs := decoded[exampleapi.RuleSet](c, http.StatusOK, "PUT", path+"team-b", put)
	if rs.Version != 2 || len(rs.Rules) != 2 || rs.LoadBalancerID != lb.ID || rs.Name != "team-b" {
		t.Errorf("replaced: %+v", rs)
	}
	c.must(http.StatusCreated, "PUT", path+"team-a", exampleapi.PutRuleSetRequest{}, nil)
	list := decoded[exampleapi.ListResponse[exampleapi.RuleSet]](c, http.StatusOK, "GET", strings.TrimSuffix(path, "/"), nil)
	if len(list.Items) != 2 || list.Items[0].Name != "team-a" || list.Items[1].Name != "team-b" {
		t.Errorf("list: %+v", list.Items)
	}
	if e := c.apiError(http.StatusPreconditionFailed, "PUT", path+"team-b", put, "If-Match", `"1"`); e.Code != exampleapi.CodePreconditionFailed {
		t.Errorf("stale If-Match: %+v", e)
	}
	c.apiError(http.StatusNotFound, "PUT", path+"team-c", put, "If-Match", `"1"`)
	c.apiError(http.StatusNotFound, "GET", path+"team-c", nil)
	c.apiError(http.StatusNotFound, "PUT", "/v1/load-balancers/lb-missing/rule-sets/team-b", put)

	sim.Stop()
	sim = simtest.Start(t, simtest.WithDataDir(sim.DataDir), simtest.WithTokens(sim.Token, sim.ReadOnlyToken), simtest.WithProvisionDelay(0))
	c = control(t, sim)
	if got := decoded[exampleapi.RuleSet](c, http.StatusOK, "GET", path+"team-b", nil); got.Version != 2 || len(got.Rules) != 2 {
		t.Errorf("after a restart: %+v", got)
	}
	cl, err := exampleapi.New(exampleapi.Options{Endpoint: sim.URL, Token: sim.Token})
	if err != nil {
		t.Fatal(err)
	}
	out, err := cl.SimulateRequests(context.Background(), lb.ID, exampleapi.SimulatedRequest{ListenerPort: 80, Host: "a.example", Path: "/web"})
	if err != nil || out.Status != http.StatusOK || out.Rule != "web" || out.RuleSet != "team-b" || out.RulePriority != 0 {
		t.Errorf("a request for /web: %+v, %v", out, err)
	}
	if err := cl.DeleteRuleSet(context.Background(), lb.ID, "team-b"); err != nil {
		t.Fatal(err)
	}
	// team-a has no rules: the listener has none, and forwards to the
	// load balancer's own targets, which it has not.
	if out, err := cl.SimulateRequests(context.Background(), lb.ID, exampleapi.SimulatedRequest{ListenerPort: 80, Path: "/web"}); err != nil ||
		out.Status != http.StatusServiceUnavailable || out.Rule != "" {
		t.Errorf("after the set's delete: %+v, %v", out, err)
	}
	c.apiError(http.StatusNotFound, "DELETE", path+"team-b", nil)
}

// What the cloud refuses of a rule set, and the load balancer and pool
// changes a set refuses: each answer names the field or the set.
func TestRuleSetRefusals(t *testing.T) {
	_, c, pool, spec := ruleSetSetup(t)
	spec.Listeners = append(spec.Listeners, exampleapi.Listener{Protocol: "http", Port: 8080, TargetPort: 30080},
		exampleapi.Listener{Protocol: "tcp", Port: 5432, TargetPort: 30432})
	spec.Rules = []exampleapi.Rule{{Name: "db", ListenerPort: 5432, Priority: 1, Backends: []exampleapi.RuleBackend{backend(pool, 30432, 1)}}}
	lb := c.lbs().create(spec)
	path := "/v1/load-balancers/" + lb.ID + "/rule-sets/"
	rules := func(edit func(*exampleapi.Rule)) exampleapi.PutRuleSetRequest {
		r := keyed("api", "k1", pool)
		edit(&r)
		return exampleapi.PutRuleSetRequest{Rules: []exampleapi.Rule{r}}
	}
	for _, tc := range []struct {
		name, set string
		req       exampleapi.PutRuleSetRequest
		status    int
		field     string
		message   string
	}{
		{"set name", "a%20b", rules(func(*exampleapi.Rule) {}), 400, "name", `"a b" is not a rule set name`},
		{"no key", "s", rules(func(r *exampleapi.Rule) { r.OrderKey = "" }), 400, "rules[0].order_key", "is required"},
		{"a priority", "s", rules(func(r *exampleapi.Rule) { r.Priority = 3 }), 400, "rules[0].priority", "have no priority"},
		{"a bad key", "s", rules(func(r *exampleapi.Rule) { r.OrderKey = "a b" }), 400, "rules[0].order_key", "is not an order key"},
		{"two rules named alike", "s", exampleapi.PutRuleSetRequest{Rules: []exampleapi.Rule{keyed("api", "a", pool), keyed("api", "b", pool)}},
			400, "rules[1].name", "unique per rule set"},
		{"not a port", "s", rules(func(r *exampleapi.Rule) { r.ListenerPort = 0 }), 400, "rules[0].listener_port", "0 is not a port"},
		{"a tcp listener", "s", rules(func(r *exampleapi.Rule) { r.ListenerProtocol = "tcp" }), 400,
			"rules[0].listener_protocol", `"tcp": a rule set's rules route http and https listeners only`},
		{"no such pool", "s", rules(func(r *exampleapi.Rule) { r.Backends[0].TargetPoolID = "tp-missing" }), 400,
			"rules[0].backends[0].target_pool_id", `target pool "tp-missing" does not exist`},
		{"past the load balancer's rules", "s", manyRules(exampleapi.MaxRules, pool), 409, "", "would have 2001 rules"},
	} {
		e := c.apiError(tc.status, "PUT", path+tc.set, tc.req)
		if e.Field != tc.field || !strings.Contains(e.Message, tc.message) {
			t.Errorf("%s: %+v, want field %q and %q", tc.name, e, tc.field, tc.message)
		}
	}

	// A set's rules route the listener of their port once there is one,
	// nothing before: a set and the listeners change in either order.
	c.must(http.StatusCreated, "PUT", path+"team-a", rules(func(r *exampleapi.Rule) { r.ListenerPort = 9000 }), nil)
	c.must(http.StatusOK, "PUT", path+"team-a", rules(func(r *exampleapi.Rule) { r.ListenerPort = 8080 }), nil)
	upd := lb.LoadBalancerSettings
	upd.Listeners, upd.Rules = upd.Listeners[:1:1], nil
	c.must(http.StatusOK, "PUT", "/v1/load-balancers/"+lb.ID, upd, nil) // 8080 goes from under the set
	upd.Listeners = lb.Listeners
	upd.Rules = manyRules(exampleapi.MaxRules, pool).Rules
	if e := c.apiError(http.StatusConflict, "PUT", "/v1/load-balancers/"+lb.ID, upd); !strings.Contains(e.Message, "would have 2001 rules") {
		t.Errorf("the load balancer's own rules past the budget with its set's: %+v", e)
	}
	if e := c.apiError(http.StatusConflict, "DELETE", "/v1/target-pools/"+pool, nil); !strings.Contains(e.Message, "1 load balancer ("+lb.ID+")") {
		t.Errorf("a pool a set forwards to: %+v", e)
	}
	if e := c.apiError(http.StatusConflict, "DELETE", "/v1/load-balancers/"+lb.ID, nil); !strings.Contains(e.Message, "still has 1 rule sets (team-a)") {
		t.Errorf("a load balancer with a set: %+v", e)
	}
	c.must(http.StatusNoContent, "DELETE", path+"team-a", nil, nil)
	c.must(http.StatusNoContent, "DELETE", "/v1/load-balancers/"+lb.ID, nil, nil)
}

// manyRules is a set of n keyed rules of listener 80 forwarding to pool.
func manyRules(n int, pool string) exampleapi.PutRuleSetRequest {
	var req exampleapi.PutRuleSetRequest
	for i := range n {
		req.Rules = append(req.Rules, keyed(fmt.Sprintf("r%d", i), "k", pool))
	}
	return req
}

// A load balancer's own rule is numbered or keyed, keyed only on http and
// https listeners; keyed rules share no priority.
func TestLoadBalancerRuleOrder(t *testing.T) {
	_, c, pool, spec := ruleSetSetup(t)
	spec.Listeners = append(spec.Listeners, exampleapi.Listener{Protocol: "tcp", Port: 5432, TargetPort: 30432})
	spec.Rules = []exampleapi.Rule{keyed("a", "k", pool), keyed("b", "k", pool)}
	c.lbs().create(spec) // two keyed rules, the same key, no priority
	for _, tc := range []struct {
		name, message string
		rule          exampleapi.Rule
	}{
		{"neither", "out of range", exampleapi.Rule{Name: "x", ListenerPort: 80}},
		{"both", "is exclusive with priority", exampleapi.Rule{Name: "x", ListenerPort: 80, Priority: 1, OrderKey: "k"}},
		{"a key on tcp", "is not allowed on listener tcp/5432", exampleapi.Rule{Name: "x", ListenerPort: 5432, OrderKey: "k",
			Backends: []exampleapi.RuleBackend{backend(pool, 30432, 1)}}},
	} {
		spec.Name, spec.Rules = "refused", []exampleapi.Rule{tc.rule}
		if e := c.apiError(http.StatusBadRequest, "POST", "/v1/load-balancers", spec); !strings.Contains(e.Message, tc.message) {
			t.Errorf("%s: %+v", tc.name, e)
		}
	}
}

// A pool of pod targets that only a rule set forwards to is the load
// balancer's as much as one its own rules name: its targets' health, what
// a pod's readiness gate waits for, comes from that load balancer.
func TestRuleSetPoolHealth(t *testing.T) {
	cl, c, lb, _ := routingSetup(t)
	ctx := context.Background()
	node := c.createInstance(instanceReq("node-pods", "ex-west-1a"))
	nets, err := cl.ListNetworks(ctx, "ex-west-1", "default")
	if err != nil || len(nets) != 1 {
		t.Fatalf("networks: %v %v", nets, err)
	}
	if _, err := cl.CreateRoute(ctx, nets[0].ID, exampleapi.CreateRouteRequest{DestinationCIDR: "10.244.1.0/24", TargetInstanceID: node.ID}); err != nil {
		t.Fatal(err)
	}
	tp, err := cl.CreateTargetPool(ctx, exampleapi.CreateTargetPoolRequest{Name: "pods", Region: "ex-west-1",
		TargetType: exampleapi.TargetTypeIP, Targets: []string{"10.244.1.10:8080"}})
	if err != nil {
		t.Fatal(err)
	}
	rule := keyed("api", "k", tp.ID)
	rule.Backends[0].Port = 0
	if _, err := cl.PutRuleSet(ctx, lb.ID, "team-a", exampleapi.PutRuleSetRequest{Rules: []exampleapi.Rule{rule}}, 0); err != nil {
		t.Fatal(err)
	}
	h, err := cl.TargetPoolHealth(ctx, tp.ID)
	if err != nil {
		t.Fatal(err)
	}
	if len(h.LoadBalancerIDs) != 1 || h.LoadBalancerIDs[0] != lb.ID || len(h.Targets) != 1 ||
		h.Targets[0].Health != exampleapi.TargetHealthy || h.Targets[0].Reason != lb.ID+": routed" {
		t.Errorf("pool health: %+v", h)
	}
}
