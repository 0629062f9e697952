package simulator_test

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"net/http"
	"strings"
	"testing"

	"github.com/example/cloud-provider-example/exampleapi"
	"github.com/example/cloud-provider-example/simulator/simtest"
)

// routingSetup is an active load balancer with an http listener on 80
// and an https one on 443 (no rules), and three target pools a, b, c of
// one instance each, and an empty one; the client is the real one.
func routingSetup(t *testing.T) (cl *exampleapi.Client, c *api, lb exampleapi.LoadBalancer, pools map[string]string) {
	sim := simtest.Start(t, simtest.WithProvisionDelay(0))
	c = control(t, sim)
	cl, err := exampleapi.New(exampleapi.Options{Endpoint: sim.URL, Token: sim.Token})
	if err != nil {
		t.Fatal(err)
	}
	pools = map[string]string{}
	for _, name := range []string{"a", "b", "c"} {
		n := c.createInstance(instanceReq("n-"+name, "ex-west-1a"))
		pools[name] = c.pools().create(poolReq("pool-"+name, n.ID)).ID
	}
	pools["empty"] = c.pools().create(poolReq("pool-empty")).ID
	spec := lbSpec("gateway")
	spec.Listeners = []exampleapi.Listener{{Protocol: "http", Port: 80, TargetPort: 30080}, {Protocol: "http", Port: 8080, TargetPort: 30080}}
	spec.TargetPoolID = pools["a"]
	return cl, c, c.lbs().create(spec), pools
}

func backend(pool string, port, weight int) exampleapi.RuleBackend {
	return exampleapi.RuleBackend{TargetPoolID: pool, Port: port, Weight: weight}
}

