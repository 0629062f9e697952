package gatewaycontroller

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"testing"

	"k8s.io/client-go/util/workqueue"

	"github.com/example/cloud-provider-example/annotations"
	"github.com/example/cloud-provider-example/engine"
	"github.com/example/cloud-provider-example/gateway"
	"github.com/example/cloud-provider-example/lbmodel"
	"github.com/example/cloud-provider-example/objectref"
	"github.com/example/cloud-provider-example/records"
	"github.com/example/cloud-provider-example/renderer"
	"github.com/example/cloud-provider-example/runner"
)

// The first syncs after an upgrade from a controller that kept every
// route's rules in the Gateway's load balancer (no held_routes output):
// the load balancer keeps them while the sets are applied, then drops
// them on the next look, which comes at once. A restart in the middle
// goes on from the plan records.
func TestProgramMovesRoutesRules(t *testing.T) {
	gw, tr := twoRoutes()
	newController := func(eng *fakeEngine, rv *fakeReview) *Controller {
		c := &Controller{gw: newClient(t, gw), services: serviceLister(t), cloud: &Cloud{Engine: eng, Review: rv,
			Settings: Settings{Policy: annotations.ApplyAuto}, Infra: fakeInfra{}}}
		c.queue = workqueue.NewTypedRateLimitingQueue(workqueue.DefaultTypedControllerRateLimiter[key]())
		t.Cleanup(c.queue.ShutDown)
		return c
	}

	eng := &fakeEngine{lb: &engine.LoadBalancer{ID: "lb-1", IPv4: "203.0.113.7", Status: "active", AllRoutesHeld: true}, existing: true}
	c := newController(eng, &fakeReview{})
	p, err := c.program(t.Context(), gw, nil, tr)
	if err != nil || !p.ok || p.retry != moveRetry {
		t.Fatalf("first program: %+v, %v; want programmed, looked at again in %s", p, err, moveRetry)
	}
	if got := ruleNames(eng.built[0]); !slices.Equal(got, []string{"listener/http:80", "team-a/shop/0.0:80", "team-a/shop/1.0:80", "team-b/web/0.0:80"}) {
		t.Fatalf("the load balancer was built with rules %q; want its own and the routes' it holds", got)
	}
	if got := setNames(eng.sets); !slices.Equal(got, []string{"lb-1 gw:HTTPRoute:team-a:shop 2", "lb-1 gw:HTTPRoute:team-b:web 1"}) ||
		!slices.Equal(eng.calls, []string{"lb", "set", "set"}) {
		t.Fatalf("rule sets applied %q, calls %v; want both, after the load balancer", got, eng.calls)
	}
	p, err = c.program(t.Context(), gw, nil, tr)
	if err != nil || !p.ok || p.retry != 0 {
		t.Fatalf("second program: %+v, %v", p, err)
	}
	if got := ruleNames(eng.built[1]); !slices.Equal(got, []string{"listener/http:80"}) || len(eng.sets) != 2 {
		t.Fatalf("the load balancer was built with rules %q, %d sets applied; want its own alone, no set again", got, len(eng.sets))
	}

	// A restart after the load balancer kept shop's rules and web's set
	// was applied: shop's stay until its set is.
	outputs := map[string]json.RawMessage{renderer.HeldRoutesOutput: json.RawMessage(`["HTTPRoute/team-a/shop"]`)}
	rv := &fakeReview{records: []*records.Record{
		{Object: objectref.Gateway("infra", "gw", "uid-gw"), Applied: &runner.LastApply{Outputs: outputs}},
		{Object: objectref.RuleSet("infra", "gw", "HTTPRoute", "team-b", "web"), Applied: &runner.LastApply{}},
		{Object: objectref.RuleSet("infra", "gw", "HTTPRoute", "team-a", "shop")}, // its create failed
	}}
	eng = &fakeEngine{lb: &engine.LoadBalancer{ID: "lb-1", IPv4: "203.0.113.7", Status: "active"}, existing: true}
	c = newController(eng, rv)
	if err := c.readRecords(t.Context()); err != nil {
		t.Fatal(err)
	}
	if p, err := c.program(t.Context(), gw, nil, tr); err != nil || !p.ok || p.retry != moveRetry {
		t.Fatalf("program after the restart: %+v, %v", p, err)
	}
	if got := ruleNames(eng.built[0]); !slices.Equal(got, []string{"listener/http:80", "team-a/shop/0.0:80", "team-a/shop/1.0:80"}) {
		t.Fatalf("after the restart the load balancer was built with rules %q; want its own and shop's", got)
	}
	if _, err := c.program(t.Context(), gw, nil, tr); err != nil || !slices.Equal(ruleNames(eng.built[1]), []string{"listener/http:80"}) {
		t.Fatalf("then: %v, rules %q; want its own alone", err, ruleNames(eng.built[1]))
	}

	if _, err := c.destroy(t.Context(), gw); err != nil {
		t.Fatal(err)
	}
	if _, ok := c.ruleSets.heldFor(gw.UID); ok {
		t.Error("a Gateway destroyed: what its load balancer held is still kept")
	}

	// A Gateway built by this controller holds none: nothing is kept.
	eng = &fakeEngine{lb: &engine.LoadBalancer{ID: "lb-2", IPv4: "203.0.113.8", Status: "active"}}
	c = newController(eng, &fakeReview{})
	if p, err := c.program(t.Context(), gw, nil, tr); err != nil || !p.ok || p.retry != 0 || !slices.Equal(ruleNames(eng.built[0]), []string{"listener/http:80"}) {
		t.Fatalf("a new Gateway: %+v, %v, rules %q; want its own alone", p, err, ruleNames(eng.built[0]))
	}
}

