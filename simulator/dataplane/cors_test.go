package dataplane_test

import (
	"net/http"
	"net/netip"
	"testing"

	"github.com/example/cloud-provider-example/exampleapi"
	"github.com/example/cloud-provider-example/simulator/dataplane"
)

// A rule with CORS answers a preflight from an allowed origin itself
// (204, the Access-Control-Allow-* headers, the backend never asked),
// and one from another origin without them; an allowed origin's other
// requests reach the backend and come back marked, another's unmarked.
// "*" methods and headers answer what the preflight asks; a wildcard host
// takes one or more labels. A redirect's answer is marked as the
// backend's are.
func TestCORS(t *testing.T) {
	httpBackend(t, "10.0.0.8:30080", "web")
	lb := newLB("lb-cors", []exampleapi.Listener{{Protocol: "http", Port: 80, TargetPort: 30080}}, []exampleapi.Rule{
		{ListenerPort: 80, Priority: 0, PathType: exampleapi.PathPrefix, Path: "/moved",
			Redirect: &exampleapi.Redirect{Path: "/cors", StatusCode: http.StatusFound},
			CORS:     &exampleapi.CORS{AllowOrigins: []string{"https://www.foo.com"}}},
		{ListenerPort: 80, Priority: 1, PathType: exampleapi.PathPrefix, Path: "/any",
			Backends: []exampleapi.RuleBackend{{TargetPoolID: "tp-a", Port: 30080, Weight: 1}},
			CORS:     &exampleapi.CORS{AllowOrigins: []string{"*"}, AllowMethods: []string{"*"}, AllowHeaders: []string{"*"}}},
		{ListenerPort: 80, Priority: 2,
			Backends: []exampleapi.RuleBackend{{TargetPoolID: "tp-a", Port: 30080, Weight: 1}},
			CORS: &exampleapi.CORS{AllowOrigins: []string{"https://www.foo.com", "https://*.bar.com"}, AllowMethods: []string{"GET", "OPTIONS"},
				AllowHeaders: []string{"x-header-1", "x-header-2"}, ExposeHeaders: []string{"x-header-3"}, AllowCredentials: true, MaxAgeSeconds: 3600}},
	})
	start(t, &dataplane.Plane{LoadBalancers: []dataplane.LoadBalancer{{LoadBalancer: lb, Addrs: []netip.Addr{lbAddr},
		Pools: map[string][]dataplane.Target{"tp-a": {target("i-1", "10.0.0.8")}}}}})
	// ask is the status and headers of the answer.
	ask := func(method, path, origin, preflight string) (int, http.Header) {
		t.Helper()
		req, err := http.NewRequest(method, "http://"+lbAddr.String()+path, nil)
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Origin", origin)
		if preflight != "" {
			req.Header.Set("Access-Control-Request-Method", preflight)
			req.Header.Set("Access-Control-Request-Headers", "x-header-1, x-header-2")
		}
		res, err := noRedirects.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		_ = res.Body.Close()
		return res.StatusCode, res.Header
	}
	for _, origin := range []string{"https://www.foo.com", "https://xpto.www.bar.com"} {
		code, h := ask(http.MethodOptions, "/cors", origin, "GET")
		if code != http.StatusNoContent || h.Get("Content-Type") != "" || h.Get("Access-Control-Allow-Origin") != origin ||
			h.Get("Access-Control-Allow-Methods") != "GET, OPTIONS" || h.Get("Access-Control-Allow-Headers") != "x-header-1, x-header-2" ||
			h.Get("Access-Control-Expose-Headers") != "x-header-3" || h.Get("Access-Control-Max-Age") != "3600" ||
			h.Get("Access-Control-Allow-Credentials") != "true" {
			t.Errorf("preflight from %s: %d %v", origin, code, h)
		}
		code, h = ask(http.MethodGet, "/cors", origin, "")
		if code != http.StatusOK || h.Get("Content-Type") != "application/json" || h.Get("Access-Control-Allow-Origin") != origin ||
			h.Get("Access-Control-Allow-Credentials") != "true" {
			t.Errorf("GET from %s: %d %v, want the backend's answer, marked", origin, code, h)
		}
	}
	for _, origin := range []string{"https://foobar.com", "https://bar.com"} {
		code, h := ask(http.MethodOptions, "/cors", origin, "GET")
		if code != http.StatusNoContent || h.Get("Access-Control-Allow-Origin") != "" {
			t.Errorf("preflight from %s: %d %v, want 204 unmarked", origin, code, h)
		}
		code, h = ask(http.MethodGet, "/cors", origin, "")
		if code != http.StatusOK || h.Get("Content-Type") != "application/json" || h.Get("Access-Control-Allow-Origin") != "" {
			t.Errorf("GET from %s: %d %v, want the backend's answer, unmarked", origin, code, h)
		}
	}
	if code, h := ask(http.MethodGet, "/moved", "https://www.foo.com", ""); code != http.StatusFound || h.Get("Location") == "" ||
		h.Get("Access-Control-Allow-Origin") != "https://www.foo.com" {
		t.Errorf("GET from an allowed origin to a redirect: %d %v, want the redirect, marked", code, h)
	}
	if _, h := ask(http.MethodOptions, "/any", "https://foobar.com:12345", "PUT"); h.Get("Access-Control-Allow-Origin") != "https://foobar.com:12345" || h.Get("Access-Control-Allow-Methods") != "PUT" ||
		h.Get("Access-Control-Allow-Headers") != "x-header-1, x-header-2" || h.Get("Access-Control-Allow-Credentials") != "" {
		t.Errorf("preflight to a rule of any origin, method and header: %v", h)
	}
}
