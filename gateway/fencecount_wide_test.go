package gateway

import (
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"k8s.io/utils/ptr"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"
)

// TestFencesCountedAsNeeded's generator, widened by a reviewing helper: more
// ports and listeners, the home namespace's routes (catch-alls on several
// ports: freed), catch-all rules of tenants, rule-less GRPCRoutes.
func TestFencesCountedAsNeededOnManyPorts(t *testing.T) {
	for _, seed := range []uint64{11} {
		t.Run(fmt.Sprintf("seed=%d", seed), func(t *testing.T) {
			scenario, done := watchFences(t)
			defer done()
			rnd := rand.New(rand.NewPCG(seed, 13))
			hosts := []string{"a.example", "b.example", "*.example", "c.a.example", "*.a.example", "d.example", "x.b.a.example", "*.b.a.example"}
			sections := []string{"http", "a", "alt", "wild", "p1", "p2", "p3", "a1", ""}
			nss := []string{"team-0", "team-1", "team-2", "infra"}
			for iter := range 1500 {
				gw := gateway(httpListener("http", 80, "", gatewayv1.NamespacesFromAll), httpListener("a", 80, "*.a.example", gatewayv1.NamespacesFromAll),
					httpListener("alt", 8080, "", gatewayv1.NamespacesFromAll), httpListener("wild", 80, "*.example", gatewayv1.NamespacesFromAll),
					httpListener("p1", 8081, "", gatewayv1.NamespacesFromAll), httpListener("p2", 8082, "", gatewayv1.NamespacesFromAll),
					httpListener("p3", 8083, "*.example", gatewayv1.NamespacesFromAll), httpListener("a1", 8081, "*.a.example", gatewayv1.NamespacesFromAll))
				gw.Spec.AllowedListeners = &gatewayv1.AllowedListeners{Namespaces: &gatewayv1.ListenerNamespaces{From: ptr.To(gatewayv1.NamespacesFromAll)}}
				claims := Claims{Hosts: map[string]HostClaim{}}
				for _, h := range hosts {
					if rnd.IntN(4) == 0 {
						claims.Hosts[h] = HostClaim{Namespace: nss[rnd.IntN(len(nss))], Since: t0.Add(-time.Hour), ReleasedAt: ptr.To(t0.Add(-time.Minute))}
					}
				}
				var sets []*gatewayv1.ListenerSet
				if rnd.IntN(2) == 0 {
					e := entry("s", []int32{80, 9000, 8081}[rnd.IntN(3)], gatewayv1.HTTPProtocolType, []string{"", hosts[rnd.IntN(len(hosts))]}[rnd.IntN(2)])
					e.AllowedRoutes = &gatewayv1.AllowedRoutes{Namespaces: &gatewayv1.RouteNamespaces{From: ptr.To(gatewayv1.NamespacesFromAll)}}
					sets = append(sets, listenerSet(fmt.Sprintf("team-%d", rnd.IntN(3)), "set", 10*time.Hour, e))
				}
				var routes []*gatewayv1.HTTPRoute
				// the platform's catch-alls on some ports
				for i, s := range []string{"http", "alt", "p1", "p2", "p3"} {
					if rnd.IntN(2) == 0 {
						routes = append(routes, route("infra", fmt.Sprintf("default-%d", i), time.Duration(rnd.IntN(100))*time.Minute, s, nil, rule(nil, to("svc-a", 1))))
					}
				}
				for i := range 2 + rnd.IntN(10) {
					var hs []string
					for _, h := range hosts {
						if rnd.IntN(4) == 0 {
							hs = append(hs, h)
						}
					}
					ns := nss[rnd.IntN(len(nss))]
					name := fmt.Sprintf("r%d", i)
					age := time.Duration(rnd.IntN(100)) * time.Minute
					if rnd.IntN(8) == 0 {
						routes = append(routes, emptyGRPC(ns, name, age, hs))
						continue
					}
					var ms []gatewayv1.HTTPRouteMatch
					for k := range rnd.IntN(3) {
						ms = append(ms, prefix(fmt.Sprintf("/p%d", k)))
					}
					r := route(ns, name, age, sections[rnd.IntN(len(sections))], hs, rule(ms, to("svc-a", 1)))
					moreParents(rnd, r, sections, sets, true)
					routes = append(routes, r)
				}
				cns := rnd.IntN(4)
				consent := func(_ RouteKey, owner, _ string) bool { return owner == fmt.Sprintf("team-%d", cns) }
				*scenario = describe(iter, claims, sets, routes, nil)
				Translate(gw, routes, nil, nil, services, Boundary{ListenerSets: sets, Claims: claims, Now: t0, Grace: grace, Consent: consent})
			}
		})
	}
}
