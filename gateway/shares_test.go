package gateway

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/example/cloud-provider-example/exampleapi"
)

// paths is a rule of n path prefixes /w0… and no host name.
func paths(n int) gatewayv1.HTTPRouteRule {
	var ms []gatewayv1.HTTPRouteMatch
	for i := range n {
		ms = append(ms, prefix(fmt.Sprintf("/w%d", i)))
	}
	return rule(ms, to("svc-a", 1))
}

// wantShareRefused checks that ns/name was refused for its namespace's
// share, in words holding used and adds and naming no other namespace.
func wantShareRefused(t *testing.T, tr Translation, ns, name string, used, adds int) {
	t.Helper()
	p := httpParent(t, tr, ns, name)
	want := fmt.Sprintf("those of %s attached before this one hold %d, for the %d it would add", ns, used, adds)
	if p.Accepted.Reason != string(ReasonRuleBudgetExceeded) || !strings.Contains(p.Accepted.Message, want) {
		t.Errorf("%s/%s: %+v, want RuleBudgetExceeded: %q", ns, name, p.Accepted, want)
	}
	for _, other := range []string{"infra", "team-a", "team-m"} {
		if other != ns && strings.Contains(p.Accepted.Message, other) {
			t.Errorf("%s/%s: %q names namespace %s", ns, name, p.Accepted.Message, other)
		}
	}
}

// The copies of a namespace's rules made for its names (fences.go)
// count in its share, whichever of its routes comes first: a team's many
// host names and rules without one, fenced from the platform's
// catch-all, cannot fill the budget with copies counted nowhere. A
// team's rule without a host name pays the 404s that fence other teams'
// names from it (ADR 33), taking nothing of their shares.
func TestFencesCountInTheShare(t *testing.T) {
	platform := route("infra", "default", 6*time.Hour, "", nil, rule(nil, to("svc-a", 1)))
	// 20 names of one path each: with the platform's catch-all each
	// ends with a 404 (20 + 20); 10 rules without a host name are
	// copied for each name (20 x 10 more).
	names := hostsAndPaths("team-m", "names", 4*time.Hour, 20, 1)
	wide := route("team-m", "wide", 3*time.Hour, "", nil, paths(10))
	tr := (&looks{gw: sharedGateway()}).at(t0, []*gatewayv1.HTTPRoute{platform, names, wide}, nil)
	if p := httpParent(t, tr, "team-m", "names"); p.Accepted.Reason != "Accepted" {
		t.Errorf("team-m/names: %+v, want Accepted", p.Accepted)
	}
	wantShareRefused(t, tr, "team-m", "wide", 20, 10+200)
	if n := len(tr.Rules); n != 1+20+20 {
		t.Errorf("%d rules %q, want the platform's, team-m's names' and their fences", n, ruleNames(tr))
	}

	// The other way round: the names pay for the copies of the older
	// rules without a host name.
	wide = route("team-m", "wide", 5*time.Hour, "", nil, paths(10))
	tr = (&looks{gw: sharedGateway()}).at(t0, []*gatewayv1.HTTPRoute{platform, names, wide}, nil)
	wantShareRefused(t, tr, "team-m", "names", 10, 20+20*10)

	// A team's older names keep their share: team-m's newer rules without
	// a host name fence them, the 150 404s in team-m's share (60 rules
	// do not fit beside them, 50 do), and team-a's share still holds its
	// 150 rules alone, 50 left.
	theirs := hostsAndPaths("team-a", "theirs", 5*time.Hour, 150, 1)
	late := route("team-m", "late", time.Hour, "", nil, paths(60))
	fill := hostsAndPaths("team-a", "fill", 30*time.Minute, 1, 50)
	tr = (&looks{gw: sharedGateway()}).at(t0, []*gatewayv1.HTTPRoute{theirs, late, fill}, nil)
	wantShareRefused(t, tr, "team-m", "late", 0, 60+150)
	late = route("team-m", "late", time.Hour, "", nil, paths(50))
	tr = (&looks{gw: sharedGateway()}).at(t0, []*gatewayv1.HTTPRoute{theirs, late, fill}, nil)
	for _, key := range []string{"team-a/theirs", "team-m/late", "team-a/fill"} {
		ns, name, _ := strings.Cut(key, "/")
		if p := httpParent(t, tr, ns, name); p.Accepted.Reason != "Accepted" {
			t.Errorf("%s: %+v, want Accepted", key, p.Accepted)
		}
	}
	if n := len(tr.Rules); n != 150+50+50+150 {
		t.Errorf("%d rules, want the routes' and a 404 for each of team-a's older names", n)
	}

	// A name whose rules match every request needs no fence: 150 such
	// names under the platform's catch-all cost 150.
	var hosts []string
	for i := range 150 {
		hosts = append(hosts, fmt.Sprintf("h%d.team-a.example", i))
	}
	whole := route("team-a", "whole", 5*time.Hour, "", hosts, rule(nil, to("svc-a", 1)))
	more := hostsAndPaths("team-a", "more", 4*time.Hour, 1, 50)
	tr = (&looks{gw: sharedGateway()}).at(t0, []*gatewayv1.HTTPRoute{platform, whole, more}, nil)
	for _, name := range []string{"whole", "more"} {
		if p := httpParent(t, tr, "team-a", name); p.Accepted.Reason != "Accepted" {
			t.Errorf("team-a/%s: %+v, want Accepted (150 + 50 is the share)", name, p.Accepted)
		}
	}
}

