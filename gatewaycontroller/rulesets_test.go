package gatewaycontroller

import (
	"maps"
	"slices"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/workqueue"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/example/cloud-provider-example/annotations"
	"github.com/example/cloud-provider-example/engine"
	"github.com/example/cloud-provider-example/gateway"
	"github.com/example/cloud-provider-example/lbmodel"
	"github.com/example/cloud-provider-example/objectref"
	"github.com/example/cloud-provider-example/records"
)

// A route's rules go to its rule set, the Gateway's own stay on its load
// balancer (ADR 28): the sets are applied after it, with its id, so
// its fences are in place before a route's new rules; an unchanged set
// is not applied again; a route gone has its set destroyed; a set
// waiting for approval has the Gateway looked at again soon; each route
// is told where its rules stand (rulestatus.go); the Gateway
// removed, its sets go before its load balancer.
func TestProgramRuleSets(t *testing.T) {
	gw, tr := twoRoutes()
	eng, rv := &fakeEngine{lb: &engine.LoadBalancer{ID: "lb-1", IPv4: "203.0.113.7", Status: "active"}}, &fakeReview{}
	c := &Controller{gw: newClient(t, gw), services: serviceLister(t), cloud: &Cloud{Engine: eng, Review: rv,
		Settings: Settings{Policy: annotations.ApplyAuto}, Infra: fakeInfra{}}}

	p, err := c.program(t.Context(), gw, nil, tr)
	if err != nil || !p.ok {
		t.Fatalf("first program: %+v, %v", p, err)
	}
	if len(eng.built) != 1 || len(eng.built[0].Rules) != 1 || eng.built[0].Rules[0].Name != catchAll.Name {
		t.Fatalf("the load balancer was built with %+v; want its own catch-all alone", eng.built)
	}
	// A new load balancer: no pass before it, one after.
	if got := setNames(eng.sets); !slices.Equal(got, []string{"lb-1 gw:HTTPRoute:team-a:shop 2", "lb-1 gw:HTTPRoute:team-b:web 1"}) {
		t.Fatalf("rule sets applied: %q", got)
	}
	if eng.sets[0].Rules[0].Backends[0].TargetPoolID != "tp-all" {
		t.Errorf("a set's backend forwards to %q, want the pool of every node", eng.sets[0].Rules[0].Backends[0].TargetPoolID)
	}
	shop := gateway.RouteKey{Kind: gateway.KindHTTPRoute, NamespacedName: types.NamespacedName{Namespace: "team-a", Name: "shop"}}
	web := gateway.RouteKey{Kind: gateway.KindHTTPRoute, NamespacedName: types.NamespacedName{Namespace: "team-b", Name: "web"}}
	told := func(p programmed, want map[gateway.RouteKey]string) {
		t.Helper()
		got := map[gateway.RouteKey]string{}
		for k, st := range p.rules.by {
			got[k] = st.reason
		}
		if !p.rules.synced || !maps.Equal(got, want) {
			t.Errorf("routes told %v (synced %v), want %v", got, p.rules.synced, want)
		}
	}
	told(p, map[gateway.RouteKey]string{shop: RulesApplied, web: RulesApplied})

	// team-b/web goes: its set is destroyed; shop's, unchanged, is
	// neither rendered nor reviewed again.
	eng.sets = nil
	tr.Rules = tr.Rules[1:]
	if p, err = c.program(t.Context(), gw, nil, tr); err != nil || !p.ok {
		t.Fatalf("second program: %+v, %v", p, err)
	}
	told(p, map[gateway.RouteKey]string{shop: RulesApplied}) // unchanged, not applied again: still applied
	webRef := objectref.RuleSet("infra", "gw", "HTTPRoute", "team-b", "web")
	if len(eng.sets) != 0 || !slices.Equal(eng.destroyed, []objectref.Ref{webRef}) {
		t.Fatalf("rule sets applied %q, destroyed %v; want none applied, web's destroyed", setNames(eng.sets), eng.destroyed)
	}

	// shop changes: its set is applied once, after the load balancer,
	// whose fences and catch-alls must be in place before a route's new
	// rules take requests.
	eng.calls = nil
	tr.Rules = append(tr.Rules, routeRule("team-a/shop/2.0:80", "4", shopRoute))
	if p, err := c.program(t.Context(), gw, nil, tr); err != nil || !p.ok {
		t.Fatalf("third program: %+v, %v", p, err)
	}
	if got := setNames(eng.sets); !slices.Equal(got, []string{"lb-1 gw:HTTPRoute:team-a:shop 3"}) || !slices.Equal(eng.calls, []string{"lb", "set"}) {
		t.Fatalf("rule sets applied %q, calls %v; want shop's once, after the load balancer", got, eng.calls)
	}

	// A set waiting for an approval: the load balancer is programmed, the
	// Gateway looked at again soon, and the set reconciled again then
	// (what it waits for is not applied).
	eng.sets = nil
	eng.setErr = &engine.AwaitingApprovalError{PlanID: "plan-0123456789ab", Policy: annotations.ApplyManual}
	tr.Rules = tr.Rules[:len(tr.Rules)-1]
	for range 2 {
		if p, err = c.program(t.Context(), gw, nil, tr); err != nil || !p.ok || p.retry != approvalRetry {
			t.Fatalf("a set awaiting approval: %+v, %v; want programmed, retry %s", p, err, approvalRetry)
		}
		told(p, map[gateway.RouteKey]string{shop: RulesAwaitingApproval})
	}
	if got := setNames(eng.sets); len(got) != 2 {
		t.Fatalf("a set awaiting approval was reconciled %d times in two looks, want 2 (once a look)", len(got))
	}

	// Removed: its set first, then its load balancer.
	eng.setErr, eng.destroyed = nil, nil
	if gone, err := c.destroy(t.Context(), gw); err != nil || !gone {
		t.Fatalf("destroy: %v, %v", gone, err)
	}
	if !slices.Equal(eng.destroyed, []objectref.Ref{objectref.RuleSet("infra", "gw", "HTTPRoute", "team-a", "shop")}) || eng.removed != 1 {
		t.Fatalf("destroyed %v, load balancers removed %d", eng.destroyed, eng.removed)
	}
}

