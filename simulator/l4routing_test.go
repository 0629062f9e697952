package simulator_test

import (
	"context"
	"errors"
	"maps"
	"net/http"
	"strings"
	"testing"

	"github.com/example/cloud-provider-example/exampleapi"
)

// l4Listeners are a tls listener on 443, tcp and udp on 53, a tcp one on
// 5432 (no rules in the tests) and a udp one alone on 5353.
var l4Listeners = []exampleapi.Listener{
	{Protocol: "tls", Port: 443, TargetPort: 30443}, {Protocol: "tcp", Port: 53, TargetPort: 30053},
	{Protocol: "udp", Port: 53, TargetPort: 30053}, {Protocol: "tcp", Port: 5432, TargetPort: 30432},
	{Protocol: "udp", Port: 5353, TargetPort: 30353},
}

// Connections to tcp, udp and tls listeners go by their rules: a tls one
// by the SNI name (exact, wildcard, case insensitive; none matching: 404,
// the connection reset), tcp and udp ones to the rule of lowest priority,
// tcp/53 and udp/53 each by its own rules (listener_protocol, the
// request's protocol); weights, no weight (500) and no targets (503) as
// for HTTP; a listener without rules forwards to the load balancer's
// targets. No headers are forwarded.
func TestL4RulesRouteConnections(t *testing.T) {
	cl, _, lb, pools := routingSetup(t)
	ctx := context.Background()
	one := func(pool string, port int) []exampleapi.RuleBackend {
		return []exampleapi.RuleBackend{backend(pools[pool], port, 1)}
	}
	rules := []exampleapi.Rule{
		{Name: "db", ListenerPort: 443, Priority: 1, Hostnames: []string{"db.example"}, Backends: one("a", 30001)},
		{Name: "wild", ListenerPort: 443, Priority: 2, Hostnames: []string{"*.example"}, Backends: one("b", 30002)},
		{Name: "many", ListenerPort: 443, Priority: 3, Hostnames: []string{"many.test"},
			Backends: []exampleapi.RuleBackend{backend(pools["b"], 30002, 3), backend(pools["c"], 30003, 1)}},
		{Name: "none", ListenerPort: 443, Priority: 4, Hostnames: []string{"none.test"}, Backends: []exampleapi.RuleBackend{backend(pools["a"], 30001, 0)}},
		{Name: "empty", ListenerPort: 443, Priority: 5, Hostnames: []string{"empty.test"}, Backends: one("empty", 30004)},
		{Name: "dns-tcp", ListenerPort: 53, Priority: 1, Backends: one("a", 30053)},
		{Name: "dns-udp", ListenerPort: 53, ListenerProtocol: "udp", Priority: 1, Backends: one("b", 30053)},
		{Name: "mdns-later", ListenerPort: 5353, Priority: 2, Backends: one("a", 30353)},
		{Name: "mdns", ListenerPort: 5353, Priority: 1, Backends: one("c", 30353)},
	}
	upd := exampleapi.UpdateLoadBalancerRequest{Listeners: l4Listeners, HealthCheck: lb.HealthCheck, TargetPoolID: lb.TargetPoolID, Rules: rules}
	got, err := cl.UpdateLoadBalancer(ctx, lb.ID, upd, lb.Version)
	if err != nil {
		t.Fatal(err)
	}
	if len(got.Rules) != len(rules) || got.Rules[6].ListenerProtocol != "udp" || got.Rules[5].ListenerProtocol != "" {
		t.Fatalf("rules as stored: %+v", got.Rules)
	}
	key := func(pool, port string) string { return pools[pool] + ":" + port }
	for _, c := range []struct {
		name string
		req  exampleapi.SimulatedRequest
		want exampleapi.RequestOutcome
	}{
		{"sni", exampleapi.SimulatedRequest{ListenerPort: 443, Host: "db.example", Count: 2},
			exampleapi.RequestOutcome{Status: 200, RulePriority: 1, Backends: map[string]int{key("a", "30001"): 2}}},
		{"sni ignores case", exampleapi.SimulatedRequest{ListenerPort: 443, Protocol: "tls", Host: "DB.Example"},
			exampleapi.RequestOutcome{Status: 200, RulePriority: 1, Backends: map[string]int{key("a", "30001"): 1}}},
		{"sni wildcard", exampleapi.SimulatedRequest{ListenerPort: 443, Host: "shop.example"},
			exampleapi.RequestOutcome{Status: 200, RulePriority: 2, Backends: map[string]int{key("b", "30002"): 1}}},
		{"wildcard needs a label", exampleapi.SimulatedRequest{ListenerPort: 443, Host: "example"}, exampleapi.RequestOutcome{Status: 404}},
		{"no sni match", exampleapi.SimulatedRequest{ListenerPort: 443, Host: "db.example.org"}, exampleapi.RequestOutcome{Status: 404}},
		{"no sni", exampleapi.SimulatedRequest{ListenerPort: 443}, exampleapi.RequestOutcome{Status: 404}},
		{"sni weights", exampleapi.SimulatedRequest{ListenerPort: 443, Host: "many.test", Count: 4},
			exampleapi.RequestOutcome{Status: 200, RulePriority: 3, Backends: map[string]int{key("b", "30002"): 3, key("c", "30003"): 1}}},
		{"no weight", exampleapi.SimulatedRequest{ListenerPort: 443, Host: "none.test"}, exampleapi.RequestOutcome{Status: 500, RulePriority: 4}},
		{"no targets", exampleapi.SimulatedRequest{ListenerPort: 443, Host: "empty.test"}, exampleapi.RequestOutcome{Status: 503, RulePriority: 5}},
		{"tcp of a shared port", exampleapi.SimulatedRequest{ListenerPort: 53, Count: 3},
			exampleapi.RequestOutcome{Status: 200, RulePriority: 1, Backends: map[string]int{key("a", "30053"): 3}}},
		{"tcp by name", exampleapi.SimulatedRequest{ListenerPort: 53, Protocol: "tcp", Host: "ignored.example"},
			exampleapi.RequestOutcome{Status: 200, RulePriority: 1, Backends: map[string]int{key("a", "30053"): 1}}},
		{"udp of a shared port", exampleapi.SimulatedRequest{ListenerPort: 53, Protocol: "udp", Count: 2},
			exampleapi.RequestOutcome{Status: 200, RulePriority: 1, Backends: map[string]int{key("b", "30053"): 2}}},
		{"udp alone on its port", exampleapi.SimulatedRequest{ListenerPort: 5353, Count: 2},
			exampleapi.RequestOutcome{Status: 200, RulePriority: 1, Backends: map[string]int{key("c", "30353"): 2}}},
		{"udp by name", exampleapi.SimulatedRequest{ListenerPort: 5353, Protocol: "udp"},
			exampleapi.RequestOutcome{Status: 200, RulePriority: 1, Backends: map[string]int{key("c", "30353"): 1}}},
		{"tcp without rules", exampleapi.SimulatedRequest{ListenerPort: 5432, Count: 2},
			exampleapi.RequestOutcome{Status: 200, Backends: map[string]int{"targets": 2}}},
	} {
		out, err := cl.SimulateRequests(ctx, lb.ID, c.req)
		if err != nil {
			t.Errorf("%s: %v", c.name, err)
			continue
		}
		if out.Status != c.want.Status || out.RulePriority != c.want.RulePriority || out.Location != "" ||
			!maps.Equal(out.Backends, c.want.Backends) || out.RequestHeaders != nil {
			t.Errorf("%s: %+v, want %+v", c.name, out, c.want)
		}
	}

	// A connection has no path, method or headers, and names its listener.
	for _, c := range []struct {
		name, field, msg string
		req              exampleapi.SimulatedRequest
	}{
		{"path", "path", "a connection to listener tls/443 has none", exampleapi.SimulatedRequest{ListenerPort: 443, Host: "db.example", Path: "/"}},
		{"method", "method", "tcp/53", exampleapi.SimulatedRequest{ListenerPort: 53, Method: "GET"}},
		{"headers", "headers", "udp/53", exampleapi.SimulatedRequest{ListenerPort: 53, Protocol: "udp", Headers: map[string]string{"X-A": "1"}}},
		{"no udp listener", "protocol", "has no udp listener on port 443 (only tls/443)", exampleapi.SimulatedRequest{ListenerPort: 443, Protocol: "udp"}},
		{"another protocol", "protocol", "has no tcp listener on port 443", exampleapi.SimulatedRequest{ListenerPort: 443, Protocol: "tcp"}},
		{"unknown protocol", "protocol", `unknown protocol "sctp"`, exampleapi.SimulatedRequest{ListenerPort: 53, Protocol: "sctp"}},
		{"no listener", "listener_port", "has no listener on port 80", exampleapi.SimulatedRequest{ListenerPort: 80}},
	} {
		_, err := cl.SimulateRequests(ctx, lb.ID, c.req)
		var e *exampleapi.APIError
		if !errors.As(err, &e) || e.StatusCode != http.StatusBadRequest || e.Field != c.field || !strings.Contains(e.Message, c.msg) {
			t.Errorf("%s: %v, want a 400 on %s containing %q", c.name, err, c.field, c.msg)
		}
	}

	// Without targets of its own, a tcp listener without rules has nowhere
	// to send a connection.
	upd.TargetPoolID = pools["empty"]
	if _, err := cl.UpdateLoadBalancer(ctx, lb.ID, upd, 0); err != nil {
		t.Fatal(err)
	}
	if out, err := cl.SimulateRequests(ctx, lb.ID, exampleapi.SimulatedRequest{ListenerPort: 5432}); err != nil || out.Status != 503 {
		t.Errorf("tcp listener without rules, load balancer without targets: %+v, %v; want 503", out, err)
	}
}

