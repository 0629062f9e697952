package gateway

// Cases a reviewing helper wrote against the first shares (ADR 32): each
// failed there and holds the corrected rule: copies of a namespace's
// rules count in its share whichever of its names they are made for,
// and no route pays for another team's names.

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"k8s.io/utils/ptr"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"
)

// Held names no route serves (here: ListenerSet listeners' names on a
// port of their own) get copies of their holder's own rules without a
// host name where the platform's catch-all is: the copies count in the
// holder's share, so team-m cannot fill the budget with 84 of it and
// refuse team-a's newer route.
func TestUnservedNamesCopiesCountInTheShare(t *testing.T) {
	platform := route("infra", "default", 6*time.Hour, "http", nil, rule(nil, to("svc-a", 1)))
	var ls []gatewayv1.ListenerEntry
	for k := range 42 {
		ls = append(ls, entry(fmt.Sprintf("l%d", k), 9000, gatewayv1.HTTPProtocolType, fmt.Sprintf("n%d.team-m.example", k)))
	}
	sets := []*gatewayv1.ListenerSet{listenerSet("team-m", "names", 3*time.Hour, ls...)}
	wide := route("team-m", "wide", 2*time.Hour, "http", nil, paths(42))
	late := hostsAndPaths("team-a", "late", time.Hour, 1, 190)
	tr := Translate(openGateway(), []*gatewayv1.HTTPRoute{platform, wide, late}, nil, nil, services, Boundary{ListenerSets: sets, Now: t0, Grace: grace})
	t.Logf("team-m/wide: %+v", httpParent(t, tr, "team-m", "wide").Accepted)
	t.Logf("%d rules", len(tr.Rules))
	if n := len(tr.Rules); n > 1+191+MaxTenantRules {
		t.Errorf("%d rules: team-m's 42 names and 42 rules (84 of its share) make %d, past its share of %d", n, n-1, MaxTenantRules)
	}
	if p := httpParent(t, tr, "team-a", "late"); p.Accepted.Reason != "Accepted" {
		t.Errorf("team-a/late: %+v, want Accepted (team-a holds nothing; team-m's share is %d)", p.Accepted, MaxTenantRules)
	}
}

// The same with names in their grace (a route deleted at the last look).
func TestIdleNamesCopiesCountInTheShare(t *testing.T) {
	platform := route("infra", "default", 6*time.Hour, "", nil, rule(nil, to("svc-a", 1)))
	claims := Claims{Hosts: map[string]HostClaim{}}
	for i := range 42 {
		claims.Hosts[fmt.Sprintf("h%d.team-m.example", i)] = HostClaim{Namespace: "team-m", Since: t0.Add(-time.Hour), ReleasedAt: ptr.To(t0.Add(-time.Minute))}
	}
	wide := route("team-m", "wide", 2*time.Hour, "", nil, paths(42))
	late := hostsAndPaths("team-a", "late", time.Hour, 1, 190)
	tr := (&looks{gw: sharedGateway(), claims: claims}).at(t0, []*gatewayv1.HTTPRoute{platform, wide, late}, nil)
	t.Logf("team-m/wide: %+v; %d rules", httpParent(t, tr, "team-m", "wide").Accepted, len(tr.Rules))
	if n := len(tr.Rules); n > 1+MaxTenantRules+191 {
		t.Errorf("%d rules, team-m's 84 of its share making %d", n, n-1)
	}
	if p := httpParent(t, tr, "team-a", "late"); p.Accepted.Reason != "Accepted" {
		t.Errorf("team-a/late: %+v, want Accepted", p.Accepted)
	}
}