// A controller that starts learns the rule sets from the plan records: a
// Gateway removed while it did not run has them destroyed first.
func TestRuleSetsFromRecords(t *testing.T) {
	gw := &gatewayv1.Gateway{ObjectMeta: metav1.ObjectMeta{Namespace: "infra", Name: "gw", UID: "uid-gw"}}
	set := objectref.RuleSet("infra", "gw", "HTTPRoute", "team-a", "shop")
	other := objectref.RuleSet("infra", "other", "HTTPRoute", "team-a", "shop")
	eng := &fakeEngine{}
	rv := &fakeReview{records: []*records.Record{{Object: set}, {Object: other}, {Object: objectref.Gateway("infra", "gw", "uid-gw")}}}
	c := &Controller{gw: newClient(t, gw), cloud: &Cloud{Engine: eng, Review: rv, Settings: Settings{Policy: annotations.ApplyAuto}}}
	c.queue = workqueue.NewTypedRateLimitingQueue(workqueue.DefaultTypedControllerRateLimiter[key]())
	defer c.queue.ShutDown()
	if err := c.readRecords(t.Context()); err != nil {
		t.Fatal(err)
	}
	if gone, err := c.destroy(t.Context(), gw); err != nil || !gone || !slices.Equal(eng.destroyed, []objectref.Ref{set}) {
		t.Fatalf("destroy: %v, %v; destroyed %v, want infra/gw's set alone", gone, err, eng.destroyed)
	}
}

// The routes of twoRoutes, and its listener's catch-all.
var (
	shopRoute = &lbmodel.RouteRef{Kind: "HTTPRoute", Namespace: "team-a", Name: "shop"}
	webRoute  = &lbmodel.RouteRef{Kind: "HTTPRoute", Namespace: "team-b", Name: "web"}
	catchAll  = gateway.Rule{Name: "listener/http:80", ListenerPort: 80, OrderKey: "9", FixedResponse: &lbmodel.FixedResponse{StatusCode: 404}}
)

// twoRoutes is a Gateway of one http listener, and its translation: one
// rule of team-b/web, two of team-a/shop, then the listener's catch-all.
func twoRoutes() (*gatewayv1.Gateway, gateway.Translation) {
	gw := &gatewayv1.Gateway{ObjectMeta: metav1.ObjectMeta{Namespace: "infra", Name: "gw", UID: "uid-gw"},
		Spec: gatewayv1.GatewaySpec{GatewayClassName: "example", Listeners: []gatewayv1.Listener{{Name: "http", Port: 80, Protocol: gatewayv1.HTTPProtocolType}}}}
	return gw, gateway.Translation{Rules: []gateway.Rule{routeRule("team-b/web/0.0:80", "1", webRoute),
		routeRule("team-a/shop/0.0:80", "2", shopRoute), routeRule("team-a/shop/1.0:80", "3", shopRoute), catchAll}}
}

// routeRule is route's rule name on the http listener, ordered by key.
func routeRule(name, key string, route *lbmodel.RouteRef) gateway.Rule {
	return gateway.Rule{Name: name, ListenerPort: 80, OrderKey: key, Route: route, Backends: []gateway.Backend{{Port: 30001, Weight: 1}}}
}

// setNames are "<load balancer> <set name> <rules>" of sets, sorted:
// the sets of one pass are applied at once.
func setNames(sets []lbmodel.RuleSet) []string {
	var out []string
	for _, s := range sets {
		out = append(out, s.LoadBalancerID+" "+s.Ref().Name+" "+string(rune('0'+len(s.Rules))))
	}
	slices.Sort(out)
	return out
}