// Rules of tcp, udp and tls listeners are refused, naming the field, for
// what their listener cannot see (tls: anything but host names; tcp and
// udp: any condition; both: redirects, fixed responses and header
// changes), for a
// listener_protocol no listener of the port has, and for a priority taken
// on the same listener; tcp/53 and udp/53 have priorities of their own.
func TestL4RulesValidation(t *testing.T) {
	_, c, lb, pools := routingSetup(t)
	base := exampleapi.UpdateLoadBalancerRequest{Listeners: append([]exampleapi.Listener{{Protocol: "http", Port: 80, TargetPort: 30080}}, l4Listeners...),
		HealthCheck: lb.HealthCheck, TargetPoolID: lb.TargetPoolID}
	fwd := []exampleapi.RuleBackend{backend(pools["a"], 30001, 1)}
	tls := exampleapi.Rule{Name: "tls", ListenerPort: 443, Priority: 1, Hostnames: []string{"db.example"}, Backends: fwd}
	tcp := exampleapi.Rule{Name: "tcp", ListenerPort: 53, Priority: 1, Backends: fwd}
	udp := exampleapi.Rule{Name: "udp", ListenerPort: 53, ListenerProtocol: "udp", Priority: 1, Backends: fwd}
	with := func(r exampleapi.Rule, change func(*exampleapi.Rule)) exampleapi.Rule {
		change(&r)
		return r
	}
	for _, c2 := range []struct {
		name, field, msg string
		rules            []exampleapi.Rule
	}{
		{"tls path type", "rules[0].path_type", "is not allowed on listener tls/443: a tls listener passes TLS through and matches only hostnames",
			[]exampleapi.Rule{with(tls, func(r *exampleapi.Rule) { r.PathType, r.Path = "prefix", "/" })}},
		{"tls path", "rules[0].path", "not allowed on listener tls/443", []exampleapi.Rule{with(tls, func(r *exampleapi.Rule) { r.Path = "/" })}},
		{"tls method", "rules[0].method", "not allowed on listener tls/443", []exampleapi.Rule{with(tls, func(r *exampleapi.Rule) { r.Method = "GET" })}},
		{"tls headers", "rules[0].headers", "not allowed on listener tls/443", []exampleapi.Rule{with(tls, func(r *exampleapi.Rule) {
			r.Headers = []exampleapi.HeaderMatch{{Name: "X-A", Value: "1"}}
		})}},
		{"tls redirect", "rules[0].redirect", "not allowed on listener tls/443: it forwards connections to backends", []exampleapi.Rule{
			with(tls, func(r *exampleapi.Rule) { r.Backends, r.Redirect = nil, &exampleapi.Redirect{StatusCode: 301} })}},
		{"tls request headers", "rules[0].request_headers", "no HTTP headers to change", []exampleapi.Rule{
			with(tls, func(r *exampleapi.Rule) { r.RequestHeaders = &exampleapi.HeaderModifier{Remove: []string{"X-A"}} })}},
		{"tls bad host name", "rules[0].hostnames[0]", "is not a lower-case DNS name", []exampleapi.Rule{
			with(tls, func(r *exampleapi.Rule) { r.Hostnames = []string{"DB.example"} })}},
		{"tcp hostnames", "rules[0].hostnames", "is not allowed on listener tcp/53: tcp and udp rules have no conditions", []exampleapi.Rule{
			with(tcp, func(r *exampleapi.Rule) { r.Hostnames = []string{"db.example"} })}},
		{"udp hostnames", "rules[0].hostnames", "is not allowed on listener udp/53", []exampleapi.Rule{
			with(udp, func(r *exampleapi.Rule) { r.Hostnames = []string{"db.example"} })}},
		{"tcp path", "rules[0].path_type", "not allowed on listener tcp/5432", []exampleapi.Rule{
			with(tcp, func(r *exampleapi.Rule) { r.ListenerPort, r.PathType, r.Path = 5432, "exact", "/" })}},
		{"udp method", "rules[0].method", "not allowed on listener udp/5353", []exampleapi.Rule{
			with(udp, func(r *exampleapi.Rule) { r.ListenerPort, r.ListenerProtocol, r.Method = 5353, "", "GET" })}},
		{"udp headers", "rules[0].headers", "not allowed on listener udp/53", []exampleapi.Rule{
			with(udp, func(r *exampleapi.Rule) { r.Headers = []exampleapi.HeaderMatch{{Name: "X-A"}} })}},
		{"tcp redirect", "rules[0].redirect", "not allowed on listener tcp/53", []exampleapi.Rule{
			with(tcp, func(r *exampleapi.Rule) { r.Backends, r.Redirect = nil, &exampleapi.Redirect{StatusCode: 302} })}},
		{"tls fixed response", "rules[0].fixed_response", "not allowed on listener tls/443: it forwards connections to backends", []exampleapi.Rule{
			with(tls, func(r *exampleapi.Rule) {
				r.Backends, r.FixedResponse = nil, &exampleapi.FixedResponse{StatusCode: 404}
			})}},
		{"tcp fixed response", "rules[0].fixed_response", "not allowed on listener tcp/53", []exampleapi.Rule{
			with(tcp, func(r *exampleapi.Rule) {
				r.Backends, r.FixedResponse = nil, &exampleapi.FixedResponse{StatusCode: 503}
			})}},
		{"udp request headers", "rules[0].request_headers", "not allowed on listener udp/53", []exampleapi.Rule{
			with(udp, func(r *exampleapi.Rule) { r.RequestHeaders = &exampleapi.HeaderModifier{} })}},
		{"no udp listener", "rules[0].listener_protocol", "has no udp listener on port 443 (only tls/443)", []exampleapi.Rule{
			with(tls, func(r *exampleapi.Rule) { r.ListenerProtocol = "udp" })}},
		{"not the port's protocol", "rules[0].listener_protocol", "has no tcp listener on port 443", []exampleapi.Rule{
			with(tls, func(r *exampleapi.Rule) { r.ListenerProtocol = "tcp" })}},
		{"unknown protocol", "rules[0].listener_protocol", `has no sctp listener on port 53 (only tcp/53 and udp/53)`, []exampleapi.Rule{
			with(tcp, func(r *exampleapi.Rule) { r.ListenerProtocol = "sctp" })}},
		{"priority taken on the listener", "rules[1].priority", "priority 1 is also rules[0]'s on listener tcp/53", []exampleapi.Rule{
			tcp, with(tcp, func(r *exampleapi.Rule) { r.Name, r.ListenerProtocol = "tcp-too", "tcp" })}},
		{"udp backend pool", "rules[0].backends[0].target_pool_id", "does not exist", []exampleapi.Rule{
			with(udp, func(r *exampleapi.Rule) { r.Backends = []exampleapi.RuleBackend{backend("tp-nope", 1, 1)} })}},
	} {
		upd := base
		upd.Rules = c2.rules
		e := c.apiError(http.StatusBadRequest, "PUT", "/v1/load-balancers/"+lb.ID, upd)
		if e.Field != c2.field || !strings.Contains(e.Message, c2.msg) {
			t.Errorf("%s: %s: %q, want %s: ...%s...", c2.name, e.Field, e.Message, c2.field, c2.msg)
		}
	}

	// One priority on tcp/53 and udp/53, explicit protocols, a tcp rule
	// without backends (500 when it serves) and an http one naming its
	// listener: valid.
	upd := base
	upd.Rules = []exampleapi.Rule{tcp, udp, with(tls, func(r *exampleapi.Rule) { r.ListenerProtocol = "tls" }),
		{Name: "bare", ListenerPort: 5432, ListenerProtocol: "tcp", Priority: 1, Backends: []exampleapi.RuleBackend{}},
		{Name: "web", ListenerPort: 80, ListenerProtocol: "http", Priority: 1, PathType: "prefix", Path: "/", Backends: fwd}}
	c.must(http.StatusOK, "PUT", "/v1/load-balancers/"+lb.ID, upd, nil)
}
