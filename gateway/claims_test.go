package gateway

import (
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"k8s.io/utils/ptr"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"
)

// t0 is when the claims tests' first look happens.
var t0 = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

const grace = 15 * time.Minute

func sharedGateway() *gatewayv1.Gateway {
	return gateway(httpListener("http", 80, "", gatewayv1.NamespacesFromAll))
}

// looks translates gw at successive times, each look keeping the claims
// the one before made.
type looks struct {
	gw      *gatewayv1.Gateway
	claims  Claims
	consent Consent
}

func (l *looks) at(now time.Time, http []*gatewayv1.HTTPRoute, l4 []L4Route) Translation {
	tr := Translate(l.gw, http, l4, nil, services, Boundary{Claims: l.claims, Now: now, Grace: grace, Consent: l.consent})
	l.claims = tr.Claims
	return tr
}

// withGET is the takeover: PathPrefix / with a method, more
// specific than the owner's PathPrefix /.
func withGET() gatewayv1.HTTPRouteMatch {
	m := prefix("/")
	m.Method = ptr.To(gatewayv1.HTTPMethodGet)
	return m
}

func wantRefusedHost(t *testing.T, p Parent, host, ns string) {
	t.Helper()
	msg := p.Accepted.Message
	if p.Accepted.Reason != string(ReasonHostnameInUse) || !strings.Contains(msg, "host name "+host+" is served on this Gateway by another namespace") ||
		!strings.Contains(msg, "ReferenceGrant there from HTTPRoutes of namespace "+ns+" to group gateway.example.com, kind Hostname") {
		t.Errorf("%s's route: %+v, want HostnameInUse for %s saying how consent is given", ns, p.Accepted, host)
	}
	if strings.Contains(msg, "team-a") && ns != "team-a" {
		t.Errorf("refusal %q names the holder", msg)
	}
}

// A host name belongs to the namespace whose route served it first: a
// route of another namespace naming it, or a wildcard over it, is refused
// whole (HostnameInUse, the message naming neither the holder nor its
// route), even with a more specific match; its other host names are its
// own.
func TestHostnameHeldByNamespace(t *testing.T) {
	shop := route("team-a", "shop", 2*time.Hour, "", []string{"shop.example"}, rule(nil, to("svc-a", 1)))
	takeover := route("team-b", "takeover", time.Hour, "", []string{"shop.example", "b.example"}, rule([]gatewayv1.HTTPRouteMatch{withGET()}, to("svc-b", 1)))
	wild := route("team-c", "wild", time.Hour, "", []string{"*.example"}, rule(nil, to("svc-c", 1)))
	own := route("team-b", "own", time.Hour, "", []string{"b.example"}, rule(nil, to("svc-b", 1)))
	l := &looks{gw: sharedGateway()}
	tr := l.at(t0, []*gatewayv1.HTTPRoute{takeover, wild, shop, own}, nil)

	wantRefusedHost(t, httpParent(t, tr, "team-b", "takeover"), "shop.example", "team-b")
	if p := httpParent(t, tr, "team-c", "wild"); p.Accepted.Reason != string(ReasonHostnameInUse) || !strings.Contains(p.Accepted.Message, "host name *.example") {
		t.Errorf("team-c/wild: %+v, want HostnameInUse for *.example (it covers shop.example)", p.Accepted)
	}
	for _, name := range []string{"shop", "own"} {
		ns := map[string]string{"shop": "team-a", "own": "team-b"}[name]
		if p := httpParent(t, tr, ns, name); p.Accepted.Reason != "Accepted" {
			t.Errorf("%s/%s: %+v, want Accepted", ns, name, p.Accepted)
		}
	}
	if got, want := ruleNames(tr), []string{"team-a/shop/0.0:80@shop.example", "team-b/own/0.0:80@b.example"}; !slices.Equal(got, want) {
		t.Errorf("rules %q, want %q", got, want)
	}
	if tr.Attached["http"] != 2 {
		t.Errorf("attached %v, want 2 (the refused routes not counted)", tr.Attached)
	}
	if c := tr.Claims.Hosts; c["shop.example"].Namespace != "team-a" || c["b.example"].Namespace != "team-b" || len(c) != 2 {
		t.Errorf("claims %+v, want shop.example team-a's and b.example team-b's", c)
	}
	if len(tr.Moves) != 0 {
		t.Errorf("moves %v, want none", tr.Moves)
	}
}