// Names a TLSRoute serves (SNI) are held, so fenced (with copies of
// team-m's rules without a host name) on the HTTP listener beside the
// platform's catch-all: served by no HTTP rule there, their copies still
// count in team-m's share.
func TestTLSNamesCopiesCountInTheShare(t *testing.T) {
	gw := gateway(httpListener("http", 80, "", gatewayv1.NamespacesFromAll), l4Listener("tls", 443, gatewayv1.TLSProtocolType))
	gw.Spec.Listeners[1].AllowedRoutes = &gatewayv1.AllowedRoutes{Namespaces: &gatewayv1.RouteNamespaces{From: ptr.To(gatewayv1.NamespacesFromAll)}}
	platform := route("infra", "default", 6*time.Hour, "http", nil, rule(nil, to("svc-a", 1)))
	var hosts []string
	for i := range 42 {
		hosts = append(hosts, fmt.Sprintf("t%d.team-m.example", i))
	}
	sni := l4Route(KindTLSRoute, "team-m", "sni", 3*time.Hour, "tls", hosts, "svc-a")
	wide := route("team-m", "wide", 2*time.Hour, "http", nil, paths(42))
	tr := (&looks{gw: gw}).at(t0, []*gatewayv1.HTTPRoute{platform, wide}, []L4Route{sni})
	t.Logf("sni %+v wide %+v", parentOf(t, tr, KindTLSRoute, "team-m", "sni").Accepted, httpParent(t, tr, "team-m", "wide").Accepted)
	if n := len(tr.Rules); n > 1+MaxTenantRules {
		t.Errorf("%d rules, team-m's (84 of its share) making %d", n, n-1)
	}
}

// An edit of an old route adds "older" names: a newer team's route
// accepted for hours stays. The copies of the editor's own rules without
// a host name made for the names beneath the newer team's rule count in
// the editor's share (28 + 180), and its newest route whose refusal
// brings it back is refused at the end of the look (ADR 33): here the
// names' (of the same age as its rules without a host name, and after
// them by name).
func TestEditOfAnOldRouteChargesNoOtherTeam(t *testing.T) {
	mine := route("team-m", "mine", 48*time.Hour, "", nil, paths(10)) // team-m's own rules without a host name
	names := func(n int) *gatewayv1.HTTPRoute { return hostsAndPaths("team-m", "names", 48*time.Hour, n, 1) }
	theirs := route("team-a", "default", 2*time.Hour, "", nil, paths(5)) // team-a's established route
	l := &looks{gw: sharedGateway()}
	tr := l.at(t0, []*gatewayv1.HTTPRoute{mine, names(1), theirs}, nil)
	if p := httpParent(t, tr, "team-a", "default"); p.Accepted.Reason != "Accepted" {
		t.Fatalf("before: team-a/default %+v", p.Accepted)
	}
	// team-m edits its 48-hour-old route: 18 names (28 of its share).
	tr = l.at(t0.Add(time.Minute), []*gatewayv1.HTTPRoute{mine, names(18), theirs}, nil)
	wantAccepted(t, tr, "team-a/default", "team-m/mine")
	wantEvicted(t, tr, "team-m", "names")
}

// holds is what ns's share holds before a newer probe route (refused).
func holds(t *testing.T, gw *gatewayv1.Gateway, sets []*gatewayv1.ListenerSet, claims Claims, consent Consent, ns string, routes ...*gatewayv1.HTTPRoute) (string, Translation) {
	t.Helper()
	probe := hostsAndPaths(ns, "zz-probe", time.Minute, 1, MaxTenantRules)
	tr := Translate(gw, append(routes, probe), nil, nil, services, Boundary{ListenerSets: sets, Claims: claims, Now: t0, Grace: grace, Consent: consent})
	return httpParent(t, tr, ns, "zz-probe").Accepted.Message, tr
}