// A listener routes by its rules, the lowest priority first: host names
// (exact and wildcard), path (exact, and prefix by whole elements),
// method, headers and query parameters (a name's first value, names
// case sensitive); a rewrite's host and path; weights share requests exactly; a redirect answers
// with its Location; a fixed response answers with its code, forwarding
// nothing (a host's catch-all 404 keeps its requests from a wildcard
// rule after it); headers are changed before forwarding; no rule: 404;
// no weight: 500; no targets: 503. A listener without rules forwards to
// the load balancer's own targets.
func TestRulesRouteRequests(t *testing.T) {
	cl, _, lb, pools := routingSetup(t)
	ctx := context.Background()
	rules := []exampleapi.Rule{
		{Name: "r1", ListenerPort: 80, Priority: 10, Hostnames: []string{"a.example"}, PathType: "prefix", Path: "/api",
			Backends: []exampleapi.RuleBackend{backend(pools["a"], 30001, 1)},
			RequestHeaders: &exampleapi.HeaderModifier{Set: []exampleapi.HeaderMatch{{Name: "x-route", Value: "api"}},
				Add: []exampleapi.HeaderMatch{{Name: "Via", Value: "gw"}}, Remove: []string{"x-drop"}}},
		{Name: "r2", ListenerPort: 80, Priority: 20, Hostnames: []string{"a.example"}, PathType: "prefix", Path: "/web/",
			Backends: []exampleapi.RuleBackend{backend(pools["b"], 30002, 80), backend(pools["c"], 30003, 20)}},
		{Name: "r3", ListenerPort: 80, Priority: 5, Hostnames: []string{"*.wild.example"}, PathType: "exact", Path: "/x", Method: "POST",
			Headers:  []exampleapi.HeaderMatch{{Name: "X-Env", Value: "canary"}},
			Backends: []exampleapi.RuleBackend{backend(pools["c"], 30003, 1)}},
		{Name: "r4", ListenerPort: 80, Priority: 30, Hostnames: []string{"old.example"},
			Redirect: &exampleapi.Redirect{Scheme: "https", Hostname: "new.example", StatusCode: 301}},
		{Name: "r5", ListenerPort: 8080, Priority: 31, Hostnames: []string{"port.example"}, Redirect: &exampleapi.Redirect{StatusCode: 302}},
		{Name: "r6", ListenerPort: 80, Priority: 40, Hostnames: []string{"none.example"}, Backends: []exampleapi.RuleBackend{backend(pools["a"], 30001, 0)}},
		{Name: "r7", ListenerPort: 80, Priority: 41, Hostnames: []string{"empty.example"}, Backends: []exampleapi.RuleBackend{backend(pools["empty"], 30004, 1)}},
		// A Gateway's listener for www.shop.test, then its catch-all, then
		// a wildcard listener's rule on the same port.
		{Name: "r8", ListenerPort: 80, Priority: 50, Hostnames: []string{"www.shop.test"}, PathType: "prefix", Path: "/cart",
			Backends: []exampleapi.RuleBackend{backend(pools["b"], 30002, 1)}},
		{Name: "r9", ListenerPort: 80, Priority: 51, Hostnames: []string{"www.shop.test"}, FixedResponse: &exampleapi.FixedResponse{StatusCode: 404}},
		{Name: "r10", ListenerPort: 80, Priority: 60, Hostnames: []string{"*.shop.test"}, Backends: []exampleapi.RuleBackend{backend(pools["c"], 30003, 1)}},
		{Name: "r11", ListenerPort: 8080, Priority: 1, PathType: "exact", Path: "/healthz", FixedResponse: &exampleapi.FixedResponse{StatusCode: 200}},
		{Name: "r12", ListenerPort: 80, Priority: 70, Hostnames: []string{"zoo.example"},
			QueryParams: []exampleapi.QueryParamMatch{{Name: "animal", Value: "whale"}}, Backends: []exampleapi.RuleBackend{backend(pools["a"], 30001, 1)}},
		{Name: "r13", ListenerPort: 80, Priority: 71, Hostnames: []string{"zoo.example"}, PathType: "prefix", Path: "/v1",
			Backends: []exampleapi.RuleBackend{backend(pools["a"], 30001, 1)}, Rewrite: &exampleapi.Rewrite{Hostname: "zoo.internal", PathPrefix: "/v2"}},
		{Name: "r14", ListenerPort: 80, Priority: 72, Hostnames: []string{"zoo.example"}, PathType: "prefix", Path: "/old",
			Redirect: &exampleapi.Redirect{PathPrefix: "/new", StatusCode: 302}},
	}
	upd := exampleapi.UpdateLoadBalancerRequest{Listeners: lb.Listeners, HealthCheck: lb.HealthCheck, TargetPoolID: lb.TargetPoolID, Rules: rules}
	got, err := cl.UpdateLoadBalancer(ctx, lb.ID, upd, lb.Version)
	if err != nil {
		t.Fatal(err)
	}
	if len(got.Rules) != len(rules) || got.Rules[2].Headers[0].Value != "canary" || got.Rules[8].FixedResponse.StatusCode != http.StatusNotFound {
		t.Fatalf("rules as stored: %+v", got.Rules)
	}
	send := func(req exampleapi.SimulatedRequest) *exampleapi.RequestOutcome {
		t.Helper()
		if req.ListenerPort == 0 {
			req.ListenerPort = 80
		}
		out, err := cl.SimulateRequests(ctx, lb.ID, req)
		if err != nil {
			t.Fatalf("%+v: %v", req, err)
		}
		return out
	}
	key := func(pool string, port string) string { return pools[pool] + ":" + port }
	for _, c := range []struct {
		name string
		req  exampleapi.SimulatedRequest
		want exampleapi.RequestOutcome
	}{
		{"prefix, host with a port", exampleapi.SimulatedRequest{Host: "A.example:80", Path: "/api/v1", Count: 3},
			exampleapi.RequestOutcome{Status: 200, RulePriority: 10, Backends: map[string]int{key("a", "30001"): 3}}},
		{"prefix is whole elements", exampleapi.SimulatedRequest{Host: "a.example", Path: "/apis"}, exampleapi.RequestOutcome{Status: 404}},
		{"weights", exampleapi.SimulatedRequest{Host: "a.example", Path: "/web", Count: 100},
			exampleapi.RequestOutcome{Status: 200, RulePriority: 20, Backends: map[string]int{key("b", "30002"): 80, key("c", "30003"): 20}}},
		{"wildcard, exact path, method, header", exampleapi.SimulatedRequest{Host: "x.y.wild.example", Path: "/x", Method: "POST",
			Headers: map[string]string{"x-env": "canary"}},
			exampleapi.RequestOutcome{Status: 200, RulePriority: 5, Backends: map[string]int{key("c", "30003"): 1}}},
		{"wildcard needs a label", exampleapi.SimulatedRequest{Host: "wild.example", Path: "/x", Method: "POST",
			Headers: map[string]string{"X-Env": "canary"}}, exampleapi.RequestOutcome{Status: 404}},
		{"method", exampleapi.SimulatedRequest{Host: "a.wild.example", Path: "/x", Headers: map[string]string{"X-Env": "canary"}},
			exampleapi.RequestOutcome{Status: 404}},
		{"header value", exampleapi.SimulatedRequest{Host: "a.wild.example", Path: "/x", Method: "POST",
			Headers: map[string]string{"X-Env": "prod"}}, exampleapi.RequestOutcome{Status: 404}},
		{"redirect to a scheme", exampleapi.SimulatedRequest{Host: "old.example", Path: "/p"},
			exampleapi.RequestOutcome{Status: 301, RulePriority: 30, Location: "https://new.example/p"}},
		{"redirect keeps the listener's port", exampleapi.SimulatedRequest{ListenerPort: 8080, Host: "port.example", Path: "/q"},
			exampleapi.RequestOutcome{Status: 302, RulePriority: 31, Location: "http://port.example:8080/q"}},
		{"rules are the listener's", exampleapi.SimulatedRequest{Host: "port.example", Path: "/q"}, exampleapi.RequestOutcome{Status: 404}},
		{"no weight", exampleapi.SimulatedRequest{Host: "none.example"}, exampleapi.RequestOutcome{Status: 500, RulePriority: 40}},
		{"no targets", exampleapi.SimulatedRequest{Host: "empty.example"}, exampleapi.RequestOutcome{Status: 503, RulePriority: 41}},
		{"the host's own route", exampleapi.SimulatedRequest{Host: "www.shop.test", Path: "/cart/1"},
			exampleapi.RequestOutcome{Status: 200, RulePriority: 50, Backends: map[string]int{key("b", "30002"): 1}}},
		{"fixed response: the host's catch-all", exampleapi.SimulatedRequest{Host: "www.shop.test", Path: "/admin", Count: 3},
			exampleapi.RequestOutcome{Status: 404, RulePriority: 51}},
		{"wildcard after the catch-all", exampleapi.SimulatedRequest{Host: "api.shop.test", Path: "/admin"},
			exampleapi.RequestOutcome{Status: 200, RulePriority: 60, Backends: map[string]int{key("c", "30003"): 1}}},
		{"fixed 200", exampleapi.SimulatedRequest{ListenerPort: 8080, Host: "any.example", Path: "/healthz"},
			exampleapi.RequestOutcome{Status: 200, RulePriority: 1}},
		{"query parameter, its first value", exampleapi.SimulatedRequest{Host: "zoo.example", Query: "animal=whale&animal=dolphin&x=1"},
			exampleapi.RequestOutcome{Status: 200, RulePriority: 70, Backends: map[string]int{key("a", "30001"): 1}}},
		{"query parameter, not its first value", exampleapi.SimulatedRequest{Host: "zoo.example", Query: "animal=dolphin&animal=whale"},
			exampleapi.RequestOutcome{Status: 404}},
		{"query parameter names are case sensitive", exampleapi.SimulatedRequest{Host: "zoo.example", Query: "ANIMAL=whale"},
			exampleapi.RequestOutcome{Status: 404}},
		{"redirect of a prefix", exampleapi.SimulatedRequest{Host: "zoo.example", Path: "/old/a"},
			exampleapi.RequestOutcome{Status: 302, RulePriority: 72, Location: "http://zoo.example/new/a"}},
	} {
		out := send(c.req)
		if out.Status != c.want.Status || out.RulePriority != c.want.RulePriority || out.Location != c.want.Location ||
			!maps.Equal(out.Backends, c.want.Backends) {
			t.Errorf("%s: %+v, want %+v", c.name, out, c.want)
		}
	}

	out := send(exampleapi.SimulatedRequest{Host: "a.example", Path: "/api",
		Headers: map[string]string{"x-route": "client", "via": "proxy", "X-Drop": "1", "Accept": "*/*"}})
	if want := map[string]string{"X-Route": "api", "Via": "proxy, gw", "Accept": "*/*"}; !maps.Equal(out.RequestHeaders, want) {
		t.Errorf("forwarded headers %v, want %v", out.RequestHeaders, want)
	}
	if out := send(exampleapi.SimulatedRequest{Host: "zoo.example", Path: "/v1/a"}); out.RequestHost != "zoo.internal" || out.RequestPath != "/v2/a" {
		t.Errorf("rewrite: %+v, want zoo.internal/v2/a", out)
	}
	// A fixed response forwards nothing, headers included.
	if out := send(exampleapi.SimulatedRequest{Host: "www.shop.test", Headers: map[string]string{"Accept": "*/*"}}); out.RequestHeaders != nil || out.Backends != nil {
		t.Errorf("fixed response forwarded: %+v", out)
	}

	// Rules only on port 80: port 8080 forwards everything to the load
	// balancer's targets once its rules are gone.
	upd.Rules = rules[:1]
	if _, err := cl.UpdateLoadBalancer(ctx, lb.ID, upd, 0); err != nil {
		t.Fatal(err)
	}
	if out := send(exampleapi.SimulatedRequest{ListenerPort: 8080, Host: "any", Count: 2}); out.Status != 200 || out.Backends["targets"] != 2 {
		t.Errorf("listener without rules: %+v, want 2 requests to the targets", out)
	}
	// Without targets of its own (a Gateway's load balancer), a listener
	// without rules has nowhere to send a request.
	upd.TargetPoolID = pools["empty"]
	if _, err := cl.UpdateLoadBalancer(ctx, lb.ID, upd, 0); err != nil {
		t.Fatal(err)
	}
	if out := send(exampleapi.SimulatedRequest{ListenerPort: 8080, Host: "any"}); out.Status != 503 {
		t.Errorf("listener without rules, load balancer without targets: %+v, want 503", out)
	}
	var apiErr *exampleapi.APIError
	if _, err := cl.SimulateRequests(ctx, lb.ID, exampleapi.SimulatedRequest{ListenerPort: 9999}); !errors.As(err, &apiErr) || apiErr.StatusCode != http.StatusBadRequest {
		t.Errorf("a port without a listener: %v, want a 400", err)
	}
	if _, err := cl.SimulateRequests(ctx, lb.ID, exampleapi.SimulatedRequest{ListenerPort: 80, Query: "a=%zz"}); !errors.As(err, &apiErr) ||
		!strings.HasPrefix(apiErr.Message, "query:") {
		t.Errorf("a malformed query: %v, want a 400 naming it", err)
	}
}