// Among host names nobody holds, named by several namespaces at once, the
// oldest route's namespace claims.
func TestHostnameClaimedByOldestRoute(t *testing.T) {
	young := route("team-a", "young", time.Hour, "", []string{"shop.example"}, rule(nil, to("svc-a", 1)))
	old := route("team-b", "old", 2*time.Hour, "", []string{"shop.example"}, rule(nil, to("svc-b", 1)))
	tr := (&looks{gw: sharedGateway()}).at(t0, []*gatewayv1.HTTPRoute{young, old}, nil)
	if p := httpParent(t, tr, "team-b", "old"); p.Accepted.Reason != "Accepted" {
		t.Errorf("team-b/old: %+v, want Accepted", p.Accepted)
	}
	if p := httpParent(t, tr, "team-a", "young"); p.Accepted.Reason != string(ReasonHostnameInUse) || strings.Contains(p.Accepted.Message, "team-b") {
		t.Errorf("team-a/young: %+v, want HostnameInUse, not naming team-b", p.Accepted)
	}
}

// The holder consents with a ReferenceGrant (Boundary.Consent): the
// route is accepted beside the holder's, which keeps the claim, and the
// review is warned once (a consented move).
func TestHostnameServedWithConsent(t *testing.T) {
	shop := route("team-a", "shop", 2*time.Hour, "", []string{"shop.example"}, rule(nil, to("svc-a", 1)))
	api := route("team-b", "api", time.Hour, "", []string{"shop.example"}, rule([]gatewayv1.HTTPRouteMatch{prefix("/api")}, to("svc-b", 1)))
	l := &looks{gw: sharedGateway(), consent: func(r RouteKey, owner, host string) bool {
		return r.Namespace == "team-b" && r.Kind == KindHTTPRoute && owner == "team-a" && host == "shop.example"
	}}
	tr := l.at(t0, []*gatewayv1.HTTPRoute{shop, api}, nil)
	if p := httpParent(t, tr, "team-b", "api"); p.Accepted.Reason != "Accepted" {
		t.Fatalf("team-b/api: %+v, want Accepted with consent", p.Accepted)
	}
	want := []Move{{Hostname: "shop.example", From: "team-a", To: "team-b", Consented: true}}
	if !slices.Equal(tr.Moves, want) {
		t.Errorf("moves %+v, want %+v", tr.Moves, want)
	}
	if c := tr.Claims.Hosts["shop.example"]; c.Namespace != "team-a" || !slices.Equal(c.Guests, []string{"team-b"}) {
		t.Errorf("claim %+v, want team-a's with guest team-b", c)
	}
	if tr = l.at(t0.Add(time.Minute), []*gatewayv1.HTTPRoute{shop, api}, nil); len(tr.Moves) != 0 {
		t.Errorf("second look: moves %+v, want none (told once)", tr.Moves)
	}
	l.consent = nil // the grant is deleted
	tr = l.at(t0.Add(2*time.Minute), []*gatewayv1.HTTPRoute{shop, api}, nil)
	wantRefusedHost(t, httpParent(t, tr, "team-b", "api"), "shop.example", "team-b")
}