// A share counts nothing twice: a ListenerSet listener's name and a
// route serving it through the Gateway's listener (its rule, and the
// name: the 404 counts in the budget only); a route through two
// parentRefs to one listener (its rule once).
func TestNothingCountedTwice(t *testing.T) {
	platform := route("infra", "default", 6*time.Hour, "http", nil, rule(nil, to("svc-a", 1)))
	// (a) a ListenerSet listener's name (own port) served by a route on the Gateway's listener.
	sets := []*gatewayv1.ListenerSet{listenerSet("team-m", "s", 3*time.Hour, entry("api", 9000, gatewayv1.HTTPProtocolType, "api.m.example"))}
	r2 := route("team-m", "r2", 2*time.Hour, "http", []string{"api.m.example"}, rule([]gatewayv1.HTTPRouteMatch{prefix("/y")}, to("svc-a", 1)))
	msg, _ := holds(t, openGateway(), sets, Claims{}, nil, "team-m", platform, r2)
	if !strings.Contains(msg, "hold 2,") {
		t.Errorf("(a) team-m's rule and its 404 (2 rules; the listener on 9000 has none): %q, want hold 2", msg[len(msg)-60:])
	}

	// (d) two parentRefs to the one listener (with and without a section).
	two := route("team-m", "two", 2*time.Hour, "http", []string{"d.m.example"}, rule(nil, to("svc-a", 1)))
	two.Spec.ParentRefs = append(two.Spec.ParentRefs, gatewayv1.ParentReference{Name: "gw", Namespace: ptr.To(gatewayv1.Namespace("infra"))})
	msg, _ = holds(t, sharedGateway(), nil, Claims{}, nil, "team-m", platform, two)
	if !strings.Contains(msg, "hold 1,") {
		t.Errorf("(d) one rule through two parentRefs to one listener: %q, want hold 1", msg[len(msg)-60:])
	}
}

// A new ListenerSet of team-m does not push out team-a's established
// (and older) route: its names are claimed before any route, and the
// copies of team-m's older rules without a host name made for them count
// in team-m's share.
func TestNewListenerSetPushesOutNoOlderRoute(t *testing.T) {
	platform := route("infra", "default", 6*time.Hour, "http", nil, rule(nil, to("svc-a", 1)))
	wide := route("team-m", "wide", 5*time.Hour, "http", nil, paths(42))
	theirs := hostsAndPaths("team-a", "theirs", 4*time.Hour, 1, 190)
	tr := Translate(openGateway(), []*gatewayv1.HTTPRoute{platform, wide, theirs}, nil, nil, services, Boundary{Now: t0, Grace: grace})
	if p := httpParent(t, tr, "team-a", "theirs"); p.Accepted.Reason != "Accepted" {
		t.Fatalf("before: %+v", p.Accepted)
	}
	var ls []gatewayv1.ListenerEntry
	for k := range 42 {
		ls = append(ls, entry(fmt.Sprintf("l%d", k), 9000, gatewayv1.HTTPProtocolType, fmt.Sprintf("n%d.team-m.example", k)))
	}
	sets := []*gatewayv1.ListenerSet{listenerSet("team-m", "names", time.Minute, ls...)}
	tr = Translate(openGateway(), []*gatewayv1.HTTPRoute{platform, wide, theirs}, nil, nil, services, Boundary{ListenerSets: sets, Now: t0, Grace: grace})
	if p := httpParent(t, tr, "team-a", "theirs"); p.Accepted.Reason != "Accepted" {
		t.Errorf("team-a's 4-hour-old route, once team-m adds a 1-minute-old ListenerSet of 42 names (84 of team-m's share in all): %+v", p.Accepted)
	}
}

// A team at its share may still add a route that lowers it: catch-alls
// for its names make the copies of its rules without a host name
// unneeded (19 rules for 171 copies fewer).
func TestRouteLoweringItsShareFits(t *testing.T) {
	platform := route("infra", "default", 6*time.Hour, "", nil, rule(nil, to("svc-a", 1)))
	names := hostsAndPaths("team-m", "names", 4*time.Hour, 19, 1)
	wide := route("team-m", "wide", 3*time.Hour, "", nil, paths(9))
	var hosts []string
	for i := range 19 {
		hosts = append(hosts, fmt.Sprintf("h%d.team-m.example", i))
	}
	fix := route("team-m", "fix", time.Hour, "", hosts, rule(nil, to("svc-a", 1)))
	tr := (&looks{gw: sharedGateway()}).at(t0, []*gatewayv1.HTTPRoute{platform, names, wide, fix}, nil)
	for _, n := range []string{"names", "wide", "fix"} {
		if p := httpParent(t, tr, "team-m", n); p.Accepted.Reason != "Accepted" {
			t.Errorf("team-m/%s: %s", n, p.Accepted.Message)
		}
	}
}
