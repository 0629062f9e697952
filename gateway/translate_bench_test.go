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