// A claim its namespace's routes no longer serve is kept for the grace:
// the owner's route deleted and created again (younger than a waiting
// route of another namespace) keeps its host name. After the grace, the
// waiting route takes it, and the review is warned of the move.
func TestHostnameClaimGrace(t *testing.T) {
	shop := func(age time.Duration) *gatewayv1.HTTPRoute {
		return route("team-a", "shop", age, "", []string{"shop.example"}, rule(nil, to("svc-a", 1)))
	}
	waiting := route("team-b", "waiting", time.Hour, "", []string{"shop.example"}, rule(nil, to("svc-b", 1)))
	l := &looks{gw: sharedGateway()}
	l.at(t0, []*gatewayv1.HTTPRoute{shop(2 * time.Hour)}, nil)

	// Deleted: the claim stays; the other namespace's route is refused.
	tr := l.at(t0.Add(time.Minute), []*gatewayv1.HTTPRoute{waiting}, nil)
	wantRefusedHost(t, httpParent(t, tr, "team-b", "waiting"), "shop.example", "team-b")
	if c := tr.Claims.Hosts["shop.example"]; c.Namespace != "team-a" || c.ReleasedAt == nil || !c.ReleasedAt.Equal(t0.Add(time.Minute)) {
		t.Errorf("claim %+v, want team-a's, released at t0+1m", c)
	}
	if !tr.Recheck.Equal(t0.Add(time.Minute + grace)) {
		t.Errorf("recheck %v, want at the grace's end", tr.Recheck)
	}
	if len(tr.Rules) != 0 {
		t.Errorf("rules %q, want none", ruleNames(tr))
	}

	// Created again (now younger than the waiting route): still team-a's.
	recreated := shop(-2 * time.Minute) // created at t0+2m
	tr = l.at(t0.Add(3*time.Minute), []*gatewayv1.HTTPRoute{waiting, recreated}, nil)
	if p := httpParent(t, tr, "team-a", "shop"); p.Accepted.Reason != "Accepted" {
		t.Errorf("re-created team-a/shop: %+v, want Accepted", p.Accepted)
	}
	wantRefusedHost(t, httpParent(t, tr, "team-b", "waiting"), "shop.example", "team-b")
	if c := tr.Claims.Hosts["shop.example"]; c.ReleasedAt != nil || !tr.Recheck.IsZero() {
		t.Errorf("claim %+v (recheck %v), want served again", c, tr.Recheck)
	}

	// Deleted for longer than the grace: released, and the waiting route
	// takes it.
	l.at(t0.Add(4*time.Minute), []*gatewayv1.HTTPRoute{waiting}, nil)
	tr = l.at(t0.Add(4*time.Minute+grace-time.Second), []*gatewayv1.HTTPRoute{waiting}, nil)
	wantRefusedHost(t, httpParent(t, tr, "team-b", "waiting"), "shop.example", "team-b")
	tr = l.at(t0.Add(4*time.Minute+grace), []*gatewayv1.HTTPRoute{waiting}, nil)
	if p := httpParent(t, tr, "team-b", "waiting"); p.Accepted.Reason != "Accepted" {
		t.Errorf("after the grace, team-b/waiting: %+v, want Accepted", p.Accepted)
	}
	if want := []Move{{Hostname: "shop.example", From: "team-a", To: "team-b"}}; !slices.Equal(tr.Moves, want) {
		t.Errorf("moves %+v, want %+v", tr.Moves, want)
	}
	if c := tr.Claims.Hosts["shop.example"]; c.Namespace != "team-b" {
		t.Errorf("claim %+v, want team-b's", c)
	}
}