// A host name a namespace holds in its grace, that no route serves,
// counts one in its share until a route serves it again: without it a
// team cycling routes through new names would hold names (and their
// fences) without end.
func TestIdleHostnamesCountInTheShare(t *testing.T) {
	claims := Claims{Hosts: map[string]HostClaim{}}
	for i := range 190 {
		claims.Hosts[fmt.Sprintf("h%d.team-m.example", i)] = HostClaim{Namespace: "team-m", Since: t0.Add(-time.Hour), ReleasedAt: ptr.To(t0.Add(-time.Minute))}
	}
	var hosts []string
	for i := range 11 {
		hosts = append(hosts, fmt.Sprintf("n%d.team-m.example", i))
	}
	fresh := route("team-m", "fresh", time.Hour, "", hosts, rule(nil, to("svc-a", 1))) // a catch-all per name: no fences
	tr := (&looks{gw: sharedGateway(), claims: claims}).at(t0, []*gatewayv1.HTTPRoute{fresh}, nil)
	wantShareRefused(t, tr, "team-m", "fresh", 190, 11)

	// Served again, a name is its route's rule, counted once.
	back := hostsAndPaths("team-m", "back", time.Hour, 20, 1)
	back.Spec.Rules[0].Matches = nil
	tr = (&looks{gw: sharedGateway(), claims: claims}).at(t0, []*gatewayv1.HTTPRoute{back}, nil)
	if p := httpParent(t, tr, "team-m", "back"); p.Accepted.Reason != "Accepted" {
		t.Errorf("team-m/back: %+v, want Accepted (170 idle names and its 20 rules)", p.Accepted)
	}
}

