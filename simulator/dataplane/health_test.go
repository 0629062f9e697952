package dataplane_test

import (
	"net/http"
	"net/netip"
	"sync/atomic"
	"testing"
	"time"

	"github.com/example/cloud-provider-example/exampleapi"
	"github.com/example/cloud-provider-example/simulator/dataplane"
)

// healthEndpoint answers GET /healthz at addr with 200 while ok, else 503.
func healthEndpoint(t *testing.T, addr string, ok *atomic.Bool) {
	t.Helper()
	srv := &http.Server{ReadHeaderTimeout: time.Second, Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/healthz" || !ok.Load() {
			w.WriteHeader(http.StatusServiceUnavailable)
		}
	})}
	serve(t, addr, srv)
}

// Targets are probed by the load balancer's health check: one that fails
// it takes no request, one that passes it again (its healthy threshold)
// comes back, one whose check port refuses never serves.
func TestHealthChecks(t *testing.T) {
	var a1, a2 atomic.Bool
	a1.Store(true)
	for _, b := range []struct {
		addr, pod string
		ok        *atomic.Bool
	}{{"10.0.0.1", "a1", &a1}, {"10.0.0.2", "a2", &a2}, {"10.0.0.3", "a3", nil}} {
		httpBackend(t, b.addr+":30080", b.pod)
		if b.ok != nil {
			healthEndpoint(t, b.addr+":30099", b.ok)
		}
	}
	lb := newLB("lb-1", []exampleapi.Listener{{Protocol: "http", Port: 80, TargetPort: 30080}}, nil)
	lb.HealthCheck = &exampleapi.HealthCheck{Protocol: "http", Port: 30099, Path: "/healthz",
		IntervalSeconds: 1, TimeoutSeconds: 1, HealthyThreshold: 2, UnhealthyThreshold: 2}
	plane := func(lb exampleapi.LoadBalancer) *dataplane.Plane {
		return &dataplane.Plane{LoadBalancers: []dataplane.LoadBalancer{{LoadBalancer: lb, Addrs: []netip.Addr{lbAddr},
			Own: []dataplane.Target{target("i-1", "10.0.0.1"), target("i-2", "10.0.0.2"), target("i-3", "10.0.0.3")}}}}
	}
	s := start(t, plane(lb))

	reached := func() map[string]int {
		pods := map[string]int{}
		for range 12 {
			if res, a := get(t, noRedirects, "http://203.0.113.10/", "web"); res.StatusCode == http.StatusOK {
				pods[a.Pod]++
			} else {
				pods[itoa(res.StatusCode)]++
			}
		}
		return pods
	}
	eventually(t, func() bool { return reached()["a1"] == 12 })
	a2.Store(true)
	eventually(t, func() bool { p := reached(); return p["a1"] == 6 && p["a2"] == 6 })
	// A changed check keeps the targets where they stood: no request
	// fails while the new one first probes.
	changed := lb
	check := *lb.HealthCheck
	check.HealthyThreshold = 3
	changed.HealthCheck = &check
	if err := s.Swap(plane(changed)); err != nil {
		t.Fatal(err)
	}
	if p := reached(); p["a1"] != 6 || p["a2"] != 6 {
		t.Fatalf("right after the check changed: %v", p)
	}
	a1.Store(false)
	eventually(t, func() bool { return reached()["a2"] == 12 })
	a2.Store(false)
	eventually(t, func() bool { return reached()["503"] == 12 })
}