// Which sets a sync keeps in the load balancer and which it applies: as
// many as fit a second time in the cloud's MaxRules; when none does, the
// first is let go.
func TestMoves(t *testing.T) {
	set := func(route string, rules int) lbmodel.RuleSet {
		return lbmodel.RuleSet{GatewayNamespace: "infra", Gateway: "gw", RouteKind: "HTTPRoute", RouteNamespace: "shop", Route: route,
			Rules: make([]lbmodel.Rule, rules)}
	}
	never := func(objectref.Ref) bool { return false }
	for _, tc := range []struct {
		name         string
		h            held
		sets         []lbmodel.RuleSet
		ever         func(objectref.Ref) bool
		kept, moving []string
	}{
		{name: "all held, all fit", h: held{all: true}, sets: []lbmodel.RuleSet{set("a", 2), set("b", 3)}, ever: never,
			kept: []string{"a", "b"}, moving: []string{"a", "b"}},
		{name: "only the held", h: heldOf([]string{"HTTPRoute/shop/b"}, false), sets: []lbmodel.RuleSet{set("a", 2), set("b", 3)}, ever: never,
			kept: []string{"b"}, moving: []string{"b"}},
		{name: "none held", h: heldOf(nil, false), sets: []lbmodel.RuleSet{set("a", 2)}, ever: never},
		{name: "applied before", h: held{all: true}, sets: []lbmodel.RuleSet{set("a", 2), set("b", 3)},
			ever: func(r objectref.Ref) bool { return r == set("a", 0).Ref() }, kept: []string{"b"}, moving: []string{"b"}},
		// 1 + 3 × 400 held; 799 left: one set moves at a time.
		{name: "in batches", h: held{all: true}, sets: []lbmodel.RuleSet{set("a", 400), set("b", 400), set("c", 400)}, ever: never,
			kept: []string{"a", "b", "c"}, moving: []string{"a"}},
		// 1 + 3 × 600 held; 199 left: none fits, a goes first.
		{name: "none fits", h: held{all: true}, sets: []lbmodel.RuleSet{set("a", 600), set("b", 600), set("c", 600)}, ever: never,
			kept: []string{"b", "c"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			kept, moving := moves(tc.h, tc.sets, tc.ever, 1)
			if got := routesOf(kept); !slices.Equal(got, tc.kept) {
				t.Errorf("kept %q, want %q", got, tc.kept)
			}
			if got := routesOf(moving); !slices.Equal(got, tc.moving) {
				t.Errorf("moving %q, want %q", got, tc.moving)
			}
		})
	}
}

// routesOf are the routes of the rule sets in m, sorted.
func routesOf(m map[objectref.Ref]bool) []string {
	var out []string
	for ref := range maps.Keys(m) {
		_, _, _, route, ok := objectref.ParseRuleSetName(ref.Name)
		if !ok {
			panic(fmt.Sprintf("not a rule set: %v", ref))
		}
		out = append(out, route)
	}
	slices.Sort(out)
	return out
}

// ruleNames are lb's rules' names, sorted.
func ruleNames(lb gateway.LoadBalancer) []string {
	var out []string
	for _, r := range lb.Rules {
		out = append(out, r.Name)
	}
	slices.Sort(out)
	return out
}