// Names held before any route is admitted (a newer team's names in their
// grace, or its ListenerSets' listeners' names) are fenced where another
// team's rule without a host name is: their 404s count in the share of
// that rule's namespace, whose rule would take their requests (ADR 33),
// and each name one in its holder's, never more.
func TestHeldNamesFencedAtTheWiderRulesCost(t *testing.T) {
	older := route("team-a", "wide", 5*time.Hour, "", nil, paths(10))
	idle := func(n int) Claims {
		claims := Claims{Hosts: map[string]HostClaim{}}
		for i := range n {
			claims.Hosts[fmt.Sprintf("h%d.team-m.example", i)] = HostClaim{Namespace: "team-m", Since: t0.Add(-time.Hour), ReleasedAt: ptr.To(t0.Add(-time.Minute))}
		}
		return claims
	}
	tr := (&looks{gw: sharedGateway(), claims: idle(185)}).at(t0, []*gatewayv1.HTTPRoute{older}, nil)
	if p := httpParent(t, tr, "team-a", "wide"); p.Accepted.Reason != "Accepted" {
		t.Errorf("beside team-m's 185 idle names, team-a's route: %+v, want Accepted", p.Accepted)
	}
	if n := len(tr.Rules); n != 10+185 {
		t.Errorf("%d rules, want team-a's 10 and a 404 for each of team-m's names", n)
	}
	// (team-m's probe serves one of its names: 184 left idle.)
	for ns, want := range map[string]string{"team-a": "hold 195,", "team-m": "hold 184,"} {
		if msg, _ := holds(t, sharedGateway(), nil, idle(185), nil, ns, older); !strings.Contains(msg, want) {
			t.Errorf("%s: %q, want %s", ns, msg[len(msg)-60:], want)
		}
	}
	tr = (&looks{gw: sharedGateway(), claims: idle(195)}).at(t0, []*gatewayv1.HTTPRoute{older}, nil)
	wantShareRefused(t, tr, "team-a", "wide", 0, 10+195)

	// team-m's ListenerSets' listeners: 100 fit in its share (a name and
	// a catch-all each), each fenced from team-a's rules.
	sets := floods(4, 49, func(int, int) int32 { return 80 }, func(i, k int) string { return fmt.Sprintf("l%d-%d.team-m.example", i, k) })
	for n, want := range map[int]string{100: "Accepted", 101: string(ReasonRuleBudgetExceeded)} {
		wide := route("team-a", "wide", 5*time.Hour, "", nil, paths(n))
		tr = Translate(openGateway(), []*gatewayv1.HTTPRoute{wide}, nil, nil, services, Boundary{ListenerSets: sets, Now: t0, Grace: grace})
		if p := httpParent(t, tr, "team-a", "wide"); p.Accepted.Reason != want {
			t.Errorf("team-a's route of %d rules beside team-m's ListenerSets' 100 names: %+v, want %s", n, p.Accepted, want)
		}
	}
}

// ListenerSet listeners on a port of their own cause no catch-all, but
// their names are held and fenced beside the platform's catch-all: each
// counts one in its namespace's share, so they cannot fill the budget
// and push out another team's older route.
func TestListenerSetNamesCountInTheShare(t *testing.T) {
	platform := route("infra", "default", 6*time.Hour, "", nil, rule(nil, to("svc-a", 1)))
	shop := route("team-a", "shop", 2*time.Hour, "", []string{"shop.team-a.example"}, rule(nil, to("svc-a", 1)), rule([]gatewayv1.HTTPRouteMatch{prefix("/x")}, to("svc-a", 1)))
	sets := floods(37, 54, func(int, int) int32 { return 9000 }, func(i, k int) string { return fmt.Sprintf("l%d-%d.team-m.example", i, k) })
	tr := Translate(openGateway(), []*gatewayv1.HTTPRoute{platform, shop}, nil, nil, services, Boundary{ListenerSets: sets, Now: t0, Grace: grace})
	accepted, refused := refusedSetListeners(t, tr)
	if accepted != MaxTenantRules || len(refused[string(ReasonRuleBudgetExceeded)]) != 37*54-MaxTenantRules {
		t.Errorf("%d of team-m's listeners accepted, refusals %d, want %d: a name each", accepted, len(refused[string(ReasonRuleBudgetExceeded)]), MaxTenantRules)
	}
	for _, key := range []string{"infra/default", "team-a/shop"} {
		ns, name, _ := strings.Cut(key, "/")
		if p := httpParent(t, tr, ns, name); p.Accepted.Reason != "Accepted" {
			t.Errorf("%s: %+v, want Accepted", key, p.Accepted)
		}
	}
}

// A name its routes served at the last look counts one until a route
// serves it again: a team renaming 190 names in one edit holds both sets
// at that look, and its route of the new ones does not fit.
func TestRenamedHostnamesCountAtOnce(t *testing.T) {
	platform := route("infra", "default", 6*time.Hour, "", nil, rule(nil, to("svc-a", 1)))
	names := func(name, prefix string) *gatewayv1.HTTPRoute {
		var hs []string
		for i := range 190 {
			hs = append(hs, fmt.Sprintf("%s%d.team-m.example", prefix, i))
		}
		return route("team-m", name, time.Hour, "", hs, rule(nil, to("svc-a", 1)))
	}
	l := &looks{gw: sharedGateway()}
	l.at(t0, []*gatewayv1.HTTPRoute{platform, names("a", "a")}, nil)
	tr := l.at(t0.Add(time.Minute), []*gatewayv1.HTTPRoute{platform, names("b", "b")}, nil)
	wantShareRefused(t, tr, "team-m", "b", 190, 190)
}

