package gateway

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"k8s.io/utils/ptr"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"
)

// teamsNames are the routes of eight teams, n host names of one path
// each, created age ago.
func teamsNames(n int, age time.Duration) []*gatewayv1.HTTPRoute {
	var out []*gatewayv1.HTTPRoute
	for i := range 8 {
		out = append(out, hostsAndPaths(fmt.Sprintf("team-%d", i), "names", age, n, 1))
	}
	return out
}

// wantEvicted checks that ns/name was refused for its namespace's share
// at the end of a look, in words naming no other namespace.
func wantEvicted(t *testing.T, tr Translation, ns, name string) {
	t.Helper()
	p := httpParent(t, tr, ns, name)
	if p.Accepted.Reason != string(ReasonRuleBudgetExceeded) || !strings.Contains(p.Accepted.Message, "once the routes attached after it are") ||
		!strings.Contains(p.Accepted.Message, "the routes of "+ns+" are past it") {
		t.Errorf("%s/%s: %+v, want refused for its share once the newer routes are", ns, name, p.Accepted)
	}
	if strings.Contains(p.Accepted.Message, "team-0") || strings.Contains(p.Accepted.Message, "infra") {
		t.Errorf("%s/%s: %q names another namespace", ns, name, p.Accepted.Message)
	}
}

// wantAccepted checks that each ns/name was accepted.
func wantAccepted(t *testing.T, tr Translation, keys ...string) {
	t.Helper()
	for _, key := range keys {
		ns, name, _ := strings.Cut(key, "/")
		if p := httpParent(t, tr, ns, name); p.Accepted.Reason != "Accepted" {
			t.Errorf("%s: %+v, want Accepted", key, p.Accepted)
		}
	}
}

// A rule without a host name on a ListenerSet listener of a port of its
// own would take the requests for every host name held on the Gateway
// (cookies know no port): each needs a 404 there, counted in the share of
// the rule's namespace (ADR 33), not in no share. Found by a reviewing
// helper: one such rule made 992 404s, uncounted, and newer teams' routes
// were refused for the budget.
func TestWideRulePaysForOthersNames(t *testing.T) {
	sets := []*gatewayv1.ListenerSet{listenerSet("team-x", "own", 72*time.Hour, entry("any", 9000, gatewayv1.HTTPProtocolType, ""))}
	any := route("team-x", "any", 48*time.Hour, "", nil, paths(1))
	any.Spec.ParentRefs = []gatewayv1.ParentReference{{Kind: ptr.To(KindListenerSet), Name: "own", Namespace: ptr.To(gatewayv1.Namespace("team-x"))}}
	newer := hostsAndPaths("team-n", "big", time.Minute, 1, 150)
	routes := append(teamsNames(124, time.Hour), any, newer)
	l := &looks{gw: openGateway()}

	// The first look: team-x's route is the oldest, admitted before any
	// name is held; the names served after it make its 404s, past its
	// share: it is refused at the end of the look, and the look made
	// again without it.
	tr := Translate(l.gw, routes, nil, nil, services, Boundary{ListenerSets: sets, Now: t0, Grace: grace})
	wantEvicted(t, tr, "team-x", "any")
	wantAccepted(t, tr, "team-0/names", "team-7/names", "team-n/big")

	// Later looks: the names are held before team-x's route is admitted,
	// which is refused for its share at once, its count its own.
	l.claims = tr.Claims
	tr = Translate(l.gw, routes, nil, nil, services, Boundary{ListenerSets: sets, Claims: l.claims, Now: t0.Add(time.Minute), Grace: grace})
	wantShareRefused(t, tr, "team-x", "any", 0, 1+8*124+1)
	wantAccepted(t, tr, "team-0/names", "team-n/big")

	// With a host name of its own it costs its rule.
	any.Spec.Hostnames = []gatewayv1.Hostname{"any.team-x.example"}
	tr = Translate(l.gw, routes, nil, nil, services, Boundary{ListenerSets: sets, Claims: l.claims, Now: t0.Add(2 * time.Minute), Grace: grace})
	wantAccepted(t, tr, "team-x/any", "team-0/names", "team-n/big")
}

