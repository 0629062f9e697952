package engine_test

import (
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/example/cloud-provider-example/engine"
	"github.com/example/cloud-provider-example/exampleapi"
	"github.com/example/cloud-provider-example/internal/testkit"
	"github.com/example/cloud-provider-example/lbmodel"
	"github.com/example/cloud-provider-example/objectref"
	"github.com/example/cloud-provider-example/renderer"
)

// A route's rules in a workspace of their own (ADR 28): applied as a rule
// set on the Gateway's load balancer, ordered by key among the load
// balancer's own keyed rules; a change of the route is a plan of its set
// alone, the load balancer untouched; unchanged, no terraform process;
// the cloud refuses the load balancer's destroy while the set is there,
// and the set's destroy, rendered from its identity alone, lets it go.
func TestRuleSet(t *testing.T) {
	f := newFixture(t, 1)
	ctx := testkit.Context(t)
	pool, err := f.api.CreateTargetPool(ctx, exampleapi.CreateTargetPoolRequest{Name: "web", Region: region})
	testkit.Must(t, err)
	fixed := func(code int) *lbmodel.FixedResponse { return &lbmodel.FixedResponse{StatusCode: code} }
	gw := lbmodel.LoadBalancer{Namespace: "infra", Name: "gw", UID: "uid-gw",
		Listeners: []lbmodel.Listener{{Protocol: "http", Port: 80}},
		Rules:     []lbmodel.Rule{{Name: "catch-all", ListenerPort: 80, OrderKey: "9", FixedResponse: fixed(404)}}}
	lb, _, err := f.eng.ReconcileGateway(ctx, gw, nil, auto)
	testkit.Must(t, err)

	set := lbmodel.RuleSet{GatewayNamespace: "infra", Gateway: "gw", RouteKind: objectref.KindHTTPRoute, RouteNamespace: "shop",
		Route: "web", LoadBalancerID: lb.ID, Rules: []lbmodel.Rule{
			{Name: "shop-web-0", ListenerPort: 80, OrderKey: "1", Hostname: "shop.example.com", PathType: "prefix", Path: "/",
				Backends: []lbmodel.Backend{{TargetPoolID: pool.ID, Port: 30080, Weight: 1}}}}}
	obj := engine.PolicyObject{Kind: objectref.KindRuleSet, Namespace: "infra", Name: set.Ref().Name}
	if _, _, err := f.eng.PreviewRuleSet(ctx, set, obj, "shop"); !errors.Is(err, engine.ErrNoState) {
		t.Fatalf("a preview before the set's first plan: %v, want ErrNoState", err)
	}
	// An apply killed after the cloud made the set left it out of the
	// state: the first apply takes it over, its rules the route's.
	_, err = f.api.PutRuleSet(ctx, lb.ID, renderer.RuleSetName(set.Ref()), exampleapi.PutRuleSetRequest{Rules: []exampleapi.Rule{{
		Name: "left", ListenerPort: 80, OrderKey: "0", FixedResponse: &exampleapi.FixedResponse{StatusCode: 418}}}}, 0)
	testkit.Must(t, err)
	out, err := f.eng.ReconcileRuleSet(ctx, set, auto)
	testkit.Must(t, err)
	if s := out.Applied.Summary; s.Add != 1 || !strings.Contains(out.Applied.Text, "example_load_balancer_rule_set") {
		t.Fatalf("first apply: %s\n%s", s, out.Applied.Text)
	}
	answer := func(host string) exampleapi.RequestOutcome {
		t.Helper()
		o, err := f.api.SimulateRequests(ctx, lb.ID, exampleapi.SimulatedRequest{ListenerPort: 80, Host: host, Path: "/"})
		testkit.Must(t, err)
		return *o
	}
	// The set's key "1" sorts before the load balancer's catch-all "9".
	if o := answer("shop.example.com"); o.Status != 503 || o.Rule != "shop-web-0" || o.RuleSet == "" {
		t.Fatalf("shop.example.com: %+v (want the set's rule: a pool without targets answers 503)", o)
	}
	if o := answer("other.example.com"); o.Status != 404 || o.Rule != "catch-all" {
		t.Fatalf("other.example.com: %+v", o)
	}

	// The route changes: its set is updated in place, the load balancer
	// is not written.
	version := f.cloudLB(t, lb.ID).Version
	set.Rules[0].FixedResponse, set.Rules[0].Backends = fixed(410), nil
	sp, _, err := f.eng.PreviewRuleSet(ctx, set, obj, "shop")
	if err != nil || !sp.HasChanges || sp.Summary.Change != 1 || sp.Summary.Add != 0 {
		t.Fatalf("the change previewed: %+v, %v; want one in-place change", sp, err)
	}
	out, err = f.eng.ReconcileRuleSet(ctx, set, auto)
	testkit.Must(t, err)
	if s := out.Applied.Summary; s.Add != 0 || s.Change != 1 || s.Remove != 0 {
		t.Fatalf("route change: %s; want one in-place change", s)
	}
	if o := answer("shop.example.com"); o.Status != 410 {
		t.Fatalf("after the change: %+v", o)
	}
	if v := f.cloudLB(t, lb.ID).Version; v != version {
		t.Errorf("the load balancer was written (version %d, was %d)", v, version)
	}
	before := f.eng.Runner().Processes()
	if _, err := f.eng.ReconcileRuleSet(ctx, set, auto); err != nil {
		t.Fatal(err)
	}
	if after := f.eng.Runner().Processes(); after["plan"] != before["plan"] || after["apply"] != before["apply"] {
		t.Errorf("unchanged rule set: terraform processes %v then %v", before, after)
	}

	// The load balancer cannot go before its set; the set's destroy, by
	// its identity alone (a new engine knows no rendering), lets it.
	if _, err := f.eng.RemoveGateway(ctx, gw, auto); err == nil || !strings.Contains(err.Error(), "rule set") {
		t.Fatalf("the Gateway removed under its route's rule set: %v", err)
	}
	fresh := f.engine(t, 1, engine.Options{PlanText: true})
	if _, err := fresh.DestroyRuleSet(ctx, set.Ref(), auto); err != nil {
		t.Fatal(err)
	}
	sets, err := f.api.ListRuleSets(ctx, lb.ID)
	testkit.Must(t, err)
	if len(sets) != 0 {
		t.Fatalf("rule sets after the destroy: %+v", sets)
	}
	if _, err := f.eng.RemoveGateway(ctx, gw, auto); err != nil {
		t.Fatal(err)
	}
}

