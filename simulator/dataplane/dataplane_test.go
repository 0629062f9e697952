package dataplane_test

import (
	"crypto/tls"
	"encoding/json"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/netip"
	"slices"
	"testing"
	"time"

	"github.com/example/cloud-provider-example/exampleapi"
	"github.com/example/cloud-provider-example/internal/echo"
	"github.com/example/cloud-provider-example/internal/netns"
	"github.com/example/cloud-provider-example/simulator/dataplane"
	"github.com/example/cloud-provider-example/simulator/simtest"
)

// The whole test binary runs in a network namespace of its own where the
// cloud's pools are local (simtest.Prefixes), and so is the pod CIDR the
// ip target tests route: the tests bind load balancers', instances' and
// pods' addresses as the cloud and a cluster would.
func TestMain(m *testing.M) {
	netns.Main(m.Run, append(slices.Clone(simtest.Prefixes), podCIDR)...)
}

var podCIDR = netip.MustParsePrefix("10.244.0.0/16")

var lbAddr = netip.MustParseAddr("203.0.113.10")

// start is a data plane serving p, closed with the test.
func start(t *testing.T, p *dataplane.Plane) *dataplane.Server {
	t.Helper()
	s := dataplane.New(slog.New(slog.NewTextHandler(io.Discard, nil)))
	t.Cleanup(s.Close)
	if err := s.Swap(p); err != nil {
		t.Fatal(err)
	}
	return s
}

// listen binds addr in the namespace, closed with the test.
func listen(t *testing.T, network, addr string) net.Listener {
	t.Helper()
	ln, err := net.Listen(network, addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = ln.Close() })
	return ln
}

// serve serves srv at addr in the namespace until the test ends (over
// TLS if srv has a TLSConfig).
func serve(t *testing.T, addr string, srv *http.Server) {
	t.Helper()
	ln := listen(t, "tcp", addr)
	if srv.TLSConfig != nil {
		ln = tls.NewListener(ln, srv.TLSConfig)
	}
	go func() { _ = srv.Serve(ln) }() // ends with Close
	t.Cleanup(func() { _ = srv.Close() })
}

// server is a test backend's server of h.
func server(h http.Handler) *http.Server {
	return &http.Server{Handler: h, ReadHeaderTimeout: 5 * time.Second}
}

// httpBackend serves echo answers as pod at addr.
func httpBackend(t *testing.T, addr, pod string) {
	t.Helper()
	serve(t, addr, server(echo.Handler(pod, "test")))
}

// newLB is load balancer id as applied, with listeners ls and rules.
func newLB(id string, ls []exampleapi.Listener, rules []exampleapi.Rule) exampleapi.LoadBalancer {
	var lb exampleapi.LoadBalancer
	lb.ID, lb.Status, lb.Listeners, lb.Rules = id, exampleapi.LBStatusActive, ls, rules
	return lb
}

func target(id, addr string) dataplane.Target {
	return dataplane.Target{ID: id, Addr: netip.MustParseAddr(addr)}
}

// noRedirects is a client that shows redirects rather than following
// them, and opens a connection per request (as the conformance suite's).
var noRedirects = &http.Client{
	Timeout:       5 * time.Second,
	Transport:     &http.Transport{DisableKeepAlives: true},
	CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
}

// reply is what a GET got: its status, headers and TLS state, and the
// echo answer (if any).
type reply struct {
	StatusCode int
	Proto      string // the protocol of the answer
	Header     http.Header
	TLS        *tls.ConnectionState
}

// get sends GET url with Host host (none: the URL's) and reads the echo answer (if any).
func get(t *testing.T, c *http.Client, url, host string) (reply, echo.Answer) {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Host = host
	res, err := c.Do(req)
	if err != nil {
		t.Fatalf("GET %s (Host %s): %v", url, host, err)
	}
	defer res.Body.Close()
	body, _ := io.ReadAll(res.Body)
	var a echo.Answer
	if res.Header.Get("Content-Type") == "application/json" {
		if err := json.Unmarshal(body, &a); err != nil {
			t.Fatalf("GET %s: %v: %s", url, err, body)
		}
	}
	return reply{StatusCode: res.StatusCode, Proto: res.Proto, Header: res.Header, TLS: res.TLS}, a
}

