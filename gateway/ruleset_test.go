package gateway

import (
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"k8s.io/utils/ptr"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/example/cloud-provider-example/lbmodel"
)

// A set with builds shares its slices with the admitted one: what a unit
// refused added is never seen through the admitted set, nor is an
// admitted rule changed under it, and the next unit builds from the
// admitted set alone.
func TestRuleSetWith(t *testing.T) {
	cand := func(name, listenerHost, host string) candidate {
		return candidate{rule: lbmodel.Rule{Name: name, Hostname: host}, listenerHost: listenerHost}
	}
	unitOf := func(cs ...candidate) *unit { return &unit{http: cs} }
	var s ruleSet
	s = s.with(unitOf(cand("a", "*.example", "a.example"), cand("b", "", "")), nil)
	s.keep()

	refused := s.with(unitOf(cand("a", "a.example", "a.example"), cand("c", "", "c.example")), nil)
	if len(refused.http) != 3 || refused.http[0].listenerHost != "a.example" {
		t.Fatalf("with: %+v, want a through its more specific listener, and c", refused.http)
	}
	if len(s.http) != 2 || s.http[0].listenerHost != "*.example" || s.wide != 1 {
		t.Fatalf("admitted set changed by a unit not admitted: %+v (wide %d)", s.http, s.wide)
	}

	next := s.with(unitOf(cand("d", "", "d.example"), cand("d", "", "d.example")), nil)
	next.keep()
	if names := []string{next.http[0].rule.Name, next.http[1].rule.Name, next.http[2].rule.Name}; len(next.http) != 3 || names[2] != "d" {
		t.Fatalf("next: %q, want a, b, d once", names)
	}
	if _, c := next.named["c"]; next.named["d"] != 2 || c {
		t.Errorf("named %v, want d at 2 and no c", next.named)
	}
}

// The fences counted as routes are admitted (fenceCount: only the host
// names a route brings, when it brings no rule that may widen) are those
// the admitted rules need, counted whole: on random shared Gateways of
// host names, wildcards, rules without one, catch-alls or not, held
// names and listeners of their own host names.
func TestFencesCountedAsNeeded(t *testing.T) {
	checked := 0
	testHookFenced = func(counted, need int) {
		checked++
		if counted != need {
			t.Fatalf("fences counted %d, the admitted rules need %d", counted, need)
		}
	}
	defer func() { testHookFenced = nil }()
	rnd := rand.New(rand.NewPCG(1, 2))
	hosts := []string{"a.example", "b.example", "*.example", "c.a.example", "*.a.example", "d.example"}
	for range 300 {
		gw := gateway(httpListener("http", 80, "", gatewayv1.NamespacesFromAll), httpListener("a", 80, "*.a.example", gatewayv1.NamespacesFromAll),
			httpListener("alt", 8080, "", gatewayv1.NamespacesFromAll))
		claims := Claims{Hosts: map[string]HostClaim{}}
		for _, h := range hosts {
			if rnd.IntN(4) == 0 {
				claims.Hosts[h] = HostClaim{Namespace: fmt.Sprintf("team-%d", rnd.IntN(3)), Since: t0.Add(-time.Hour), ReleasedAt: ptr.To(t0.Add(-time.Minute))}
			}
		}
		var routes []*gatewayv1.HTTPRoute
		for i := range 2 + rnd.IntN(8) {
			var hs []string
			for _, h := range hosts {
				if rnd.IntN(3) == 0 {
					hs = append(hs, h)
				}
			}
			var ms []gatewayv1.HTTPRouteMatch
			for k := range rnd.IntN(3) {
				ms = append(ms, prefix(fmt.Sprintf("/p%d", k)))
			}
			r := route(fmt.Sprintf("team-%d", rnd.IntN(3)), fmt.Sprintf("r%d", i), time.Duration(rnd.IntN(100))*time.Minute, "", hs, rule(ms, to("svc-a", 1)))
			if rnd.IntN(3) == 0 {
				r.Spec.ParentRefs[0].Port = ptr.To(gatewayv1.PortNumber(8080))
			}
			routes = append(routes, r)
		}
		(&looks{gw: gw, claims: claims}).at(t0, routes, nil)
	}
	if checked < 500 {
		t.Errorf("%d routes admitted, want many more", checked)
	}
}