// Ownership None is the Gateway API's plain precedence: nothing claimed
// or kept, the more specific match wins across namespaces. An unknown
// value is taken as Namespace, and said.
func TestOwnershipAnnotation(t *testing.T) {
	shop := route("team-a", "shop", 2*time.Hour, "", []string{"shop.example"}, rule(nil, to("svc-a", 1)))
	takeover := route("team-b", "takeover", time.Hour, "", []string{"shop.example"}, rule([]gatewayv1.HTTPRouteMatch{withGET()}, to("svc-b", 1)))
	gw := sharedGateway()
	gw.Annotations = map[string]string{OwnershipAnnotation: "None"}
	l := &looks{gw: gw, claims: Claims{Hosts: map[string]HostClaim{"shop.example": {Namespace: "team-c", Since: t0}}}}
	tr := l.at(t0, []*gatewayv1.HTTPRoute{shop, takeover}, nil)
	if got, want := ruleNames(tr), []string{"team-b/takeover/0.0:80@shop.example", "team-a/shop/0.0:80@shop.example"}; !slices.Equal(got, want) {
		t.Errorf("None: rules %q, want %q", got, want)
	}
	if tr.Claims.Hosts != nil || tr.OwnershipUnknown != "" {
		t.Errorf("None: claims %+v, unknown %q: want none kept", tr.Claims, tr.OwnershipUnknown)
	}

	gw.Annotations[OwnershipAnnotation] = "namespace"
	tr = (&looks{gw: gw}).at(t0, []*gatewayv1.HTTPRoute{shop, takeover}, nil)
	if tr.OwnershipUnknown != "namespace" {
		t.Errorf("unknown value: %q, want it said", tr.OwnershipUnknown)
	}
	wantRefusedHost(t, httpParent(t, tr, "team-b", "takeover"), "shop.example", "team-b")
}

// A request for a claimed host name none of its holder's rules match does
// not fall to another namespace's rule without a host name: the holder's
// own less specific rules are copied for the name, in their order, and a
// 404 closes it. Without another namespace's such rule (or with a rule of
// the name matching every request) nothing is added.
func TestClaimedHostnameFenced(t *testing.T) {
	api := route("team-a", "shop", 3*time.Hour, "", []string{"shop.example"}, rule([]gatewayv1.HTTPRouteMatch{prefix("/api")}, to("svc-a", 1)))
	static := route("team-a", "static", 3*time.Hour, "", nil, rule([]gatewayv1.HTTPRouteMatch{prefix("/static")}, to("svc-a", 1)))
	wildA := route("team-a", "wild", 3*time.Hour, "", []string{"*.example"}, rule([]gatewayv1.HTTPRouteMatch{exact("/w")}, to("svc-a", 1)))
	other := route("team-b", "web", time.Hour, "", nil, rule(nil, to("svc-b", 1)))
	tr := (&looks{gw: sharedGateway()}).at(t0, []*gatewayv1.HTTPRoute{api, static, wildA, other}, nil)
	var got []string
	for _, r := range tr.Rules {
		got = append(got, r.Name)
		if r.FixedResponse != nil && (r.FixedResponse.StatusCode != http.StatusNotFound || r.Hostname == "") {
			t.Errorf("fence %+v, want a 404 for its host name", r)
		}
	}
	want := []string{
		"team-a/shop/0.0:80@shop.example",
		"team-a/wild/0.0:80@shop.example",   // its wildcard's, first
		"team-a/static/0.0:80@shop.example", // then its rules without a host name
		"hostname:80@shop.example",
		"team-a/wild/0.0:80@*.example",
		"team-a/static/0.0:80@*.example",
		"hostname:80@*.example",
		"team-a/static/0.0:80@any",
		"team-b/web/0.0:80@any",
	}
	if !slices.Equal(got, want) {
		t.Errorf("rules:\n%q\nwant\n%q", got, want)
	}

	// One namespace: nothing added.
	mine := route("team-a", "web", time.Hour, "", nil, rule(nil, to("svc-b", 1)))
	tr = (&looks{gw: sharedGateway()}).at(t0, []*gatewayv1.HTTPRoute{api, static, mine}, nil)
	if got, want := ruleNames(tr), []string{"team-a/shop/0.0:80@shop.example", "team-a/static/0.0:80@any", "team-a/web/0.0:80@any"}; !slices.Equal(got, want) {
		t.Errorf("one namespace: rules %q, want %q", got, want)
	}
	// A rule of the name matches every request: nothing can fall.
	all := route("team-a", "all", 3*time.Hour, "", []string{"shop.example"}, rule(nil, to("svc-a", 1)))
	tr = (&looks{gw: sharedGateway()}).at(t0, []*gatewayv1.HTTPRoute{all, static, other}, nil)
	if got, want := ruleNames(tr), []string{"team-a/all/0.0:80@shop.example", "team-a/static/0.0:80@any", "team-b/web/0.0:80@any"}; !slices.Equal(got, want) {
		t.Errorf("catch-all of the name: rules %q, want %q", got, want)
	}
}