// A route's second parentRef may move its wildcard rule to a more
// specific listener of the port: the fences are counted again whole, so
// the rules stay within the budget (and within team-m's share).
func TestWildcardMovedToAnotherListenerCounted(t *testing.T) {
	gw := gateway(httpListener("http", 80, "", gatewayv1.NamespacesFromAll), httpListener("wild", 80, "*.example", gatewayv1.NamespacesFromAll))
	platform := route("infra", "wild-default", 6*time.Hour, "wild", nil, rule(nil, to("svc-a", 1)))
	names := hostsAndPaths("team-m", "names", 4*time.Hour, 32, 1)
	names.Spec.ParentRefs[0].SectionName = ptr.To(gatewayv1.SectionName("wild"))
	w := route("team-m", "w", time.Hour, "http", []string{"*.team-m.example"}, paths(60))
	second := w.Spec.ParentRefs[0]
	second.SectionName = ptr.To(gatewayv1.SectionName("wild"))
	w.Spec.ParentRefs = append(w.Spec.ParentRefs, second)
	consent := func(_ RouteKey, owner, _ string) bool { return owner == "infra" } // the platform lets teams serve names under its wildcard
	tr := (&looks{gw: gw, consent: consent}).at(t0, []*gatewayv1.HTTPRoute{platform, names, w}, nil)
	if n := len(tr.Rules); n > exampleapi.MaxRules {
		t.Fatalf("%d rules, past the cloud's %d", n, exampleapi.MaxRules)
	}
	ps := tr.Parents[RouteKey{Kind: KindHTTPRoute, NamespacedName: types.NamespacedName{Namespace: "team-m", Name: "w"}}]
	if len(ps) != 2 || ps[0].Accepted.Reason != "Accepted" || ps[1].Accepted.Reason != string(ReasonRuleBudgetExceeded) {
		t.Errorf("team-m/w: %+v, want its first parentRef accepted and its second past its share", ps)
	}
}

// Copies of a team's rules count in its share whichever route's
// admission makes them: another team's newer rule without a host name
// makes team-a's wildcard rules copied for each of its names beneath
// them (as the platform's catch-all would), and team-a's newest route
// no longer fits; the other team pays the 404s its rule makes needed for
// team-a's names (ADR 33), not the copies.
func TestCopiesCountInTheirHoldersShare(t *testing.T) {
	wild := route("team-a", "wild", 5*time.Hour, "", []string{"*.team-a.example"}, paths(5))
	names := hostsAndPaths("team-a", "names", 4*time.Hour, 30, 1) // h0.team-a.example…, under the wildcard
	other := route("team-m", "any", 3*time.Hour, "", nil, paths(1))
	newest := hostsAndPaths("team-a", "newest", time.Hour, 1, 20)
	tr := (&looks{gw: sharedGateway()}).at(t0, []*gatewayv1.HTTPRoute{wild, names, other, newest}, nil)
	for _, key := range []string{"team-a/wild", "team-a/names", "team-m/any"} {
		ns, name, _ := strings.Cut(key, "/")
		if p := httpParent(t, tr, ns, name); p.Accepted.Reason != "Accepted" {
			t.Errorf("%s: %+v, want Accepted", key, p.Accepted)
		}
	}
	// team-a: 5 + 30 rules and 30 x 5 copies.
	wantShareRefused(t, tr, "team-a", "newest", 5+30+150, 20)
	if msg, _ := holds(t, sharedGateway(), nil, Claims{}, nil, "team-m", wild, names, other); !strings.Contains(msg, "hold 32,") {
		t.Errorf("team-m: %q, want hold 32 (its rule, a 404 for each of team-a's 31 names, the wildcard one too)", msg[len(msg)-60:])
	}
}