// status is the status of GET url, the body read and closed.
func status(c *http.Client, url string) (int, error) {
	res, err := c.Get(url)
	if err != nil {
		return 0, err
	}
	defer res.Body.Close()
	_, _ = io.Copy(io.Discard, res.Body)
	return res.StatusCode, nil
}

// An http listener serves each request by its rules: host, path and
// query matches by priority, weights by smooth weighted round robin and
// the pool's targets in turn, request and response header changes, fixed
// answers, redirects with the query kept, and 503 where the rule's pools
// have no target.
func TestHTTPFollowsTheRules(t *testing.T) {
	httpBackend(t, "10.0.0.1:30080", "a1")
	httpBackend(t, "10.0.0.2:30080", "a2")
	httpBackend(t, "10.0.0.3:30081", "b1")
	lb := newLB("lb-1", []exampleapi.Listener{{Protocol: "http", Port: 80, TargetPort: 30080}},
		[]exampleapi.Rule{
			{ListenerPort: 80, Priority: 1, Hostnames: []string{"shop.example.test"}, PathType: exampleapi.PathPrefix, Path: "/api",
				Backends:       []exampleapi.RuleBackend{{TargetPoolID: "tp-a", Port: 30080, Weight: 3}, {TargetPoolID: "tp-b", Port: 30081, Weight: 1}},
				RequestHeaders: &exampleapi.HeaderModifier{Set: []exampleapi.HeaderMatch{{Name: "x-route", Value: "api"}}, Remove: []string{"x-secret"}}},
			{ListenerPort: 80, Priority: 2, PathType: exampleapi.PathExact, Path: "/gone", FixedResponse: &exampleapi.FixedResponse{StatusCode: http.StatusGone}},
			{ListenerPort: 80, Priority: 3, PathType: exampleapi.PathPrefix, Path: "/old", Redirect: &exampleapi.Redirect{Scheme: "https", StatusCode: http.StatusMovedPermanently},
				ResponseHeaders: &exampleapi.HeaderModifier{Set: []exampleapi.HeaderMatch{{Name: "Cache-Control", Value: "no-store"}}}},
			{ListenerPort: 80, Priority: 4, QueryParams: []exampleapi.QueryParamMatch{{Name: "animal", Value: "whale"}},
				Backends: []exampleapi.RuleBackend{{TargetPoolID: "tp-b", Port: 30081, Weight: 1}},
				ResponseHeaders: &exampleapi.HeaderModifier{Set: []exampleapi.HeaderMatch{{Name: "x-set", Value: "rule"}},
					Add: []exampleapi.HeaderMatch{{Name: "x-add", Value: "rule"}}, Remove: []string{"x-remove"}}},
			{ListenerPort: 80, Priority: 5, Backends: []exampleapi.RuleBackend{{TargetPoolID: "tp-empty", Port: 30080, Weight: 1}}},
		})
	start(t, &dataplane.Plane{LoadBalancers: []dataplane.LoadBalancer{{LoadBalancer: lb, Addrs: []netip.Addr{lbAddr},
		Pools: map[string][]dataplane.Target{
			"tp-a": {target("i-1", "10.0.0.1"), target("i-2", "10.0.0.2")},
			"tp-b": {target("i-3", "10.0.0.3")},
		}}}})

	pods := map[string]int{}
	for range 100 {
		req, err := http.NewRequest(http.MethodGet, "http://203.0.113.10/api/items?page=2", nil)
		if err != nil {
			t.Fatal(err)
		}
		req.Host = "Shop.example.test"
		req.Header.Set("X-Secret", "s3cret")
		res, err := noRedirects.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		var a echo.Answer
		err = json.NewDecoder(res.Body).Decode(&a)
		res.Body.Close()
		if err != nil || res.StatusCode != http.StatusOK {
			t.Fatalf("status %d: %v", res.StatusCode, err)
		}
		if a.Path != "/api/items?page=2" || a.Host != "Shop.example.test" || a.Headers["X-Route"][0] != "api" || a.Headers["X-Secret"] != nil ||
			a.Headers["X-Forwarded-For"] == nil {
			t.Fatalf("the backend saw %+v", a)
		}
		pods[a.Pod]++
	}
	if pods["a1"] != 38 || pods["a2"] != 37 || pods["b1"] != 25 {
		t.Errorf("100 requests at 3:1, pool a of two targets: %v", pods)
	}

	if res, _ := get(t, noRedirects, "http://203.0.113.10/gone", "shop.example.test"); res.StatusCode != http.StatusGone {
		t.Errorf("fixed response: %d", res.StatusCode)
	}
	for path, want := range map[string]string{
		"/old/page?q=1":      "https://shop.example.test/old/page?q=1",
		"/old/a%3Fb%20c?q=1": "https://shop.example.test/old/a%3Fb%20c?q=1", // the path as sent
	} {
		res, _ := get(t, noRedirects, "http://203.0.113.10"+path, "shop.example.test")
		if res.StatusCode != http.StatusMovedPermanently || res.Header.Get("Location") != want || res.Header.Get("Cache-Control") != "no-store" {
			t.Errorf("redirect of %s: %d %v", path, res.StatusCode, res.Header)
		}
	}
	// A query parameter's first value routes; the backend's response
	// headers are changed on their way to the client.
	req, err := http.NewRequest(http.MethodGet, "http://203.0.113.10/zoo?animal=whale&animal=seal", nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("X-Echo-Set-Header", "X-Set:backend,X-Add:backend,X-Remove:backend,X-Kept:backend")
	res, err := noRedirects.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	_ = res.Body.Close()
	for name, want := range map[string][]string{"X-Set": {"rule"}, "X-Add": {"backend", "rule"}, "X-Remove": nil, "X-Kept": {"backend"}} {
		if got := res.Header.Values(name); res.StatusCode != http.StatusOK || !slices.Equal(got, want) {
			t.Errorf("?animal=whale: %d, %s %q, want %q", res.StatusCode, name, got, want)
		}
	}
	if res, _ := get(t, noRedirects, "http://203.0.113.10/api", "other.example.test"); res.StatusCode != http.StatusServiceUnavailable {
		t.Errorf("a rule whose pool has no target: %d", res.StatusCode)
	}
}

// A rule's rewrite forwards with its host and path (the query kept); a
// redirect's path replaces the request's, or what the rule's prefix
// matched, escaped in the Location.
func TestHTTPRewritesAndRedirectsPaths(t *testing.T) {
	httpBackend(t, "10.0.0.1:30080", "a1")
	lb := newLB("lb-1", []exampleapi.Listener{{Protocol: "http", Port: 80, TargetPort: 30080}},
		[]exampleapi.Rule{
			{ListenerPort: 80, Priority: 1, PathType: exampleapi.PathPrefix, Path: "/v1",
				Backends: []exampleapi.RuleBackend{{TargetPoolID: "tp-a", Port: 30080, Weight: 1}},
				Rewrite:  &exampleapi.Rewrite{Hostname: "backend.internal", PathPrefix: "/v2"}},
			{ListenerPort: 80, Priority: 2, PathType: exampleapi.PathPrefix, Path: "/old",
				Redirect: &exampleapi.Redirect{StatusCode: http.StatusFound, PathPrefix: "/new"}},
			{ListenerPort: 80, Priority: 3, PathType: exampleapi.PathPrefix, Path: "/gone",
				Redirect: &exampleapi.Redirect{StatusCode: http.StatusMovedPermanently, Path: "/"}},
		})
	start(t, &dataplane.Plane{LoadBalancers: []dataplane.LoadBalancer{{LoadBalancer: lb, Addrs: []netip.Addr{lbAddr},
		Pools: map[string][]dataplane.Target{"tp-a": {target("i-1", "10.0.0.1")}}}}})

	if res, a := get(t, noRedirects, "http://203.0.113.10/v1/items?page=2", "shop.example.test"); res.StatusCode != http.StatusOK ||
		a.Host != "backend.internal" || a.Path != "/v2/items?page=2" {
		t.Errorf("rewrite: %d, the backend saw %s%s", res.StatusCode, a.Host, a.Path)
	}
	for path, want := range map[string]string{
		"/old/a%3Fb?q=1": "http://shop.example.test/new/a%3Fb?q=1", // the new path escaped, the query kept
		"/gone/x":        "http://shop.example.test/",
	} {
		if res, _ := get(t, noRedirects, "http://203.0.113.10"+path, "shop.example.test"); res.Header.Get("Location") != want {
			t.Errorf("redirect of %s: %d %q, want %q", path, res.StatusCode, res.Header.Get("Location"), want)
		}
	}
}
