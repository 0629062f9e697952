package gateway

// Cases a second reviewing helper wrote against ADR 33's first evictions
// (0295f9b), reading them as a hostile tenant: each failed there.

import (
	"fmt"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/example/cloud-provider-example/exampleapi"
)

// emptyGRPC is a GRPCRoute of ns/name created age before t0 with host
// names hosts and no rules (the CRD allows none: no MinItems, no
// default), read as an HTTPRoute.
func emptyGRPC(ns, name string, age time.Duration, hosts []string) *gatewayv1.HTTPRoute {
	r := &gatewayv1.GRPCRoute{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, CreationTimestamp: metav1.NewTime(t0.Add(-age))},
		Spec: gatewayv1.GRPCRouteSpec{CommonRouteSpec: gatewayv1.CommonRouteSpec{ParentRefs: []gatewayv1.ParentReference{
			{Name: "gw", Namespace: ptr.To(gatewayv1.Namespace("infra"))}}}}}
	for _, h := range hosts {
		r.Spec.Hostnames = append(r.Spec.Hostnames, gatewayv1.Hostname(h))
	}
	return GRPCRoute(r)
}

func grpcParent(t *testing.T, tr Translation, ns, name string) Parent {
	t.Helper()
	ps := tr.Parents[RouteKey{Kind: KindGRPCRoute, NamespacedName: types.NamespacedName{Namespace: ns, Name: name}}]
	if len(ps) != 1 {
		t.Fatalf("GRPCRoute %s/%s: parents %+v, want one", ns, name, ps)
	}
	return ps[0]
}

// A GRPCRoute with host names and no rules serves (claims) its names and
// adds no rule: each name counts one in its namespace's share, as an idle
// one. Before, they cost nothing, yet each was fenced beneath the
// platform's catch-all by a 404 counted in no share: one tenant's 130
// such routes (16 names each) claimed 1,984 names, share 0, and filled
// the budget; a newer team's 20 rules were refused.
func TestRulelessRoutesNamesCountInTheShare(t *testing.T) {
	routes := []*gatewayv1.HTTPRoute{route("infra", "default", 48*time.Hour, "", nil, rule(nil, to("svc-a", 1)))}
	for i := range 130 {
		var hosts []string
		for k := range 16 {
			hosts = append(hosts, fmt.Sprintf("n%d-%d.team-x.example", i, k))
		}
		routes = append(routes, emptyGRPC("team-x", fmt.Sprintf("g%03d", i), 2*time.Hour-time.Duration(i)*time.Second, hosts))
	}
	routes = append(routes, hostsAndPaths("team-n", "new", time.Minute, 1, 20))
	l := &looks{gw: sharedGateway()}
	tr := l.at(t0, routes, nil)
	acceptedX := 0
	for i := range 130 {
		if grpcParent(t, tr, "team-x", fmt.Sprintf("g%03d", i)).Accepted.Reason == "Accepted" {
			acceptedX++
		}
	}
	held := 0
	for _, c := range tr.Claims.Hosts {
		if c.Namespace == "team-x" {
			held++
		}
	}
	if held > MaxTenantRules {
		t.Errorf("team-x holds %d names with rule-less GRPCRoutes, past its share of %d (each name's 404 counts in no share)", held, MaxTenantRules)
	}
	if p := httpParent(t, tr, "team-n", "new"); p.Accepted.Reason != "Accepted" {
		t.Errorf("team-n/new (20 rules, newer): %s: %s", p.Accepted.Reason, p.Accepted.Message[:120])
	}
	if len(tr.Rules) > exampleapi.MaxRules {
		t.Errorf("%d rules", len(tr.Rules))
	}
}