// A held host name no rule names (its holder's route deleted, in the
// grace; or refused) is fenced as well: another namespace's rule without a
// host name must not take its requests meanwhile. Its holder's own rules
// without a host name are copied for it first.
func TestHeldHostnameWithoutRulesFenced(t *testing.T) {
	claims := Claims{Hosts: map[string]HostClaim{
		"shop.example": {Namespace: "team-a", Since: t0.Add(-3 * time.Hour), ReleasedAt: ptr.To(t0.Add(-time.Minute))},
		"*.corp":       {Namespace: "team-c", Since: t0.Add(-3 * time.Hour), ReleasedAt: ptr.To(t0.Add(-time.Minute))},
	}}
	catchall := route("team-b", "catchall", time.Hour, "", nil, rule(nil, to("svc-b", 1)))
	tr := (&looks{gw: sharedGateway(), claims: claims}).at(t0, []*gatewayv1.HTTPRoute{catchall}, nil)
	if got, want := ruleNames(tr), []string{"hostname:80@shop.example", "hostname:80@*.corp", "team-b/catchall/0.0:80@any"}; !slices.Equal(got, want) {
		t.Errorf("rules %q, want %q", got, want)
	}
	static := route("team-a", "static", 3*time.Hour, "", nil, rule([]gatewayv1.HTTPRouteMatch{prefix("/static")}, to("svc-a", 1)))
	tr = (&looks{gw: sharedGateway(), claims: claims}).at(t0, []*gatewayv1.HTTPRoute{static, catchall}, nil)
	want := []string{"team-a/static/0.0:80@shop.example", "hostname:80@shop.example", "hostname:80@*.corp", "team-a/static/0.0:80@any", "team-b/catchall/0.0:80@any"}
	if got := ruleNames(tr); !slices.Equal(got, want) {
		t.Errorf("with the holder's rule without a host name: rules %q, want %q", got, want)
	}
}

// The fences count in the rule budget: a route whose rules would add
// fences past it is refused.
func TestFencesCountInTheBudget(t *testing.T) {
	gw := sharedGateway()
	a := hostsAndPaths("infra", "many", 2*time.Hour, 10, 199) // 1,990 rules, 10 claimed host names (the Gateway's namespace: the whole budget)
	b := route("team-b", "any", time.Hour, "", nil, rule(nil, to("svc-b", 1)))
	tr := (&looks{gw: gw}).at(t0, []*gatewayv1.HTTPRoute{a, b}, nil)
	if p := httpParent(t, tr, "team-b", "any"); p.Accepted.Reason != string(ReasonRuleBudgetExceeded) {
		t.Errorf("team-b/any: %+v, want RuleBudgetExceeded (its 1 rule and 10 fences exceed the budget)", p.Accepted)
	}
	if len(tr.Rules) != 1990 {
		t.Errorf("%d rules, want infra's 1,990", len(tr.Rules))
	}
}