// Bad rules are refused naming the field; a pool a rule forwards to must
// exist in the region and cannot be deleted while a rule uses it.
func TestRulesValidation(t *testing.T) {
	_, c, lb, pools := routingSetup(t)
	base := exampleapi.UpdateLoadBalancerRequest{Listeners: []exampleapi.Listener{
		{Protocol: "http", Port: 80, TargetPort: 30080}, {Protocol: "tcp", Port: 5432, TargetPort: 30432}},
		HealthCheck: lb.HealthCheck, TargetPoolID: lb.TargetPoolID}
	ok := exampleapi.Rule{Name: "r11", ListenerPort: 80, Priority: 1, Backends: []exampleapi.RuleBackend{backend(pools["a"], 30001, 1)}}
	for _, c2 := range []struct {
		name, field string
		change      func(*exampleapi.Rule)
		more        []exampleapi.Rule
	}{
		{"no listener", "rules[0].listener_port", func(r *exampleapi.Rule) { r.ListenerPort = 99 }, nil},
		{"no such listener protocol", "rules[0].listener_protocol", func(r *exampleapi.Rule) { r.ListenerProtocol = "https" }, nil},
		{"tcp listener with conditions", "rules[0].method", func(r *exampleapi.Rule) { r.ListenerPort, r.Method = 5432, "GET" }, nil},
		{"priority", "rules[0].priority", func(r *exampleapi.Rule) { r.Priority = 0 }, nil},
		{"duplicate priority", "rules[1].priority", func(*exampleapi.Rule) {}, []exampleapi.Rule{renamed(ok, "other")}},
		{"duplicate name", "rules[1].name", func(*exampleapi.Rule) {}, []exampleapi.Rule{reprioritized(ok, 2)}},
		{"name", "rules[0].name", func(r *exampleapi.Rule) { r.Name = "a b" }, nil},
		{"host name", "rules[0].hostnames[0]", func(r *exampleapi.Rule) { r.Hostnames = []string{"A.example"} }, nil},
		{"path without type", "rules[0].path_type", func(r *exampleapi.Rule) { r.Path = "/x" }, nil},
		{"relative path", "rules[0].path", func(r *exampleapi.Rule) { r.PathType, r.Path = "prefix", "x" }, nil},
		{"unnormalized path", "rules[0].path", func(r *exampleapi.Rule) { r.PathType, r.Path = "exact", "/a//b" }, nil},
		{"method", "rules[0].method", func(r *exampleapi.Rule) { r.Method = "get" }, nil},
		{"header name", "rules[0].headers[0].name", func(r *exampleapi.Rule) { r.Headers = []exampleapi.HeaderMatch{{Name: "a b"}} }, nil},
		{"header twice", "rules[0].headers[1].name", func(r *exampleapi.Rule) {
			r.Headers = []exampleapi.HeaderMatch{{Name: "x-a", Value: "1"}, {Name: "X-A", Value: "2"}}
		}, nil},
		{"redirect and backends", "rules[0].redirect", func(r *exampleapi.Rule) { r.Redirect = &exampleapi.Redirect{StatusCode: 301} }, nil},
		{"redirect code", "rules[0].redirect.status_code", func(r *exampleapi.Rule) {
			r.Backends, r.Redirect = nil, &exampleapi.Redirect{StatusCode: 304}
		}, nil},
		{"pool id", "rules[0].backends[0].target_pool_id", func(r *exampleapi.Rule) { r.Backends[0].TargetPoolID = "lb-1" }, nil},
		{"weight", "rules[0].backends[0].weight", func(r *exampleapi.Rule) { r.Backends[0].Weight = -1 }, nil},
		{"same backend twice", "rules[0].backends[1]", func(r *exampleapi.Rule) { r.Backends = append(r.Backends, r.Backends[0]) }, nil},
		{"pool not found", "rules[0].backends[0].target_pool_id", func(r *exampleapi.Rule) { r.Backends[0].TargetPoolID = "tp-nope" }, nil},
		{"header change", "rules[0].request_headers.remove[0]", func(r *exampleapi.Rule) {
			r.RequestHeaders = &exampleapi.HeaderModifier{Remove: []string{"bad:name"}}
		}, nil},
		{"fixed response and backends", "rules[0].fixed_response", func(r *exampleapi.Rule) {
			r.FixedResponse = &exampleapi.FixedResponse{StatusCode: 404}
		}, nil},
		{"fixed response and redirect", "rules[0].fixed_response", func(r *exampleapi.Rule) {
			r.Backends, r.Redirect, r.FixedResponse = nil, &exampleapi.Redirect{StatusCode: 301}, &exampleapi.FixedResponse{StatusCode: 404}
		}, nil},
		{"fixed response and header changes", "rules[0].fixed_response", func(r *exampleapi.Rule) {
			r.Backends, r.FixedResponse, r.RequestHeaders = nil, &exampleapi.FixedResponse{StatusCode: 404}, &exampleapi.HeaderModifier{}
		}, nil},
		{"fixed response 3xx", "rules[0].fixed_response.status_code", func(r *exampleapi.Rule) {
			r.Backends, r.FixedResponse = nil, &exampleapi.FixedResponse{StatusCode: 302}
		}, nil},
		{"fixed response 1xx", "rules[0].fixed_response.status_code", func(r *exampleapi.Rule) {
			r.Backends, r.FixedResponse = nil, &exampleapi.FixedResponse{StatusCode: 199}
		}, nil},
		{"fixed response above 599", "rules[0].fixed_response.status_code", func(r *exampleapi.Rule) {
			r.Backends, r.FixedResponse = nil, &exampleapi.FixedResponse{StatusCode: 600}
		}, nil},
		{"tcp listener with a fixed response", "rules[0].fixed_response", func(r *exampleapi.Rule) {
			r.ListenerPort, r.Backends, r.FixedResponse = 5432, nil, &exampleapi.FixedResponse{StatusCode: 404}
		}, nil},
		{"query parameter twice", "rules[0].query_params[1].name", func(r *exampleapi.Rule) {
			r.QueryParams = []exampleapi.QueryParamMatch{{Name: "a", Value: "1"}, {Name: "a", Value: "2"}}
		}, nil},
		{"tcp listener with query parameters", "rules[0].query_params", func(r *exampleapi.Rule) {
			r.ListenerPort, r.QueryParams = 5432, []exampleapi.QueryParamMatch{{Name: "a", Value: "1"}}
		}, nil},
		{"response header change", "rules[0].response_headers.add[0].name", func(r *exampleapi.Rule) {
			r.ResponseHeaders = &exampleapi.HeaderModifier{Add: []exampleapi.HeaderMatch{{Name: "bad:name"}}}
		}, nil},
		{"tcp listener with response header changes", "rules[0].response_headers", func(r *exampleapi.Rule) {
			r.ListenerPort, r.ResponseHeaders = 5432, &exampleapi.HeaderModifier{}
		}, nil},
		{"tcp listener with a rewrite", "rules[0].rewrite", func(r *exampleapi.Rule) {
			r.ListenerPort, r.Rewrite = 5432, &exampleapi.Rewrite{Hostname: "a.example"}
		}, nil},
		{"tcp listener with timeouts", "rules[0].timeouts", func(r *exampleapi.Rule) {
			r.ListenerPort, r.Timeouts = 5432, &exampleapi.Timeouts{RequestMS: 500}
		}, nil},
		{"tcp listener with a retry", "rules[0].retry", func(r *exampleapi.Rule) {
			r.ListenerPort, r.Retry = 5432, &exampleapi.Retry{Attempts: 2}
		}, nil},
		{"request timeout out of range", "rules[0].timeouts.request_ms", func(r *exampleapi.Rule) {
			r.Timeouts = &exampleapi.Timeouts{RequestMS: exampleapi.MaxTimeoutMS + 1}
		}, nil},
		{"retry of a 4xx", "rules[0].retry.status_codes[0]", func(r *exampleapi.Rule) {
			r.Retry = &exampleapi.Retry{Attempts: 2, StatusCodes: []int{404}}
		}, nil},
		{"backend protocol", "rules[0].backends[0].protocol", func(r *exampleapi.Rule) { r.Backends[0].Protocol = "http2" }, nil},
		{"tcp listener with a backend protocol", "rules[0].backends[0].protocol", func(r *exampleapi.Rule) {
			r.ListenerPort, r.Backends[0].Protocol = 5432, exampleapi.BackendH2C
		}, nil},
		{"backend TLS without a CA bundle", "rules[0].backends[0].tls.ca_bundle", func(r *exampleapi.Rule) {
			r.Backends[0].TLS = &exampleapi.BackendTLS{ServerName: "a.example"}
		}, nil},
		{"CORS without an origin", "rules[0].cors.allow_origins", func(r *exampleapi.Rule) { r.CORS = &exampleapi.CORS{} }, nil},
		{"tcp listener with CORS", "rules[0].cors", func(r *exampleapi.Rule) {
			r.ListenerPort, r.CORS = 5432, &exampleapi.CORS{AllowOrigins: []string{"*"}}
		}, nil},
		{"permanent session cookie without a timeout", "rules[0].session_persistence.absolute_timeout_seconds", func(r *exampleapi.Rule) {
			r.SessionPersistence = &exampleapi.SessionPersistence{Lifetime: exampleapi.PermanentLifetime}
		}, nil},
		{"tcp listener with session persistence", "rules[0].session_persistence", func(r *exampleapi.Rule) {
			r.ListenerPort, r.SessionPersistence = 5432, &exampleapi.SessionPersistence{}
		}, nil},
		{"tcp listener with a backend TLS", "rules[0].backends[0].tls", func(r *exampleapi.Rule) {
			r.ListenerPort, r.Backends[0].TLS = 5432, &exampleapi.BackendTLS{CABundle: "x", ServerName: "a.example"}
		}, nil},
		{"redirect of a prefix without one", "rules[0].redirect.path_prefix", func(r *exampleapi.Rule) {
			r.Backends, r.Redirect = nil, &exampleapi.Redirect{StatusCode: 302, PathPrefix: "/new"}
		}, nil},
	} {
		r := ok
		r.Backends = append([]exampleapi.RuleBackend(nil), ok.Backends...)
		c2.change(&r)
		upd := base
		upd.Rules = append([]exampleapi.Rule{r}, c2.more...)
		if e := c.apiError(http.StatusBadRequest, "PUT", "/v1/load-balancers/"+lb.ID, upd); !strings.HasPrefix(e.Message, c2.field+":") {
			t.Errorf("%s: %q, want it to name %s", c2.name, e.Message, c2.field)
		}
	}

	// Fixed responses at each end of their ranges, one with an empty
	// backends list (nothing to forward either): valid.
	upd := base
	for i, code := range []int{200, 299, 400, 599} {
		r := exampleapi.Rule{Name: fmt.Sprintf("fixed-%d", code), ListenerPort: 80, Priority: i + 1, FixedResponse: &exampleapi.FixedResponse{StatusCode: code}}
		if i == 0 {
			r.Backends = []exampleapi.RuleBackend{}
		}
		upd.Rules = append(upd.Rules, r)
	}
	c.must(http.StatusOK, "PUT", "/v1/load-balancers/"+lb.ID, upd, nil)

	// An h2c backend is kept as given.
	upd = base
	upd.Rules = []exampleapi.Rule{{Name: "h2c", ListenerPort: 80, Priority: 1, Backends: []exampleapi.RuleBackend{
		{TargetPoolID: pools["a"], Port: 30001, Weight: 1, Protocol: exampleapi.BackendH2C}}}}
	var got exampleapi.LoadBalancer
	c.must(http.StatusOK, "PUT", "/v1/load-balancers/"+lb.ID, upd, &got)
	if p := got.Rules[0].Backends[0].Protocol; p != exampleapi.BackendH2C {
		t.Errorf("an h2c backend reads back as %q", p)
	}

	// In use by a rule, a pool stays.
	upd = base
	upd.Rules = []exampleapi.Rule{{Name: "r12", ListenerPort: 80, Priority: 1, Backends: []exampleapi.RuleBackend{backend(pools["b"], 30002, 1)}}}
	c.must(http.StatusOK, "PUT", "/v1/load-balancers/"+lb.ID, upd, nil)
	if e := c.apiError(http.StatusConflict, "DELETE", "/v1/target-pools/"+pools["b"], nil); !strings.Contains(e.Message, lb.ID) {
		t.Errorf("deleting a pool a rule uses: %q, want it to name %s", e.Message, lb.ID)
	}
}

func renamed(r exampleapi.Rule, name string) exampleapi.Rule {
	r.Name = name
	return r
}

func reprioritized(r exampleapi.Rule, priority int) exampleapi.Rule {
	r.Priority = priority
	return r
}