// A route with a catch-all for its namespace's own names makes the copies
// of that namespace's rules without a host name unneeded there: refusing
// it RAISES the share. team-m: 19 names (names, 19 rules), a rule without
// a host name of 9 paths (w), fix (a catch-all for the 19 names and for
// its wildcard *.z.team-m.example: 20), 77 names under the wildcard in 7
// routes (q0…q6, 77 rules): 125. team-y's newer rule without a host name
// makes a copy of fix's wildcard catch-all for each of the 77: 202.
// Refusing w (9 rules) would leave 193. Evictions refused fix, the only
// "costly" route (w's rules are copied nowhere while fix is there), which
// made 19 x 9 + 77 x 9 copies of w (team-m at 969), then w: three tries,
// and fix, the route that kept the share low, refused at every look. Now
// only routes whose refusal lowers the share are refused.
func TestEvictionKeepsARouteThatLowersTheShare(t *testing.T) {
	var hosts []string
	for i := range 19 {
		hosts = append(hosts, fmt.Sprintf("h%d.team-m.example", i))
	}
	routes := []*gatewayv1.HTTPRoute{
		hostsAndPaths("team-m", "names", 10*time.Hour, 19, 1),
		route("team-m", "w", 9*time.Hour, "", nil, paths(9)),
		route("team-m", "fix", 8*time.Hour, "", append(hosts, "*.z.team-m.example"), rule(nil, to("svc-a", 1))),
	}
	for r := range 7 {
		var qs []string
		for i := range 11 {
			qs = append(qs, fmt.Sprintf("q%d-%d.z.team-m.example", r, i))
		}
		routes = append(routes, route("team-m", fmt.Sprintf("q%d", r), 7*time.Hour-time.Duration(r)*time.Minute, "", qs,
			rule([]gatewayv1.HTTPRouteMatch{prefix("/q")}, to("svc-a", 1))))
	}
	l := &looks{gw: sharedGateway()}
	if tr := l.at(t0, routes, nil); len(tr.Rules) != 125 {
		t.Fatalf("before: %d rules, want 125", len(tr.Rules))
	}
	routes = append(routes, route("team-y", "any", time.Hour, "", nil, paths(1)))
	for look := range 2 {
		now := t0.Add(time.Duration(look+1) * time.Minute)
		tr, n := triesOf(l.gw, routes, Boundary{Claims: l.claims, Now: now, Grace: grace})
		l.claims = tr.Claims
		wantAccepted(t, tr, "team-y/any", "team-m/names")
		refused := 0
		for _, r := range routes {
			if r.Namespace == "team-m" && httpParent(t, tr, "team-m", r.Name).Accepted.Reason != "Accepted" {
				refused++
			}
		}
		if p := httpParent(t, tr, "team-m", "fix"); p.Accepted.Reason != "Accepted" || refused > 1 || n > 2 {
			t.Errorf("look %d: %d tries, %d of team-m's routes refused, fix %s; want fix kept and one route refused (w: team-m at 193)",
				look, n, refused, p.Accepted.Reason)
		}
	}
}

// A route serving the names of its namespace's ListenerSet listeners
// leaves them served when it is refused (the listeners keep them, counted
// once in the share), but usedWithout counted each, held before the look,
// one more (idle again). team-m: a ListenerSet of 60 listeners on 9000
// (60 names), pad (30 rules), w2 (a rule without a host name), both (a
// rule on the 60 listeners and without a host name on 80: 61). team-y's
// newer rule without a host name on 80 makes copies: team-m 274. Refusing
// both leaves 60+30+1+61 copies of w2 = 152; the first look refused both
// only, the next (claims kept) w2 too: the recount said 212.
func TestEvictionRecountKeepsListenerSetNames(t *testing.T) {
	var ls []gatewayv1.ListenerEntry
	for i := range 60 {
		ls = append(ls, entry(fmt.Sprintf("n%d", i), 9000, gatewayv1.HTTPProtocolType, fmt.Sprintf("n%d.team-m.example", i)))
	}
	sets := []*gatewayv1.ListenerSet{listenerSet("team-m", "ls", 72*time.Hour, ls...)}
	both := route("team-m", "both", 48*time.Hour, "", nil, rule([]gatewayv1.HTTPRouteMatch{prefix("/x")}, to("svc-a", 1)))
	both.Spec.ParentRefs = append(both.Spec.ParentRefs, gatewayv1.ParentReference{Kind: ptr.To(KindListenerSet), Name: "ls",
		Namespace: ptr.To(gatewayv1.Namespace("team-m"))})
	routes := []*gatewayv1.HTTPRoute{
		hostsAndPaths("team-m", "pad", 50*time.Hour, 1, 30),
		route("team-m", "w2", 49*time.Hour, "", nil, paths(1)),
		both,
		route("team-y", "any", time.Hour, "", nil, paths(1)),
	}
	gw := openGateway()
	var claims Claims
	for look := range 3 {
		tr := Translate(gw, routes, nil, nil, services, Boundary{ListenerSets: sets, Claims: claims, Now: t0.Add(time.Duration(look) * time.Minute), Grace: grace})
		claims = tr.Claims
		wantAccepted(t, tr, "team-y/any", "team-m/pad")
		if p := tr.Parents[RouteKey{Kind: KindHTTPRoute, NamespacedName: types.NamespacedName{Namespace: "team-m", Name: "both"}}][0]; p.Accepted.Reason == "Accepted" {
			t.Errorf("look %d: team-m/both accepted, want refused", look)
		}
		if p := httpParent(t, tr, "team-m", "w2"); p.Accepted.Reason != "Accepted" {
			t.Errorf("look %d: team-m/w2 refused (%s), though team-m holds 152 without both", look, p.Accepted.Reason)
		}
	}
}