// An edit of a 48-hour-old route to one rule without a host name on
// another port keeps the route's age, so it is admitted first: the 404s
// it needs for eight teams' names count in its namespace's share, and it
// is refused, not the teams' newest routes (a reviewing helper's case).
func TestOldRouteEditedWideIsRefused(t *testing.T) {
	gw := gateway(httpListener("http", 80, "", gatewayv1.NamespacesFromAll), httpListener("alt", 8080, "", gatewayv1.NamespacesFromAll))
	old := hostsAndPaths("team-x", "old", 48*time.Hour, 1, 1)
	old.Spec.ParentRefs[0].SectionName = ptr.To(gatewayv1.SectionName("alt"))
	routes := append(teamsNames(150, 2*time.Hour), old)
	for i := range 8 {
		routes = append(routes, hostsAndPaths(fmt.Sprintf("team-%d", i), "newest", time.Minute, 1, 40))
	}
	for _, r := range routes {
		if r.Namespace != "team-x" {
			r.Spec.ParentRefs[0].SectionName = ptr.To(gatewayv1.SectionName("http"))
		}
	}
	l := &looks{gw: gw}
	tr := l.at(t0, routes, nil)
	wantAccepted(t, tr, "team-x/old", "team-0/names", "team-0/newest", "team-7/newest")

	edited := route("team-x", "old", 48*time.Hour, "alt", nil, paths(1))
	routes[len(teamsNames(150, 0))] = edited
	tr = l.at(t0.Add(time.Minute), routes, nil)
	wantShareRefused(t, tr, "team-x", "old", 1, 1+8*150) // its old name, idle, and a 404 for each of the teams' names
	wantAccepted(t, tr, "team-0/names", "team-0/newest", "team-7/newest")
}

// The reverse: a team's older names beneath its own rules without a host
// name cost nothing until another namespace's wider rule is there, then
// names x rules copies, in that team's share. A newer wider rule, the
// platform's catch-all or another team's, is no longer refused for the
// budget with a count of them (a reviewing helper's case): the team's
// newest such routes are refused until its copies fit its share.
func TestCopiesPastTheirSharePushOutTheirOwnRules(t *testing.T) {
	var routes []*gatewayv1.HTTPRoute
	names := hostsAndPaths("team-m", "names", 10*time.Hour, 45, 1)
	routes = append(routes, names)
	for i := range 45 {
		routes = append(routes, route("team-m", fmt.Sprintf("w%02d", i), 9*time.Hour-time.Duration(i)*time.Minute, "", nil, rule(
			[]gatewayv1.HTTPRouteMatch{prefix(fmt.Sprintf("/w%d", i))}, to("svc-a", 1))))
	}
	for _, newer := range []*gatewayv1.HTTPRoute{
		route("infra", "default", time.Hour, "", nil, rule(nil, to("svc-a", 1))),
		route("team-y", "any", time.Hour, "", nil, paths(1)),
	} {
		tr := (&looks{gw: sharedGateway()}).at(t0, append(routes, newer), nil)
		wantAccepted(t, tr, newer.Namespace+"/"+newer.Name, "team-m/names", "team-m/w00")
		// team-m keeps k rules without a host name: 45 + k + 45k <= 200,
		// so k = 3; the newest 42 are refused, the newest first.
		wantEvicted(t, tr, "team-m", "w44")
		kept := 0
		for i := range 45 {
			if httpParent(t, tr, "team-m", fmt.Sprintf("w%02d", i)).Accepted.Reason == "Accepted" {
				kept++
			}
		}
		if kept != 3 {
			t.Errorf("beside %s/%s: team-m keeps %d of its rules without a host name, want 3", newer.Namespace, newer.Name, kept)
		}
	}
}
