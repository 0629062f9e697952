package routing

import (
	"errors"
	"maps"
	"net/http"
	"slices"
	"testing"

	"github.com/example/cloud-provider-example/exampleapi"
)

// decide reads nothing but its arguments: the pools' targets come from
// the caller (the store for the http-requests endpoint, a swapped view
// for the data plane).
func TestDecide(t *testing.T) {
	web := exampleapi.Listener{Protocol: "http", Port: 80, TargetPort: 30080}
	var lb exampleapi.LoadBalancer
	lb.Listeners = []exampleapi.Listener{web, {Protocol: "tcp", Port: 5432, TargetPort: 30432}}
	lb.Rules = []exampleapi.Rule{
		{Name: "api", ListenerPort: 80, Priority: 2, PathType: exampleapi.PathPrefix, Path: "/api",
			Backends:       []exampleapi.RuleBackend{{TargetPoolID: "tp-empty", Port: 8080, Weight: 1}, {TargetPoolID: "tp-a", Port: 8080, Weight: 3}},
			RequestHeaders: &exampleapi.HeaderModifier{Set: []exampleapi.HeaderMatch{{Name: "x-route", Value: "api"}}}},
		{Name: "gone", ListenerPort: 80, Priority: 1, Hostnames: []string{"old.example.test"},
			FixedResponse: &exampleapi.FixedResponse{StatusCode: http.StatusGone}},
		{Name: "none", ListenerPort: 80, Priority: 3, PathType: exampleapi.PathExact, Path: "/none",
			Backends: []exampleapi.RuleBackend{{TargetPoolID: "tp-empty", Port: 8080, Weight: 1}}},
		{Name: "unweighed", ListenerPort: 80, Priority: 4, PathType: exampleapi.PathExact, Path: "/zero",
			Backends: []exampleapi.RuleBackend{{TargetPoolID: "tp-a", Port: 8080, Weight: 0}}},
		{Name: "versions", ListenerPort: 80, Priority: 5, PathType: exampleapi.PathRegex, Path: "/v[0-9]+/(cart|orders)",
			FixedResponse: &exampleapi.FixedResponse{StatusCode: http.StatusTeapot}},
	}
	targets := func(id string) (int, error) {
		switch id {
		case "tp-a":
			return 2, nil
		case "tp-empty":
			return 0, nil
		}
		return 0, errors.New("no such pool")
	}
	get := func(host, path string) exampleapi.SimulatedRequest {
		return exampleapi.SimulatedRequest{ListenerPort: 80, Host: host, Path: path, Method: http.MethodGet, Headers: map[string]string{"accept": "*/*"}}
	}
	for _, c := range []struct {
		name     string
		req      exampleapi.SimulatedRequest
		status   int
		priority int
		pools    []string
		headers  map[string]string
	}{
		{"prefix, serving backends only, headers set", get("shop.example.test", "/api/v1"), http.StatusOK, 2, []string{"tp-a"},
			map[string]string{"Accept": "*/*", "X-Route": "api"}},
		{"lowest priority first: a fixed response", get("OLD.example.test:80", "/api"), http.StatusGone, 1, nil, nil},
		{"no rule matches", get("shop.example.test", "/apis"), http.StatusNotFound, 0, nil, nil},
		{"no backend with targets", get("shop.example.test", "/none"), http.StatusServiceUnavailable, 3, nil, nil},
		{"no backend with weight", get("shop.example.test", "/zero"), http.StatusInternalServerError, 4, nil, nil},
		{"a regex path matches the whole path", get("shop.example.test", "/v2/orders"), http.StatusTeapot, 5, nil, nil},
		{"a regex path matches nothing longer", get("shop.example.test", "/v2/orders/7"), http.StatusNotFound, 0, nil, nil},
		{"a regex path matches nothing shorter", get("shop.example.test", "/x/v2/cart"), http.StatusNotFound, 0, nil, nil},
	} {
		d, err := Decide(lb, nil, web, c.req, targets)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		var pools []string
		for _, b := range d.Backends {
			pools = append(pools, b.TargetPoolID)
		}
		if d.Status != c.status || d.Priority != c.priority || !slices.Equal(pools, c.pools) || !maps.Equal(d.Headers, c.headers) {
			t.Errorf("%s: %+v", c.name, d)
		}
	}

	// A listener without rules forwards to the load balancer's targets,
	// and a connection carries no headers.
	tcp := lb.Listeners[1]
	d, err := Decide(lb, nil, tcp, exampleapi.SimulatedRequest{ListenerPort: 5432}, targets)
	if err != nil || d.Status != http.StatusServiceUnavailable {
		t.Fatalf("no rules, no targets: %+v %v", d, err)
	}
	lb.TargetPoolID = "tp-a"
	if d, err = Decide(lb, nil, tcp, exampleapi.SimulatedRequest{ListenerPort: 5432}, targets); err != nil || d.Status != http.StatusOK || !d.OwnTargets || d.Headers != nil {
		t.Fatalf("no rules, the pool's targets: %+v %v", d, err)
	}
	// A redirecting listener answers before any rule.
	redirect := web
	redirect.RedirectToHTTPSPort = 8443
	if d, _ := Decide(lb, nil, redirect, get("shop.example.test", "/api"), targets); d.Status != http.StatusMovedPermanently || d.Location != "https://shop.example.test:8443/api" {
		t.Fatalf("redirect: %+v", d)
	}
	// Query parameters match a name's first value; the rule's response
	// changes go with its answer, forwarded or its own.
	respond := &exampleapi.HeaderModifier{Set: []exampleapi.HeaderMatch{{Name: "X-Zoo", Value: "1"}}}
	lb.Rules = append(lb.Rules,
		exampleapi.Rule{Name: "whale", ListenerPort: 80, Priority: 15, QueryParams: []exampleapi.QueryParamMatch{{Name: "animal", Value: "whale"}},
			Backends: []exampleapi.RuleBackend{{TargetPoolID: "tp-a", Port: 8080, Weight: 1}}, ResponseHeaders: respond},
		exampleapi.Rule{Name: "moved", ListenerPort: 80, Priority: 16, QueryParams: []exampleapi.QueryParamMatch{{Name: "animal", Value: "seal"}},
			Redirect: &exampleapi.Redirect{StatusCode: http.StatusFound}, ResponseHeaders: respond})
	for query, want := range map[string]int{"animal=whale&animal=seal": http.StatusOK, "animal=seal": http.StatusFound, "Animal=whale": http.StatusNotFound} {
		req := get("zoo.example.test", "/zoo")
		req.Query = query
		d, err := Decide(lb, nil, web, req, targets)
		if err != nil || d.Status != want || (want != http.StatusNotFound) != (d.ResponseModifier == respond) {
			t.Errorf("?%s: %+v %v, want %d", query, d, err, want)
		}
	}
	// A redirect replaces the path its rule's prefix matched; a rewrite
	// forwards with a new host and path.
	lb.Rules = append(lb.Rules,
		exampleapi.Rule{Name: "moved", ListenerPort: 80, Priority: 7, PathType: exampleapi.PathPrefix, Path: "/old",
			Redirect: &exampleapi.Redirect{StatusCode: http.StatusFound, PathPrefix: "/new"}},
		exampleapi.Rule{Name: "rewritten", ListenerPort: 80, Priority: 8, PathType: exampleapi.PathPrefix, Path: "/v1",
			Backends: []exampleapi.RuleBackend{{TargetPoolID: "tp-a", Port: 8080, Weight: 1}},
			Rewrite:  &exampleapi.Rewrite{Hostname: "backend.internal", PathPrefix: "/v2"}})
	if d, _ := Decide(lb, nil, web, get("shop.example.test", "/old/a"), targets); d.Location != "http://shop.example.test/new/a" || d.LocationPath != "/new/a" {
		t.Errorf("redirect of a prefix: %+v", d)
	}
	if d, _ := Decide(lb, nil, web, get("shop.example.test", "/v1/items"), targets); d.Status != http.StatusOK || d.RewriteHost != "backend.internal" ||
		d.RewritePath != "/v2/items" {
		t.Errorf("rewrite: %+v", d)
	}
	// A pool the store cannot read fails the decision, naming the rule.
	lb.Rules[0].Backends[1].TargetPoolID = "tp-missing"
	if _, err := Decide(lb, nil, web, get("shop.example.test", "/api"), targets); err == nil {
		t.Fatal("an unreadable pool made a decision")
	}
}

// A session cookie's Path is a prefix the browser sends it back on: a
// regex path's literal beginning to its last /, never the pattern.
func TestCookiePath(t *testing.T) {
	for _, c := range []struct{ pathType, path, want string }{
		{"", "", "/"},
		{exampleapi.PathPrefix, "/api", "/api"},
		{exampleapi.PathExact, "/cart", "/cart"},
		{exampleapi.PathRegex, "/api/v[0-9]+/(cart|orders)", "/api/"},
		{exampleapi.PathRegex, "/v[0-9]+/.*", "/"},
		{exampleapi.PathRegex, "/items/[0-9]+", "/items/"},
		{exampleapi.PathRegex, "(?:/shop)/[^/]+", "/shop/"},
		{exampleapi.PathRegex, ".*", "/"},
	} {
		if got := cookiePath(exampleapi.Rule{PathType: c.pathType, Path: c.path}); got != c.want {
			t.Errorf("cookiePath(%s %q) = %q, want %q", c.pathType, c.path, got, c.want)
		}
	}
}
