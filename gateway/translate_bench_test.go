package gateway

import (
	"fmt"
	"testing"
	"time"

	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"
)

// BenchmarkTranslateRoutes: one shared Gateway with n HTTPRoutes of
// their own host names, as BenchmarkRoutes (test/e2e) builds; the
// controller translates it at every route change, so its cost must grow
// about linearly with the routes, not with their square.
// With the platform's catch-all (a route of no host name, the Gateway's
// namespace's, the oldest), every name may need a fence, so each route
// admitted looks for them.
func BenchmarkTranslateRoutes(b *testing.B) {
	for _, catchAll := range []bool{false, true} {
		for _, n := range []int{100, 1000} {
			b.Run(fmt.Sprintf("routes=%d/catch-all=%t", n, catchAll), func(b *testing.B) {
				routes := make([]*gatewayv1.HTTPRoute, n)
				for i := range routes {
					routes[i] = route(fmt.Sprintf("team-%d", i%10), fmt.Sprintf("r-%d", i), time.Duration(n-i)*time.Minute, "",
						[]string{fmt.Sprintf("r-%d.example", i)}, rule(nil, to("svc-a", 1)))
				}
				if catchAll {
					routes = append(routes, route("infra", "default", time.Duration(n+1)*time.Minute, "", nil, rule(nil, to("svc-a", 1))))
				}
				l := &looks{gw: sharedGateway()}
				l.at(t0, routes, nil)
				b.ResetTimer()
				for b.Loop() {
					if tr := l.at(t0, routes, nil); len(tr.Rules) != len(routes) {
						b.Fatalf("%d rules, want %d", len(tr.Rules), len(routes))
					}
				}
			})
		}
	}
}

// BenchmarkTranslateEvictions: the Gateway of BenchmarkTranslateRoutes
// (1,000 routes) with team-x's 40 host names beneath its own 40 rules
// without a host name, and the platform's catch-all, which makes 1,600
// copies of them, in team-x's share: the oldest, team-x's newest rules
// are refused as they are admitted (one try); the newest, team-x is past
// its share at the end of the look and the look is made again without
// its 37 newest such routes (evictions.go: two tries).
func BenchmarkTranslateEvictions(b *testing.B) {
	for _, newest := range []bool{false, true} {
		b.Run(fmt.Sprintf("catch-all-newest=%t", newest), func(b *testing.B) {
			const n = 1000
			var routes []*gatewayv1.HTTPRoute
			for i := range n {
				routes = append(routes, route(fmt.Sprintf("team-%d", i%10), fmt.Sprintf("r-%d", i), time.Duration(n-i)*time.Minute+2*time.Hour, "",
					[]string{fmt.Sprintf("r-%d.example", i)}, rule(nil, to("svc-a", 1))))
			}
			routes = append(routes, hostsAndPaths("team-x", "names", 2*time.Hour, 40, 1))
			for i := range 40 {
				routes = append(routes, route("team-x", fmt.Sprintf("w%02d", i), 2*time.Hour-time.Duration(i+1)*time.Minute, "", nil,
					rule([]gatewayv1.HTTPRouteMatch{prefix(fmt.Sprintf("/w%d", i))}, to("svc-a", 1))))
			}
			age := time.Minute
			if !newest {
				age = 100 * time.Hour
			}
			routes = append(routes, route("infra", "default", age, "", nil, rule(nil, to("svc-a", 1))))
			l := &looks{gw: sharedGateway()}
			l.at(t0, routes, nil)
			b.ResetTimer()
			for b.Loop() {
				tr := l.at(t0, routes, nil)
				if p := httpParent(b, tr, "team-x", "w03"); p.Accepted.Reason != string(ReasonRuleBudgetExceeded) {
					b.Fatalf("team-x/w03: %+v, want refused for its share", p.Accepted)
				}
				if p := httpParent(b, tr, "team-x", "w02"); p.Accepted.Reason != "Accepted" {
					b.Fatalf("team-x/w02: %+v, want accepted", p.Accepted)
				}
			}
		})
	}
}