// k teams' rules without a host name, each put past its share by one
// newer team's 196 names (404s only, no copies: refusing one team's rule
// changes no other's count), are refused at one try. One namespace a try
// took k+1 tries, each a whole look of the Gateway: 41 here.
func TestEvictionIndependentNamespacesAtOnce(t *testing.T) {
	const k = 40
	var routes []*gatewayv1.HTTPRoute
	for i := range k {
		routes = append(routes, route(fmt.Sprintf("team-a%02d", i), "default", 48*time.Hour, "", nil, paths(5)))
	}
	routes = append(routes, hostsAndPaths("team-h", "names", time.Minute, 196, 1))
	tr, n := triesOf(sharedGateway(), routes, Boundary{Now: t0, Grace: grace})
	wantAccepted(t, tr, "team-h/names")
	if n > 3 {
		t.Errorf("%d tries for %d teams past their shares independently (404s only), want at most 3", n, k)
	}
}

// Beneath the platform's catch-alls a name is fenced by a 404 on every
// port (cookies know no port): its holder pays for each but the first.
// Before, none counted in a share: with the platform's catch-all on 9
// ports, team-x's 192 names of one rule each on one port (share 192)
// made 192 + 9 x 192 rules, and a newer team's route (80 rules and its
// 404s) was refused for the budget.
func TestNamesFencedOnSeveralPortsPayAllButOne(t *testing.T) {
	var ls []gatewayv1.Listener
	var routes []*gatewayv1.HTTPRoute
	for p := range 9 {
		name := fmt.Sprintf("p%d", p)
		ls = append(ls, httpListener(name, int32(8000+p), "", gatewayv1.NamespacesFromAll))
		routes = append(routes, route("infra", "default-"+name, 48*time.Hour, name, nil, rule(nil, to("svc-a", 1))))
	}
	for i := range 12 {
		r := route("team-x", fmt.Sprintf("n%02d", i), 2*time.Hour-time.Duration(i)*time.Minute, "p0", nil, rule([]gatewayv1.HTTPRouteMatch{prefix("/p")}, to("svc-a", 1)))
		for k := range 16 {
			r.Spec.Hostnames = append(r.Spec.Hostnames, gatewayv1.Hostname(fmt.Sprintf("m%d-%d.team-x.example", i, k)))
		}
		routes = append(routes, r)
	}
	newer := hostsAndPaths("team-n", "new", time.Minute, 1, 80)
	newer.Spec.ParentRefs[0].SectionName = ptr.To(gatewayv1.SectionName("p1"))
	routes = append(routes, newer)
	tr := Translate(gateway(ls...), routes, nil, nil, services, Boundary{Now: t0, Grace: grace})
	wantAccepted(t, tr, "team-n/new", "team-x/n00")
	// team-x: a name costs its rule and 8 404s (the first is free): 16
	// names 144, 32 past its share.
	if p := httpParent(t, tr, "team-x", "n01"); p.Accepted.Reason != string(ReasonRuleBudgetExceeded) {
		t.Errorf("team-x/n01: %+v, want refused for its share", p.Accepted)
	}
	if n := len(tr.Rules); n > exampleapi.MaxRules {
		t.Errorf("%d rules", n)
	}
}