// A TCP or UDP listener belongs to the namespace whose route had it
// first: its route re-created (now younger than a parked route of another
// namespace) gets it back; the parked route's status names neither the
// holder's namespace nor its route; after the grace the parked route
// takes it, and the review is warned. Within one namespace, the oldest
// route has it.
func TestListenerClaim(t *testing.T) {
	gw := gateway(l4Listener("pg", 5432, gatewayv1.TCPProtocolType))
	pg := func(ns, name string, age time.Duration) L4Route {
		return l4Route(KindTCPRoute, ns, name, age, "pg", nil, "svc-a")
	}
	parked := pg("team-b", "parked", time.Hour)
	l := &looks{gw: gw}
	tr := l.at(t0, nil, []L4Route{pg("team-a", "db", 2*time.Hour), pg("team-a", "db-new", 90*time.Minute), parked})
	if got := ruleNames(tr); !slices.Equal(got, []string{"team-a/db/TCPRoute:5432"}) {
		t.Errorf("rules %q, want the oldest route of team-a's", got)
	}
	if p := parentOf(t, tr, KindTCPRoute, "team-a", "db-new"); !strings.Contains(p.Accepted.Message, "TCPRoute team-a/db") {
		t.Errorf("team-a/db-new: %+v, want the route of its namespace named", p.Accepted)
	}
	wantParked := func(tr Translation) {
		t.Helper()
		p := parentOf(t, tr, KindTCPRoute, "team-b", "parked")
		if p.Accepted.Reason != "Accepted" || !strings.Contains(p.Accepted.Message, "another namespace") || strings.Contains(p.Accepted.Message, "team-a") ||
			strings.Contains(p.Accepted.Message, "db") {
			t.Errorf("team-b/parked: %+v, want attached, parked, naming nothing of team-a", p.Accepted)
		}
	}
	wantParked(tr)
	if c := tr.Claims.Listeners["pg"]; c.Namespace != "team-a" || c.Route != "db" {
		t.Errorf("claim %+v, want team-a/db's", c)
	}

	// Re-created: younger than the parked route, and still team-a's.
	tr = l.at(t0.Add(time.Minute), nil, []L4Route{parked})
	wantParked(tr)
	if len(tr.Rules) != 0 || tr.Attached["pg"] != 1 {
		t.Errorf("rules %q, attached %v: want none during the grace, the parked route attached", ruleNames(tr), tr.Attached)
	}
	tr = l.at(t0.Add(2*time.Minute), nil, []L4Route{parked, pg("team-a", "db", -time.Minute)})
	if got := ruleNames(tr); !slices.Equal(got, []string{"team-a/db/TCPRoute:5432"}) {
		t.Errorf("re-created: rules %q, want team-a's", got)
	}
	wantParked(tr)

	// Gone past the grace: the parked route takes it.
	l.at(t0.Add(3*time.Minute), nil, []L4Route{parked})
	tr = l.at(t0.Add(3*time.Minute+grace), nil, []L4Route{parked})
	if got := ruleNames(tr); !slices.Equal(got, []string{"team-b/parked/TCPRoute:5432"}) {
		t.Errorf("after the grace: rules %q, want team-b's", got)
	}
	if want := []Move{{Listener: "pg", From: "team-a", To: "team-b"}}; !slices.Equal(tr.Moves, want) {
		t.Errorf("moves %+v, want %+v", tr.Moves, want)
	}
}

// Claims made at one look are ordered, and a clock that went back makes
// none older than those kept.
func TestClaimsOrdered(t *testing.T) {
	kept := Claims{Hosts: map[string]HostClaim{"a.example": {Namespace: "team-a", Since: t0}}}
	r1 := route("team-b", "one", time.Hour, "", []string{"b.example"}, rule(nil, to("svc-b", 1)))
	r2 := route("team-c", "two", 30*time.Minute, "", []string{"c.example"}, rule(nil, to("svc-c", 1)))
	l := &looks{gw: sharedGateway(), claims: kept}
	tr := l.at(t0.Add(-time.Hour), []*gatewayv1.HTTPRoute{r2, r1}, nil)
	a, b, c := tr.Claims.Hosts["a.example"].Since, tr.Claims.Hosts["b.example"].Since, tr.Claims.Hosts["c.example"].Since
	if !a.Before(b) || !b.Before(c) {
		t.Errorf("since %v, %v, %v: want the kept claim first, then the older route's", a, b, c)
	}
}
