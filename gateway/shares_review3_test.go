package gateway

// Cases a third reviewing helper wrote against 7e7f74c, reading the
// evictions as a hostile tenant: each failed there.

import (
	"fmt"
	"testing"
	"time"

	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"
)

// A TCPRoute parked on a listener its namespace's older route took adds
// no rule at its admission (it is given no listener), but usedWithout
// takes its refusal to free len(u.streams): every parked route is a
// "candidate" whose refusal lowers the share, and, the newest, the binary
// search refuses one of them a try, lowering nothing. team-x: a rule
// without a host name of 199 paths, a TCPRoute taking the TCP listener
// (200), and 60 parked TCPRoutes (free). One new name of team-n puts
// team-x at 201: 61 tries refuse the 60 parked routes one by one, then
// the rule. (Parked routes cost nothing: a tenant may hold thousands, and
// each try recounts once per route of the namespace.)
func TestEvictionLeavesParkedRoutes(t *testing.T) {
	gw := gateway(httpListener("http", 80, "", gatewayv1.NamespacesFromAll), l4Listener("tcp", 5432, gatewayv1.TCPProtocolType))
	http := []*gatewayv1.HTTPRoute{route("team-x", "any", 100*time.Hour, "http", nil, paths(199))}
	l4 := []L4Route{l4Route(KindTCPRoute, "team-x", "db", 99*time.Hour, "tcp", nil, "svc-a")}
	const k = 60
	for i := range k {
		l4 = append(l4, l4Route(KindTCPRoute, "team-x", fmt.Sprintf("parked%02d", i), 90*time.Hour-time.Duration(i)*time.Minute, "tcp", nil, "svc-a"))
	}
	tr, n := triesL4(gw, http, l4, Boundary{Now: t0, Grace: grace})
	if n != 1 {
		t.Fatalf("before: %d tries", n)
	}
	wantAccepted(t, tr, "team-x/any")
	http = append(http, hostsAndPaths("team-n", "new", time.Minute, 1, 1))
	tr, n = triesL4(gw, http, l4, Boundary{Claims: tr.Claims, Now: t0.Add(time.Minute), Grace: grace})
	refusedParked := 0
	for i := range k {
		if parentOf(t, tr, KindTCPRoute, "team-x", fmt.Sprintf("parked%02d", i)).Accepted.Reason != "Accepted" {
			refusedParked++
		}
	}
	if n > 3 || refusedParked > 0 {
		t.Errorf("%d tries, %d of team-x's parked TCPRoutes refused (they free nothing); want at most 3 tries and none", n, refusedParked)
	}
	wantAccepted(t, tr, "team-n/new")
}

// The namespace whose newest candidate route is the newest goes first,
// and one with copies counted goes alone: team-m's route w10, newer than
// team-y's rule without a host name (whose copies of team-m's rules put
// team-m past its share once team-z's new names add their 404s to both),
// is refused at the first try, though refusing team-y's rule (past its
// share as well) brings team-m back, and the next look, claims carried,
// refuses team-y's rule at its admission and accepts w10: w10 is refused
// for one look, needlessly. team-m: 10 names, w00…w09 (one path, no host
// name), w10 (20 minutes old): 10 + 11 + 110 copies + 75 404s = 206;
// team-y: 120 paths + 10 + 75 404s = 205. Now a namespace whose share
// holds copies goes last.
func TestEvictionWaitsForTheWiderRulesNamespace(t *testing.T) {
	base := []*gatewayv1.HTTPRoute{hostsAndPaths("team-m", "names", 10*time.Hour, 10, 1)}
	for i := range 10 {
		base = append(base, route("team-m", fmt.Sprintf("w%02d", i), 9*time.Hour-time.Duration(i)*time.Minute, "", nil, paths(1)))
	}
	l := &looks{gw: sharedGateway()}
	if tr := l.at(t0, base, nil); kept(t, tr, "team-m", "w%02d", 10) != 10 {
		t.Fatalf("before: team-m's routes refused")
	}
	routes := append(base,
		route("team-y", "any", time.Hour, "", nil, paths(120)),
		route("team-m", "w10", 20*time.Minute, "", nil, paths(1)),
		hostsAndPaths("team-z", "names", 5*time.Minute, 75, 1))
	for look := range 2 {
		tr, n := triesOf(l.gw, routes, Boundary{Claims: l.claims, Now: t0.Add(time.Duration(look+1) * time.Minute), Grace: grace})
		l.claims = tr.Claims
		wantAccepted(t, tr, "team-z/names", "team-m/names", "team-m/w00")
		if p := httpParent(t, tr, "team-y", "any"); p.Accepted.Reason != string(ReasonRuleBudgetExceeded) {
			t.Errorf("look %d: team-y/any %+v, want refused for its share", look, p.Accepted)
		}
		if got := kept(t, tr, "team-m", "w%02d", 11); got != 11 {
			t.Errorf("look %d (%d tries): team-m keeps %d of its 11 rules without a host name, want all (without team-y's rule it holds 96)", look, n, got)
		}
	}
}

// Routes refused at admission for their share cost nothing, and an
// eviction refuses a route older than them: at the next try the next of
// them fits in what it freed, and a newer team's new name (its 404,
// unchecked) puts the namespace past its share again, one try each.
// team-x: a rule without a host name (99 paths; 50 404s for team-a's held
// names), f00…f99 of one path without a host name each: f00…f50 fill
// the share (200), f51…f99 are refused at admission. team-n's one new
// name: 50 tries, each a whole look of the Gateway (and a recount per
// route of team-x): every new name on the Gateway, a tenant's pile of
// refused routes made the look one try per route. Now its routes refused
// for its share after the oldest evicted are refused with it.
func TestEvictionRefusesTheNewerRoutesPastTheShare(t *testing.T) {
	gw := sharedGateway()
	const k = 100
	http := []*gatewayv1.HTTPRoute{hostsAndPaths("team-a", "names", 200*time.Hour, 50, 1), route("team-x", "any", 100*time.Hour, "", nil, paths(99))}
	for i := range k {
		http = append(http, route("team-x", fmt.Sprintf("f%02d", i), 90*time.Hour-time.Duration(i)*time.Minute, "", nil, paths(1)))
	}
	tr, n := triesOf(gw, http, Boundary{Now: t0, Grace: grace})
	if n != 1 || kept(t, tr, "team-x", "f%02d", k) != 51 {
		t.Fatalf("before: %d tries, team-x keeps %d", n, kept(t, tr, "team-x", "f%02d", k))
	}
	http = append(http, hostsAndPaths("team-n", "new", time.Minute, 1, 1))
	tr, n = triesOf(gw, http, Boundary{Claims: tr.Claims, Now: t0.Add(time.Minute), Grace: grace})
	wantAccepted(t, tr, "team-n/new", "team-x/any")
	if n > 3 {
		t.Errorf("%d tries for team-x past its share by one (a new name of team-n), want at most 3; team-x keeps %d of f00…f99", n, kept(t, tr, "team-x", "f%02d", k))
	}
}