// A route's rules moving from the Gateway's load balancer to their set
// (docs/adr/0028): the load balancer says which routes' rules it holds
// (held_routes); the set may hold the same rule under the same key while
// the load balancer still does, which answers first; once the load
// balancer lets go, the set answers. A root without the output (rendered
// before rule sets) held every route's.
func TestRouteRulesMoveToTheirSet(t *testing.T) {
	f := newFixture(t, 1)
	ctx := testkit.Context(t)
	web := lbmodel.Rule{Name: "shop-web-0", ListenerPort: 80, OrderKey: "1", Hostname: "shop.example.com", PathType: "prefix", Path: "/",
		FixedResponse: &lbmodel.FixedResponse{StatusCode: 410}, Route: &lbmodel.RouteRef{Kind: objectref.KindHTTPRoute, Namespace: "shop", Name: "web"}}
	catchAll := lbmodel.Rule{Name: "catch-all", ListenerPort: 80, OrderKey: "9", FixedResponse: &lbmodel.FixedResponse{StatusCode: 404}}
	gw := lbmodel.LoadBalancer{Namespace: "infra", Name: "gw", UID: "uid-gw", Listeners: []lbmodel.Listener{{Protocol: "http", Port: 80}},
		Rules: []lbmodel.Rule{catchAll, web}}
	lb, _, err := f.eng.ReconcileGateway(ctx, gw, nil, auto)
	testkit.Must(t, err)
	if !slices.Equal(lb.HeldRoutes, []string{"HTTPRoute/shop/web"}) || lb.AllRoutesHeld {
		t.Fatalf("held routes %q (all: %v), want shop/web's", lb.HeldRoutes, lb.AllRoutesHeld)
	}
	answer := func() exampleapi.RequestOutcome {
		t.Helper()
		o, err := f.api.SimulateRequests(ctx, lb.ID, exampleapi.SimulatedRequest{ListenerPort: 80, Host: "shop.example.com", Path: "/"})
		testkit.Must(t, err)
		return *o
	}
	set := lbmodel.RuleSet{GatewayNamespace: "infra", Gateway: "gw", RouteKind: objectref.KindHTTPRoute, RouteNamespace: "shop",
		Route: "web", LoadBalancerID: lb.ID, Rules: []lbmodel.Rule{web}}
	_, err = f.eng.ReconcileRuleSet(ctx, set, auto)
	testkit.Must(t, err)
	if o := answer(); o.Status != 410 || o.Rule != "shop-web-0" || o.RuleSet != "" {
		t.Fatalf("held twice: %+v; want the load balancer's rule", o)
	}
	gw.Rules = []lbmodel.Rule{catchAll}
	lb, _, err = f.eng.ReconcileGateway(ctx, gw, nil, auto)
	testkit.Must(t, err)
	if len(lb.HeldRoutes) != 0 || lb.AllRoutesHeld {
		t.Fatalf("held routes %q (all: %v) after the move, want none", lb.HeldRoutes, lb.AllRoutesHeld)
	}
	if o := answer(); o.Status != 410 || o.Rule != "shop-web-0" || o.RuleSet == "" {
		t.Fatalf("after the move: %+v; want the set's rule", o)
	}
	if routes, all := engine.HeldRoutes(map[string]json.RawMessage{"id": json.RawMessage(`"lb-1"`)}); routes != nil || !all {
		t.Fatalf("outputs without held_routes: %q, %v; want every route's", routes, all)
	}
	_, err = f.eng.DestroyRuleSet(ctx, set.Ref(), auto)
	testkit.Must(t, err)
	_, err = f.eng.RemoveGateway(ctx, gw, auto)
	testkit.Must(t, err)
}
