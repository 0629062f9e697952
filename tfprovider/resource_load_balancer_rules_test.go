package tfprovider

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-exec/tfexec"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/providerserver"
	fwresource "github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"github.com/hashicorp/terraform-plugin-go/tfprotov6"
	"github.com/hashicorp/terraform-plugin-go/tftypes"
	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/terraform"

	"github.com/example/cloud-provider-example/exampleapi"
	"github.com/example/cloud-provider-example/internal/tftest"
	"github.com/example/cloud-provider-example/simulator/simtest"
)

// fullRules are rules using every attribute, as the provider sends them
// (by listener port, priority and name; headers by name).
func fullRules() []exampleapi.Rule {
	return []exampleapi.Rule{
		{Name: "ns/api/0.0:80@a.example", ListenerPort: 80, Priority: 10, Hostnames: []string{"a.example", "*.b.example"},
			PathType: "prefix", Path: "/api", Method: "GET",
			Headers:     []exampleapi.HeaderMatch{{Name: "X-Env", Value: "canary"}, {Name: "X-Team", Value: ""}},
			QueryParams: []exampleapi.QueryParamMatch{{Name: "ANIMAL", Value: "Whale"}, {Name: "animal", Value: "whale"}},
			Backends: []exampleapi.RuleBackend{{TargetPoolID: "tp-a", Port: 30001, Weight: 80, Protocol: exampleapi.BackendH2C},
				{TargetPoolID: "tp-b", Port: 30002}},
			RequestHeaders: &exampleapi.HeaderModifier{Set: []exampleapi.HeaderMatch{{Name: "X-A", Value: "1"}},
				Add: []exampleapi.HeaderMatch{{Name: "Via", Value: "gw"}}, Remove: []string{"X-Drop", "X-Debug"}},
			ResponseHeaders: &exampleapi.HeaderModifier{Set: []exampleapi.HeaderMatch{{Name: "Cache-Control", Value: "no-store"}},
				Add: []exampleapi.HeaderMatch{{Name: "X-Served-By", Value: "gw"}}, Remove: []string{"Server"}},
			Rewrite:            &exampleapi.Rewrite{Hostname: "backend.internal", PathPrefix: "/v2"},
			Timeouts:           &exampleapi.Timeouts{RequestMS: 10000, BackendRequestMS: 2500},
			Retry:              &exampleapi.Retry{Attempts: 2, StatusCodes: []int{502, 503}, BackoffMS: 100},
			SessionPersistence: &exampleapi.SessionPersistence{Type: exampleapi.SessionHeader, Name: "X-Session", AbsoluteTimeoutSeconds: 600}},
		{Name: "moved", ListenerPort: 80, Priority: 20, PathType: "prefix", Path: "/old",
			Redirect: &exampleapi.Redirect{Scheme: "https", Hostname: "x.example", Port: 8443, PathPrefix: "/new", StatusCode: 301}},
		{Name: "bare", ListenerPort: 443, Priority: 1, Redirect: &exampleapi.Redirect{StatusCode: 302},
			RequestHeaders: &exampleapi.HeaderModifier{}, ResponseHeaders: &exampleapi.HeaderModifier{}},
		{Name: "quic", ListenerPort: 443, ListenerProtocol: "udp", Priority: 1,
			Backends: []exampleapi.RuleBackend{{TargetPoolID: "tp-a", Port: 30443, Weight: 1}}},
		{Name: "gone", ListenerPort: 8080, Priority: 1, Hostnames: []string{"a.example"},
			FixedResponse: &exampleapi.FixedResponse{StatusCode: 404}},
	}
}

// rulesJSON is a rules value written as JSON, as state stores it;
// attributes left out are null.
// rulesAttrType is the rules attribute's type.
var rulesAttrType = types.MapType{ElemType: ruleType}

func rulesJSON(t *testing.T, js string) types.Map {
	t.Helper()
	return rulesJSONOf(t, rulesAttrType, js)
}

// rulesJSONOf is rulesJSON for a rules attribute of type typ.
func rulesJSONOf(t *testing.T, typ types.MapType, js string) types.Map {
	t.Helper()
	ctx := context.Background()
	raw, err := tftypes.ValueFromJSONWithOpts([]byte(js), typ.TerraformType(ctx), tftypes.ValueFromJSONOpts{})
	if err != nil {
		t.Fatal(err)
	}
	v, err := typ.ValueFromTerraform(ctx, raw)
	if err != nil {
		t.Fatal(err)
	}
	return v.(types.Map)
}

// TestRulesRoundTrip: API rules -> model -> request gives back the rules,
// keyed by name, and what the API leaves out is null.
func TestRulesRoundTrip(t *testing.T) {
	ctx := context.Background()
	lb := &exampleapi.LoadBalancer{ID: "lb-1", LoadBalancerSpec: fullSpec()}
	lb.Rules = fullRules()
	m, diags := loadBalancerFromAPI(ctx, lb, loadBalancerModel{})
	if diags.HasError() {
		t.Fatal(diags)
	}
	if upd, d := m.toUpdate(ctx); d.HasError() || !reflect.DeepEqual(upd.Rules, fullRules()) {
		t.Fatalf("round trip (%v):\n got %+v\nwant %+v", d, upd.Rules, fullRules())
	}
	want := rulesJSON(t, `{"bare": {"listener_port": 443, "priority": 1, "redirect": {"status_code": 302}, "request_headers": {}, "response_headers": {}},
		"quic": {"listener_port": 443, "listener_protocol": "udp", "priority": 1, "backends": [{"target_pool_id": "tp-a", "port": 30443, "weight": 1}]},
		"gone": {"listener_port": 8080, "priority": 1, "hostnames": ["a.example"], "fixed_response": {"status_code": 404}}}`)
	for _, name := range []string{"bare", "quic", "gone"} {
		if got := m.Rules.Elements()[name]; !got.Equal(want.Elements()[name]) {
			t.Errorf("%s rule\n got %v\nwant %v", name, got, want.Elements()[name])
		}
	}
	// Map iteration does not reorder what is sent.
	for range 20 {
		if spec, _ := m.toSpec(ctx); !reflect.DeepEqual(spec.Rules, fullRules()) {
			t.Fatalf("order changed: %+v", spec.Rules)
		}
	}
}

// TestRulesFromAPIEmptyAndNull: the API cannot tell an empty list or map
// from none, so a configured one reads back empty (else every plan would
// show it) and an unconfigured one null; no rules read back null, or {}
// when configured so, and {} sends none.
func TestRulesFromAPIEmptyAndNull(t *testing.T) {
	ctx := context.Background()
	var diags diag.Diagnostics
	api := []exampleapi.Rule{{Name: "r", ListenerPort: 80, Priority: 1, Redirect: &exampleapi.Redirect{StatusCode: 302},
		RequestHeaders: &exampleapi.HeaderModifier{}, ResponseHeaders: &exampleapi.HeaderModifier{}}}
	empties := rulesJSON(t, `{"r": {"listener_port": 80, "priority": 1, "hostnames": [], "headers": {}, "query_params": {}, "backends": [],
		"redirect": {"status_code": 302}, "request_headers": {"set": {}, "add": {}, "remove": []},
		"response_headers": {"set": {}, "add": {}, "remove": []}}}`)
	nulls := rulesJSON(t, `{"r": {"listener_port": 80, "priority": 1, "redirect": {"status_code": 302}, "request_headers": {},
		"response_headers": {}}}`)
	if got := rulesFromAPI(ctx, api, empties, byPriorityOrKey, &diags); !got.Equal(empties) {
		t.Errorf("configured empty:\n got %v\nwant %v", got, empties)
	}
	for _, prior := range []types.Map{nulls, {}} {
		if got := rulesFromAPI(ctx, api, prior, byPriorityOrKey, &diags); !got.Equal(nulls) {
			t.Errorf("prior %v:\n got %v\nwant %v", prior, got, nulls)
		}
	}
	if v := rulesFromAPI(ctx, nil, nulls, byPriorityOrKey, &diags); !v.IsNull() {
		t.Errorf("rules removed: %v, want null", v)
	}
	configuredEmpty := rulesJSON(t, `{}`)
	if v := rulesFromAPI(ctx, nil, configuredEmpty, byPriorityOrKey, &diags); !v.Equal(configuredEmpty) {
		t.Errorf("rules = {}: %v, want {}", v)
	}
	if sent := rulesToAPI(ctx, configuredEmpty, &diags); sent != nil {
		t.Errorf("rules = {} sends %v, want none", sent)
	}
	if diags.HasError() {
		t.Fatal(diags)
	}
}

// TestLBFieldResolverRules: an API error on rules[i] (of the request,
// sorted as sent) or below it lands on the rule's key.
func TestLBFieldResolverRules(t *testing.T) {
	r := lbFieldResolver(exampleapi.LoadBalancerSpec{LoadBalancerSettings: exampleapi.LoadBalancerSettings{Rules: fullRules()}})
	cases := map[string]path.Path{
		"rules":                               path.Root("rules"),
		"rules[1].priority":                   path.Root("rules").AtMapKey("moved"),
		"rules[0].backends[1].target_pool_id": path.Root("rules").AtMapKey("ns/api/0.0:80@a.example"),
		"rules[2]":                            path.Root("rules").AtMapKey("bare"),
		"rules[3].listener_protocol":          path.Root("rules").AtMapKey("quic"),
		"rules[4].fixed_response.status_code": path.Root("rules").AtMapKey("gone"),
		"rules[5].name":                       path.Root("rules"),
	}
	for field, want := range cases {
		if got, ok := r(field); !ok || !got.Equal(want) {
			t.Errorf("%s: got %v %v, want %v", field, got, ok, want)
		}
	}
}

// validateLB runs the provider's ValidateResourceConfig (schema validators
// and ValidateConfig) on a load balancer's configuration written as JSON.
func validateLB(t *testing.T, config string) []*tfprotov6.Diagnostic {
	t.Helper()
	return validateJSON(t, &loadBalancerResource{}, "example_load_balancer", config)
}

// validateJSON is validateLB for resource r of type typeName.
func validateJSON(t *testing.T, r fwresource.Resource, typeName, config string) []*tfprotov6.Diagnostic {
	t.Helper()
	ctx := context.Background()
	var sr fwresource.SchemaResponse
	r.Schema(ctx, fwresource.SchemaRequest{}, &sr)
	typ := sr.Schema.Type().TerraformType(ctx)
	v, err := tftypes.ValueFromJSONWithOpts([]byte(config), typ, tftypes.ValueFromJSONOpts{})
	if err != nil {
		t.Fatalf("%v in %s", err, config)
	}
	return validateValue(t, typeName, typ, v)
}

func validateLBValue(t *testing.T, typ tftypes.Type, v tftypes.Value) []*tfprotov6.Diagnostic {
	t.Helper()
	return validateValue(t, "example_load_balancer", typ, v)
}

func validateValue(t *testing.T, typeName string, typ tftypes.Type, v tftypes.Value) []*tfprotov6.Diagnostic {
	t.Helper()
	dv, err := tfprotov6.NewDynamicValue(typ, v)
	if err != nil {
		t.Fatal(err)
	}
	srv, err := providerserver.NewProtocol6WithError(New(Version)())()
	if err != nil {
		t.Fatal(err)
	}
	resp, err := srv.ValidateResourceConfig(context.Background(),
		&tfprotov6.ValidateResourceConfigRequest{TypeName: typeName, Config: &dv})
	if err != nil {
		t.Fatal(err)
	}
	return resp.Diagnostics
}

// attrPathString writes p as Terraform does: rules["a"].backends[0].
func attrPathString(p *tftypes.AttributePath) string {
	var b strings.Builder
	for _, s := range p.Steps() {
		switch s := s.(type) {
		case tftypes.AttributeName:
			if b.Len() > 0 {
				b.WriteByte('.')
			}
			b.WriteString(string(s))
		case tftypes.ElementKeyString:
			fmt.Fprintf(&b, "[%q]", string(s))
		case tftypes.ElementKeyInt:
			fmt.Fprintf(&b, "[%d]", int64(s))
		default:
			fmt.Fprintf(&b, "[%v]", s)
		}
	}
	return b.String()
}

const (
	http80JSON   = `"http/80": {"protocol": "http", "port": 80, "target_port": 8080}`
	https443JSON = `"https/443": {"protocol": "https", "port": 443, "target_port": 8443, "certificate_ids": ["cert-1"]}`
	tls80JSON    = `"tls/80": {"protocol": "tls", "port": 80, "target_port": 8443}`
	tcp80JSON    = `"tcp/80": {"protocol": "tcp", "port": 80, "target_port": 8080}`
	udp80JSON    = `"udp/80": {"protocol": "udp", "port": 80, "target_port": 8080}`
)

// testCAJSON is a test CA's certificate as a JSON string: a backend's
// ca_bundle.
func testCAJSON(t *testing.T) string {
	b, err := json.Marshal(simtest.NewCert(t, simtest.CertOptions{CommonName: "backend CA", IsCA: true}).CertPEM)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// rulesConfig is a load balancer with listeners and rules as JSON.
func rulesConfig(listeners, rules string) string {
	return fmt.Sprintf(`{"name": "web", "listeners": {%s}, "rules": %s}`, listeners, rules)
}

// oneRule is rules holding rule "r" on port 80, priority 10, with extra
// attributes (JSON members, comma-terminated).
func oneRule(extra string) string {
	return `{"r": {` + extra + ` "listener_port": 80, "priority": 10}}`
}

func manyJSON(n int, elem func(i int) string) string {
	q := make([]string, n)
	for i := range q {
		q[i] = elem(i)
	}
	return strings.Join(q, ", ")
}

// TestValidateRules: every plan-time check of rules fails with one error
// on the attribute at fault (the path as Terraform prints it), and a
// valid configuration passes.
func TestValidateRules(t *testing.T) {
	caJSON := testCAJSON(t)
	backend := `{"target_pool_id": "tp-a", "port": 30001}`
	cases := []struct{ name, listeners, rules, at, want string }{
		// ValidateConfig.
		{"too many rules", http80JSON, "{" + manyJSON(exampleapi.MaxRules+1, func(i int) string {
			return fmt.Sprintf(`"r%d": {"listener_port": 80, "priority": %d}`, i, i+1)
		}) + "}", `rules`, "Too many rules: rules has 2001 entries; the Example cloud allows at most 2000 rules"},
		{"no listener", http80JSON, `{"r": {"listener_port": 81, "priority": 1}}`, `rules["r"].listener_port`,
			`No listener for the rule: Rule "r" has listener_port = 81, but listeners has no listener on port 81`},
		{"no listener of the protocol", tls80JSON, oneRule(`"listener_protocol": "udp",`), `rules["r"].listener_protocol`,
			`No such listener for the rule: Rule "r" has listener_port = 80 and listener_protocol = "udp", but port 80 has only tls/80.`},
		{"not the port's protocol", tcp80JSON + ", " + udp80JSON, oneRule(`"listener_protocol": "tls",`), `rules["r"].listener_protocol`,
			`port 80 has only tcp/80 and udp/80`},
		{"tls method", tls80JSON, oneRule(`"method": "GET",`), `rules["r"].method`,
			`Rule condition not allowed on a tls listener: Rule "r" routes listener "tls/80", so it takes no method: a tls listener passes TLS through and matches only hostnames`},
		{"tls path", tls80JSON, oneRule(`"path_type": "prefix", "path": "/",`), `rules["r"].path_type`, `Rule condition not allowed on a tls listener`},
		{"tls headers", tls80JSON, oneRule(`"headers": {"X-A": "1"},`), `rules["r"].headers`, `so it takes no headers`},
		{"tls redirect", tls80JSON, oneRule(`"redirect": {"status_code": 301},`), `rules["r"].redirect`,
			`Rule action not allowed on a tls listener: Rule "r" routes listener "tls/80", which forwards connections to backends: it takes no redirect`},
		{"tls request headers", tls80JSON, oneRule(`"request_headers": {},`), `rules["r"].request_headers`, `it takes no request_headers`},
		{"tcp backend protocol", tcp80JSON, oneRule(`"backends": [{"target_pool_id": "tp-a", "port": 30001, "protocol": "http"}],`),
			`rules["r"].backends[0].protocol`, `Backend protocol not allowed on a tcp listener: Rule "r" routes listener "tcp/80", which forwards connections as they come: its backends take no protocol`},
		{"tcp cors", tcp80JSON, oneRule(`"cors": {"allow_origins": ["*"]},`), `rules["r"].cors`, `it takes no cors`},
		{"cors without origins", http80JSON, oneRule(`"cors": {"allow_origins": []},`), `rules["r"].cors.allow_origins`, `list must contain at least 1 elements and at most 64 elements`},
		{"cors max age", http80JSON, oneRule(`"cors": {"allow_origins": ["*"], "max_age_seconds": 0},`), `rules["r"].cors.max_age_seconds`, `value must be between 1 and 86400, got: 0`},
		{"tcp session persistence", tcp80JSON, oneRule(`"session_persistence": {},`), `rules["r"].session_persistence`, `it takes no session_persistence`},
		{"session name", http80JSON, oneRule(`"session_persistence": {"name": "a b"},`), `rules["r"].session_persistence.name`, `must be a cookie or header name`},
		{"session timeout", http80JSON, oneRule(`"session_persistence": {"absolute_timeout_seconds": 0},`), `rules["r"].session_persistence.absolute_timeout_seconds`,
			`value must be between 1 and 2592000, got: 0`},
		{"permanent session without timeout", http80JSON, oneRule(`"session_persistence": {"lifetime": "permanent"},`),
			`rules["r"].session_persistence.absolute_timeout_seconds`,
			`Invalid rule session persistence: Rule "r": session_persistence.absolute_timeout_seconds: is required with lifetime permanent`},
		{"header session with a lifetime", http80JSON, oneRule(`"session_persistence": {"type": "header", "lifetime": "session"},`),
			`rules["r"].session_persistence.lifetime`, `is a cookie's: a session of type header has none`},
		{"session header the exchange owns", http80JSON, oneRule(`"session_persistence": {"type": "header", "name": "Set-Cookie"},`),
			`rules["r"].session_persistence.name`, `header "Set-Cookie" is the HTTP exchange's own`},
		{"session of a redirect", http80JSON, oneRule(`"redirect": {"status_code": 302}, "session_persistence": {},`),
			`rules["r"].session_persistence`, `is exclusive with redirect`},
		{"tcp backend TLS", tcp80JSON, oneRule(`"backends": [{"target_pool_id": "tp-a", "port": 30001, "tls": {"ca_bundle": ` + caJSON + `, "server_name": "a.example"}}],`),
			`rules["r"].backends[0].tls`, `Backend TLS not allowed on a tcp listener: Rule "r" routes listener "tcp/80", which forwards connections as they come: its backends take no tls`},
		{"tls rewrite", tls80JSON, oneRule(`"rewrite": {},`), `rules["r"].rewrite`, `it takes no rewrite`},
		{"tls response headers", tls80JSON, oneRule(`"response_headers": {},`), `rules["r"].response_headers`, `it takes no response_headers`},
		{"tcp query parameters", tcp80JSON, oneRule(`"query_params": {"a": "1"},`), `rules["r"].query_params`,
			`Rule "r" routes listener "tcp/80", so it takes no query_params`},
		{"tls fixed response", tls80JSON, oneRule(`"fixed_response": {"status_code": 404},`), `rules["r"].fixed_response`, `it takes no fixed_response`},
		{"tcp fixed response", tcp80JSON, oneRule(`"fixed_response": {"status_code": 404},`), `rules["r"].fixed_response`,
			`Rule action not allowed on a tcp listener: Rule "r" routes listener "tcp/80", which forwards connections to backends: it takes no fixed_response`},
		{"tcp hostnames", tcp80JSON, oneRule(`"hostnames": ["a.example"],`), `rules["r"].hostnames`,
			`Rule condition not allowed on a tcp listener: Rule "r" routes listener "tcp/80", so it takes no hostnames: tcp and udp rules have no conditions`},
		{"udp method", tcp80JSON + ", " + udp80JSON, oneRule(`"listener_protocol": "udp", "method": "GET",`), `rules["r"].method`,
			`Rule "r" routes listener "udp/80", so it takes no method`},
		{"udp alone, hostnames", udp80JSON, oneRule(`"hostnames": ["a.example"],`), `rules["r"].hostnames`, `routes listener "udp/80"`},
		{"priority taken on tcp", tcp80JSON + ", " + udp80JSON, `{"a": {"listener_port": 80, "priority": 1}, "b": {"listener_port": 80, "listener_protocol": "tcp", "priority": 1}}`,
			`rules["b"].priority`, `Rule priority already in use: Rules "a" and "b" both have priority 1 on listener "tcp/80"`},
		{"redirecting listener", https443JSON + `, "http/80": {"protocol": "http", "port": 80, "target_port": 8080, "redirect_to_https_port": 443}`,
			oneRule(""), `rules["r"].listener_port`, `Rule on a redirecting listener: Rule "r" has listener_port = 80, and listener "http/80" redirects`},
		{"priority taken", http80JSON, `{"a": {"listener_port": 80, "priority": 10}, "b": {"listener_port": 80, "priority": 10}}`,
			`rules["b"].priority`, `Rule priority already in use: Rules "a" and "b" both have priority 10 on listener "http/80"`},
		{"path without type", http80JSON, oneRule(`"path": "/api",`), `rules["r"].path_type`,
			`Missing rule path type: Rule "r" has a path, so it needs path_type: one of exact, prefix, regex.`},
		{"type without path", http80JSON, oneRule(`"path_type": "exact",`), `rules["r"].path`,
			`Missing rule path: Rule "r" has path_type "exact", so it needs a path`},
		{"redirect and backends", http80JSON, oneRule(`"redirect": {"status_code": 301}, "backends": [` + backend + `],`),
			`rules["r"].redirect`, `Conflicting rule redirect and backends: Rule "r" has a redirect and 1 backends`},
		{"fixed response and backends", http80JSON, oneRule(`"fixed_response": {"status_code": 404}, "backends": [` + backend + `],`),
			`rules["r"].fixed_response`, `Conflicting rule fixed_response: Rule "r" has a fixed_response and 1 backends: a rule with a fixed_response answers the request itself`},
		{"fixed response and redirect", http80JSON, oneRule(`"fixed_response": {"status_code": 404}, "redirect": {"status_code": 301},`),
			`rules["r"].fixed_response`, `Rule "r" has a fixed_response and a redirect`},
		{"fixed response and rewrite", http80JSON, oneRule(`"fixed_response": {"status_code": 404}, "rewrite": {"path": "/"},`),
			`rules["r"].fixed_response`, `Rule "r" has a fixed_response and a rewrite`},
		{"redirect and rewrite", http80JSON, oneRule(`"redirect": {"status_code": 301}, "rewrite": {"path": "/"},`),
			`rules["r"].rewrite`, `Conflicting rule redirect and rewrite: Rule "r" has a redirect and a rewrite`},
		{"redirect path prefix without a prefix", http80JSON, oneRule(`"path_type": "exact", "path": "/a", "redirect": {"status_code": 301, "path_prefix": "/b"},`),
			`rules["r"].redirect.path_prefix`, `Rule path_prefix without a prefix match: Rule "r" has a path_prefix, which replaces what the rule's path prefix matched, but its path_type is "exact"`},
		{"rewrite path prefix without a path", http80JSON, oneRule(`"rewrite": {"path_prefix": "/b"},`),
			`rules["r"].rewrite.path_prefix`, `but its path_type is unset`},
		{"fixed response and request headers", http80JSON, oneRule(`"fixed_response": {"status_code": 404}, "request_headers": {},`),
			`rules["r"].fixed_response`, `Rule "r" has a fixed_response and request_headers`},
		{"same backend twice", http80JSON, oneRule(`"backends": [` + backend + `, {"target_pool_id": "tp-a", "port": 30001, "weight": 2}],`),
			`rules["r"].backends[1]`, `Duplicate rule backend: Rule "r" has backends[0] and backends[1] both on tp-a port 30001`},
		{"headers equal ignoring case", http80JSON, oneRule(`"headers": {"X-Env": "a", "x-env": "b"},`), `rules["r"].headers["x-env"]`,
			`Duplicate header name: Rule "r" names headers "X-Env" and "x-env", which are one header`},
		{"set equal ignoring case", http80JSON, oneRule(`"request_headers": {"set": {"Via": "a", "VIA": "b"}},`),
			`rules["r"].request_headers.set["Via"]`, `Duplicate header name: Rule "r" names headers "VIA" and "Via"`},
		{"add equal ignoring case", http80JSON, oneRule(`"request_headers": {"add": {"a": "1", "A": "2"}},`),
			`rules["r"].request_headers.add["a"]`, `Duplicate header name`},
		{"response set equal ignoring case", http80JSON, oneRule(`"response_headers": {"set": {"Via": "a", "VIA": "b"}},`),
			`rules["r"].response_headers.set["Via"]`, `Duplicate header name: Rule "r" names headers "VIA" and "Via"`},
		{"neither priority nor order key", http80JSON, `{"r": {"listener_port": 80}}`, `rules["r"]`,
			`Missing rule priority or order_key: Rule "r" has neither a priority nor an order_key: set one.`},
		{"priority and order key", http80JSON, oneRule(`"order_key": "a",`), `rules["r"]`,
			`Conflicting rule priority and order_key: Rule "r" has priority = 10 and order_key = "a": a rule is ordered by one of them.`},
		{"order key on tcp", tcp80JSON, `{"r": {"listener_port": 80, "order_key": "a"}}`, `rules["r"].order_key`,
			`Rule order_key not allowed on a tcp listener: Rule "r" routes listener "tcp/80", whose rules are ordered by priority only`},
		{"order key on udp", http80JSON + ", " + udp80JSON, `{"r": {"listener_port": 80, "listener_protocol": "udp", "order_key": "a"}}`,
			`rules["r"].order_key`, `Rule order_key not allowed on a udp listener`},
		{"order key on tls", tls80JSON, `{"r": {"listener_port": 80, "order_key": "a", "hostnames": ["a.example"]}}`,
			`rules["r"].order_key`, `Rule order_key not allowed on a tls listener`},
		// Schema validators.
		{"order key with a space", http80JSON, `{"r": {"listener_port": 80, "order_key": "a b"}}`, `rules["r"].order_key`,
			`Invalid rule order key: "a b" is not an order key: 1-512 printable ASCII characters without spaces`},
		{"order key too long", http80JSON, `{"r": {"listener_port": 80, "order_key": "` + strings.Repeat("k", exampleapi.MaxOrderKeyLen+1) + `"}}`,
			`rules["r"].order_key`, `Invalid rule order key: the order key is 513 characters long: at most 512.`},
		{"empty order key", http80JSON, `{"r": {"listener_port": 80, "order_key": ""}}`, `rules["r"].order_key`,
			`"" is not an order key`},
		{"rule name", http80JSON, `{"a b": {"listener_port": 80, "priority": 1}}`, `rules["a b"]`, `must be a rule name: 1-128 letters`},
		{"priority range", http80JSON, `{"r": {"listener_port": 80, "priority": 50001}}`, `rules["r"].priority`, `value must be between 1 and 50000`},
		{"too many hostnames", http80JSON, oneRule(`"hostnames": [` + manyJSON(17, func(i int) string { return fmt.Sprintf(`"h%d.example"`, i) }) + `],`),
			`rules["r"].hostnames`, `list must contain at most 16 elements`},
		{"hostname", http80JSON, oneRule(`"hostnames": ["A.example"],`), `rules["r"].hostnames[0]`, `must be a lower-case DNS name or a wildcard`},
		{"path", http80JSON, oneRule(`"path_type": "prefix", "path": "/a/../b",`), `rules["r"].path`,
			`Invalid rule path: Rule "r"'s path "/a/../b" is not a normalized path (no //, /./ or /../).`},
		{"path type", http80JSON, oneRule(`"path_type": "glob", "path": "/a",`), `rules["r"].path_type`, `value must be one of: ["exact" "prefix" "regex"]`},
		{"regex path", http80JSON, oneRule(`"path_type": "regex", "path": "/a/(?<=b)",`), `rules["r"].path`,
			`Invalid rule path: Rule "r"'s regex path "/a/(?<=b)" is not a regular expression of RE2's syntax: error parsing regexp: invalid named capture`},
		{"regex path escaping its anchors", http80JSON, oneRule(`"path_type": "regex", "path": "/a)|(.*",`), `rules["r"].path`,
			`is not a regular expression of RE2's syntax: error parsing regexp: unexpected )`},
		{"listener protocol", http80JSON, oneRule(`"listener_protocol": "sctp",`), `rules["r"].listener_protocol`, `value must be one of: ["tcp" "udp" "http" "https" "tls"]`},
		{"method", http80JSON, oneRule(`"method": "get",`), `rules["r"].method`, `value must be one of`},
		{"too many headers", http80JSON, oneRule(`"headers": {` + manyJSON(17, func(i int) string { return fmt.Sprintf(`"h%d": "v"`, i) }) + `},`),
			`rules["r"].headers`, `map must contain at most 16 elements`},
		{"header name", http80JSON, oneRule(`"headers": {"X Env": "a"},`), `rules["r"].headers["X Env"]`, `must be an HTTP header name`},
		{"header value", http80JSON, oneRule(`"headers": {"X-Env": "a\u0007"},`), `rules["r"].headers["X-Env"]`, `must not contain control characters`},
		{"too many backends", http80JSON, oneRule(`"backends": [` + manyJSON(17, func(i int) string {
			return fmt.Sprintf(`{"target_pool_id": "tp-a", "port": %d}`, 30000+i)
		}) + `],`), `rules["r"].backends`, `list must contain at most 16 elements`},
		{"backend pool", http80JSON, oneRule(`"backends": [{"target_pool_id": "pool-a", "port": 30001}],`),
			`rules["r"].backends[0].target_pool_id`, `must be an id starting with "tp-"`},
		{"backend weight", http80JSON, oneRule(`"backends": [{"target_pool_id": "tp-a", "port": 30001, "weight": 1000001}],`),
			`rules["r"].backends[0].weight`, `value must be between 0 and 1000000`},
		{"redirect code", http80JSON, oneRule(`"redirect": {"status_code": 304},`), `rules["r"].redirect.status_code`, `value must be one of: ["301" "302" "303" "307" "308"], got: 304`},
		{"redirect host", http80JSON, oneRule(`"redirect": {"status_code": 301, "hostname": "*.x.example"},`),
			`rules["r"].redirect.hostname`, `must be a lower-case DNS name (no wildcard)`},
		{"redirect scheme", http80JSON, oneRule(`"redirect": {"status_code": 301, "scheme": "ftp"},`), `rules["r"].redirect.scheme`, `value must be one of`},
		{"fixed response 3xx", http80JSON, oneRule(`"fixed_response": {"status_code": 302},`), `rules["r"].fixed_response.status_code`,
			`Invalid fixed response status code: 302 is not a fixed response code: it must be in 200-299 or 400-599. A 3xx is a redirect's`},
		{"fixed response 1xx", http80JSON, oneRule(`"fixed_response": {"status_code": 100},`), `rules["r"].fixed_response.status_code`,
			`100 is not a fixed response code`},
		{"fixed response 600", http80JSON, oneRule(`"fixed_response": {"status_code": 600},`), `rules["r"].fixed_response.status_code`,
			`600 is not a fixed response code`},
		{"too many removed", http80JSON, oneRule(`"request_headers": {"remove": [` + manyJSON(17, func(i int) string { return fmt.Sprintf(`"h%d"`, i) }) + `]},`),
			`rules["r"].request_headers.remove`, `list must contain at most 16 elements`},
		{"tcp timeouts", tcp80JSON, oneRule(`"timeouts": {"request_ms": 500},`), `rules["r"].timeouts`,
			`Rule action not allowed on a tcp listener: Rule "r" routes listener "tcp/80", which forwards connections to backends: it takes no timeouts`},
		{"tls retry", tls80JSON, oneRule(`"retry": {"attempts": 1},`), `rules["r"].retry`, `it takes no retry`},
		{"request timeout", http80JSON, oneRule(`"timeouts": {"request_ms": 3600001},`), `rules["r"].timeouts.request_ms`,
			`value must be between 0 and 3600000, got: 3600001`},
		{"backend timeout past the request's", http80JSON, oneRule(`"timeouts": {"request_ms": 500, "backend_request_ms": 600},`),
			`rules["r"].timeouts.backend_request_ms`, `Backend timeout past the request's: Rule "r" has backend_request_ms = 600, longer than request_ms = 500`},
		{"timeouts of a redirect", http80JSON, oneRule(`"redirect": {"status_code": 302}, "timeouts": {"request_ms": 500},`),
			`rules["r"].timeouts`, `Conflicting rule timeouts: Rule "r" has timeouts and a redirect`},
		{"retry attempts", http80JSON, oneRule(`"retry": {"attempts": 11},`), `rules["r"].retry.attempts`, `value must be between 1 and 10, got: 11`},
		{"retry of a 4xx", http80JSON, oneRule(`"retry": {"attempts": 1, "status_codes": [429]},`), `rules["r"].retry.status_codes[0]`,
			`value must be between 500 and 599, got: 429`},
		{"backend protocol", http80JSON, oneRule(`"backends": [{"target_pool_id": "tp-a", "port": 30001, "protocol": "h2"}],`),
			`rules["r"].backends[0].protocol`, `value must be one of: ["http" "h2c"]`},
		{"backend CA bundle not PEM", http80JSON, oneRule(`"backends": [{"target_pool_id": "tp-a", "port": 30001, "tls": {"ca_bundle": "not a CA", "server_name": "a.example"}}],`),
			`rules["r"].backends[0].tls.ca_bundle`, `Invalid CA bundle: holds no PEM CERTIFICATE block (expected -----BEGIN CERTIFICATE-----).`},
		{"backend SNI wildcard", http80JSON, oneRule(`"backends": [{"target_pool_id": "tp-a", "port": 30001, "tls": {"ca_bundle": ` + caJSON + `, "server_name": "*.a.example"}}],`),
			`rules["r"].backends[0].tls.server_name`, `Invalid server name: "*.a.example" is not a DNS name without a wildcard`},
		{"backend SAN", http80JSON, oneRule(`"backends": [{"target_pool_id": "tp-a", "port": 30001, "tls": {"ca_bundle": ` + caJSON + `, "server_name": "a.example", "subject_alt_names": ["spiffe:"]}}],`),
			`rules["r"].backends[0].tls.subject_alt_names[0]`, `Invalid subject alt name: "spiffe:" is not an absolute URI`},
		{"backend TLS in h2c", http80JSON, oneRule(`"backends": [{"target_pool_id": "tp-a", "port": 30001, "protocol": "h2c", "tls": {"ca_bundle": ` + caJSON + `, "server_name": "a.example"}}],`),
			`rules["r"].backends[0].tls`, `Conflicting backend tls and protocol: Rule "r" has backends[0] with tls and protocol = "h2c"`},
		{"removed name", http80JSON, oneRule(`"request_headers": {"remove": ["a:b"]},`), `rules["r"].request_headers.remove[0]`, `must be an HTTP header name`},
		{"rewrite host", http80JSON, oneRule(`"rewrite": {"hostname": "*.a.example"},`), `rules["r"].rewrite.hostname`, `must be a lower-case DNS name (no wildcard)`},
		{"rewrite path", http80JSON, oneRule(`"rewrite": {"path": "v2"},`), `rules["r"].rewrite.path`, `Invalid rule path: the path "v2" must start with /`},
		{"redirect path and prefix", http80JSON, oneRule(`"path_type": "prefix", "path": "/a", "redirect": {"status_code": 301, "path": "/b", "path_prefix": "/c"},`),
			`rules["r"].redirect.path_prefix`, `Attribute "rules[\"r\"].redirect.path" cannot be specified when "rules[\"r\"].redirect.path_prefix" is specified`},
		{"too many response changes", http80JSON, oneRule(`"response_headers": {"add": {` + manyJSON(17, func(i int) string { return fmt.Sprintf(`"h%d": "v"`, i) }) + `}},`),
			`rules["r"].response_headers.add`, `map must contain at most 16 elements`},
		{"too many query parameters", http80JSON, oneRule(`"query_params": {` + manyJSON(17, func(i int) string { return fmt.Sprintf(`"q%d": "v"`, i) }) + `},`),
			`rules["r"].query_params`, `map must contain at most 16 elements`},
		{"query parameter name", http80JSON, oneRule(`"query_params": {"a b": "1"},`), `rules["r"].query_params["a b"]`,
			`must be a query parameter name`},
		{"query parameter without a value", http80JSON, oneRule(`"query_params": {"a": ""},`), `rules["r"].query_params["a"]`,
			`string length must be between 1 and 1024`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			expectOneError(t, validateLB(t, rulesConfig(c.listeners, c.rules)), c.at, c.want)
		})
	}
}

// expectOneError checks that diags hold one error, at path at (as
// Terraform prints it), containing want.
func expectOneError(t *testing.T, diags []*tfprotov6.Diagnostic, at, want string) {
	t.Helper()
	var errs []string
	for _, d := range diags {
		if d.Severity == tfprotov6.DiagnosticSeverityError {
			errs = append(errs, attrPathString(d.Attribute)+": "+d.Summary+": "+d.Detail)
		}
	}
	if len(errs) != 1 || !strings.HasPrefix(errs[0], at+": ") || !strings.Contains(errs[0], want) {
		t.Errorf("errors %q\nwant one at %s containing %q", errs, at, want)
	}
}

// TestValidateRulesValid: a configuration using every attribute, names
// as a Gateway's routes render them, query parameters whose names differ
// only in case (two parameters), rules on http and https listeners,
// SNI rules on a tls one, and rules of one priority on tcp/53 and udp/53
// and on http/80 and udp/80 (udp shares no port), fixed responses at each
// end of their ranges (one with an empty backends list) passes.
func TestValidateRulesValid(t *testing.T) {
	caJSON := testCAJSON(t)
	config := rulesConfig(http80JSON+", "+https443JSON+", "+udp80JSON+`, "tls/8443": {"protocol": "tls", "port": 8443, "target_port": 30443},
		"tcp/53": {"protocol": "tcp", "port": 53, "target_port": 30053}, "udp/53": {"protocol": "udp", "port": 53, "target_port": 30053}`, `{
		"ns/db/0:8443@db.example": {"listener_port": 8443, "priority": 1, "hostnames": ["db.example"], "backends": [{"target_pool_id": "tp-a", "port": 30001}]},
		"ns/db/0:8443@*.example": {"listener_port": 8443, "listener_protocol": "tls", "priority": 2, "hostnames": ["*.example"], "headers": {}},
		"ns/dns-tcp/0:53": {"listener_port": 53, "priority": 1, "backends": [{"target_pool_id": "tp-a", "port": 30053}]},
		"ns/dns-udp/0:53": {"listener_port": 53, "listener_protocol": "udp", "priority": 1, "hostnames": [], "backends": [{"target_pool_id": "tp-a", "port": 30053}]},
		"quic": {"listener_port": 80, "listener_protocol": "udp", "priority": 10},
		"ns/api/0.0:80@a.example": {"listener_port": 80, "priority": 10, "hostnames": ["a.example", "*.b.example"],
			"path_type": "prefix", "path": "/api", "method": "GET", "headers": {"X-Env": "canary", "X-Other": ""},
			"backends": [{"target_pool_id": "tp-a", "port": 30001, "weight": 0, "protocol": "h2c"}, {"target_pool_id": "tp-a", "port": 30002, "protocol": "http",
				"tls": {"ca_bundle": `+caJSON+`, "server_name": "api.internal", "subject_alt_names": ["api.internal", "spiffe://example.test/api"]}}],
			"query_params": {"animal": "whale", "ANIMAL": "Whale"},
			"request_headers": {"set": {"X-A": "1"}, "add": {"x-a": "2"}, "remove": ["X-Drop"]},
			"response_headers": {"set": {"X-A": "1"}, "add": {"x-a": "2"}, "remove": ["Server"]},
			"timeouts": {"request_ms": 500, "backend_request_ms": 500}, "retry": {"attempts": 10, "status_codes": [500, 599], "backoff_ms": 0},
			"cors": {"allow_origins": ["https://www.foo.com", "https://*.bar.com"], "allow_methods": ["*"], "allow_headers": ["x-a"],
				"expose_headers": ["x-b"], "allow_credentials": true, "max_age_seconds": 86400},
			"session_persistence": {"name": "JSESSIONID", "absolute_timeout_seconds": 2592000, "lifetime": "permanent"}},
		"moved": {"listener_port": 80, "priority": 20, "backends": [], "path_type": "prefix", "path": "/old",
			"redirect": {"scheme": "https", "hostname": "x.example", "port": 8443, "path_prefix": "/new", "status_code": 302},
			"response_headers": {"set": {"Cache-Control": "no-store"}}},
		"gone": {"listener_port": 80, "priority": 21, "redirect": {"path": "/", "status_code": 301}},
		"v1": {"listener_port": 80, "priority": 22, "path_type": "prefix", "path": "/v1", "backends": [{"target_pool_id": "tp-a", "port": 30001}],
			"rewrite": {"hostname": "backend.internal", "path_prefix": "/v2"}},
		"secure": {"listener_port": 443, "priority": 10},
		"keyed": {"listener_port": 443, "order_key": "a.example/0001", "hostnames": ["a.example"], "fixed_response": {"status_code": 404}},
		"keyed-too": {"listener_port": 443, "order_key": "a.example/0001"},
		"keyed-80": {"listener_port": 80, "order_key": "~"},
		"empty": {"listener_port": 443, "priority": 11, "hostnames": [], "headers": {}, "request_headers": {}},
		"ns/web/a.example:80": {"listener_port": 80, "priority": 30, "hostnames": ["a.example"], "backends": [], "fixed_response": {"status_code": 404}},
		"ok": {"listener_port": 443, "priority": 12, "path_type": "exact", "path": "/healthz", "fixed_response": {"status_code": 200}},
		"versions": {"listener_port": 443, "priority": 16, "path_type": "regex", "path": "/api/v[0-9]+/items/?", "fixed_response": {"status_code": 200}},
		"ok-too": {"listener_port": 443, "priority": 13, "fixed_response": {"status_code": 299}},
		"teapot": {"listener_port": 443, "priority": 14, "fixed_response": {"status_code": 400}},
		"down": {"listener_port": 443, "priority": 15, "fixed_response": {"status_code": 599}}}`)
	for _, d := range validateLB(t, config) {
		t.Errorf("%s: %s: %s: %s", d.Severity, attrPathString(d.Attribute), d.Summary, d.Detail)
	}
}

// TestValidateRulesUnknown: what is known only at apply time (listeners,
// a rule's port, protocol, backends or redirect) skips the checks that
// need it.
func TestValidateRulesUnknown(t *testing.T) {
	ctx := context.Background()
	var sr fwresource.SchemaResponse
	(&loadBalancerResource{}).Schema(ctx, fwresource.SchemaRequest{}, &sr)
	typ := sr.Schema.Type().TerraformType(ctx)
	config := rulesConfig(`"tcp/80": {"protocol": "tcp", "port": 80, "target_port": 8080}`,
		`{"r": {"listener_port": 81, "priority": 10, "redirect": {"status_code": 301}, "backends": []},
		  "s": {"listener_port": 80, "priority": 10},
		  "t": {"listener_port": 80, "listener_protocol": "udp", "priority": 10, "method": "GET"},
		  "u": {"listener_port": 80, "priority": 11, "fixed_response": {"status_code": 404}, "backends": []},
		  "v": {"listener_port": 80, "priority": 12, "order_key": "k"}}`)
	v, err := tftypes.ValueFromJSONWithOpts([]byte(config), typ, tftypes.ValueFromJSONOpts{})
	if err != nil {
		t.Fatal(err)
	}
	unknown := map[string]bool{
		`listeners`:                    true,
		`rules["r"].backends`:          true,
		`rules["s"].listener_port`:     true,
		`rules["t"].listener_protocol`: true,
		`rules["u"].backends`:          true,
		`rules["u"].redirect`:          true,
		`rules["v"].priority`:          true,
	}
	v, err = tftypes.Transform(v, func(p *tftypes.AttributePath, v tftypes.Value) (tftypes.Value, error) {
		if unknown[attrPathString(p)] {
			return tftypes.NewValue(v.Type(), tftypes.UnknownValue), nil
		}
		return v, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range validateLBValue(t, typ, v) {
		t.Errorf("%s: %s: %s: %s", d.Severity, attrPathString(d.Attribute), d.Summary, d.Detail)
	}
}

// TestLoadBalancerStateV1WithoutRules: a version 1 state written before
// rules existed reads, through the provider's UpgradeResourceState, with
// rules null: what a configuration without rules plans.
func TestLoadBalancerStateV1WithoutRules(t *testing.T) {
	ctx := context.Background()
	m := upgradedV1(t, v1StateAttributes(t, v0StateLBID, v0StateInstanceID))
	if !m.Rules.IsNull() || m.ID.ValueString() != v0StateLBID {
		t.Errorf("rules = %v (id %s), want null", m.Rules, m.ID)
	}
	if spec, _ := m.toSpec(ctx); spec.Rules != nil {
		t.Errorf("a state without rules sends rules %+v", spec.Rules)
	}
}

// TestLoadBalancerStateV1RulesWithoutFixedResponse: a version 1 state
// whose rules were written before fixed_response (and query_params,
// response_headers, rewrite, a redirect's path, a backend's protocol and
// order_key) existed needs no
// upgrader (the schema version stayed 1): its rules read with them null,
// as a configuration without them plans, and send none.
func TestLoadBalancerStateV1RulesWithoutFixedResponse(t *testing.T) {
	ctx := context.Background()
	var attrs map[string]json.RawMessage
	if err := json.Unmarshal(v1StateAttributes(t, v0StateLBID, v0StateInstanceID), &attrs); err != nil {
		t.Fatal(err)
	}
	attrs["rules"] = json.RawMessage(`{"dns": {"listener_port": 53, "listener_protocol": "udp", "priority": 1, "hostnames": null,
		"path_type": null, "path": null, "method": null, "headers": null,
		"backends": [{"target_pool_id": "tp-a", "port": 30053, "weight": 1}], "redirect": null, "request_headers": null},
		"moved": {"listener_port": 80, "listener_protocol": null, "priority": 1, "hostnames": null, "path_type": null, "path": null,
		"method": null, "headers": null, "backends": null, "redirect": {"scheme": "https", "hostname": null, "port": null, "status_code": 301},
		"request_headers": null}}`)
	v1, err := json.Marshal(attrs)
	if err != nil {
		t.Fatal(err)
	}
	m := upgradedV1(t, v1)
	var rules map[string]ruleModel
	if d := m.Rules.ElementsAs(ctx, &rules, false); d.HasError() || len(rules) != 2 {
		t.Fatalf("rules %v %v", rules, d)
	}
	if r := rules["dns"]; !r.FixedResponse.IsNull() || !r.QueryParams.IsNull() || !r.ResponseHeaders.IsNull() || !r.Rewrite.IsNull() ||
		!r.OrderKey.IsNull() || r.Priority.ValueInt64() != 1 ||
		r.ListenerProtocol.ValueString() != "udp" || len(r.Backends.Elements()) != 1 {
		t.Errorf("rule read as %+v, want fixed_response, query_params, response_headers and rewrite null and the rest as stored", r)
	}
	spec, d := m.toSpec(ctx)
	if d.HasError() || len(spec.Rules) != 2 || spec.Rules[0].FixedResponse != nil || spec.Rules[0].ResponseHeaders != nil ||
		spec.Rules[0].QueryParams != nil || spec.Rules[0].Rewrite != nil || spec.Rules[0].Backends[0].Port != 30053 ||
		spec.Rules[0].Backends[0].Protocol != "" ||
		spec.Rules[0].OrderKey != "" || spec.Rules[1].OrderKey != "" || spec.Rules[1].Priority != 1 ||
		*spec.Rules[1].Redirect != (exampleapi.Redirect{Scheme: "https", StatusCode: 301}) {
		t.Errorf("sends rules %+v (%v)", spec.Rules, d)
	}
}

// v1StateAttributes is the load balancer's attributes of the version 0
// fixture as version 1 stores them: listeners keyed, no rules.
func v1StateAttributes(t *testing.T, lbID, instanceID string) []byte {
	t.Helper()
	_, v0 := v0Attributes(t, lbID, instanceID)
	v1, err := upgradeListenersV0(v0)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(v1), `"rules"`) {
		t.Fatal("the fixture already has rules")
	}
	return v1
}

// TestAccLoadBalancerRules_stateWithoutRules: real terraform, attached to
// this provider, plans no change for a version 1 state written before
// rules existed and a configuration without them, with or without
// refresh.
func TestAccLoadBalancerRules_stateWithoutRules(t *testing.T) {
	tftest.RequireAcceptance(t)
	t.Parallel()
	e := newTestEnv(t)
	node, lb, state := e.v0Fixture(t)
	var st map[string]any
	if err := json.Unmarshal(state, &st); err != nil {
		t.Fatal(err)
	}
	inst := st["resources"].([]any)[0].(map[string]any)["instances"].([]any)[0].(map[string]any)
	inst["schema_version"] = 1
	inst["attributes"] = json.RawMessage(v1StateAttributes(t, lb.ID, node.ID))
	v1State, err := json.Marshal(st)
	if err != nil {
		t.Fatal(err)
	}

	s := serveTest(t, providerFor(e.tokenEnv), InProcessOptions{Name: "rules"})
	dir := t.TempDir()
	at := attach(t, dir, s)
	writeFile(t, filepath.Join(dir, "terraform.tfstate"), string(v1State))
	writeFile(t, filepath.Join(dir, "main.tf"), e.cliConfig(fmt.Sprintf(v0FixtureConfig, node.ID)))
	ctx, cancel := bg()
	defer cancel()
	if err := at.tf.Init(ctx, at.opt); err != nil {
		t.Fatalf("terraform init: %v", err)
	}
	at.expectNoChanges(t, ctx, "a state without rules")
}

// expectNoChanges plans the workspace without and with refresh: neither
// may have changes. what names the state, for the errors.
func (at attachedTerraform) expectNoChanges(t *testing.T, ctx context.Context, what string) {
	t.Helper()
	for _, refresh := range []bool{false, true} {
		changes, err := at.tf.Plan(ctx, at.opt, tfexec.Refresh(refresh))
		if err != nil {
			t.Fatalf("plan (refresh %t) of %s: %v", refresh, what, err)
		}
		if changes {
			t.Errorf("plan (refresh %t) of %s has changes", refresh, what)
		}
	}
}

const (
	rulesPoolA = "example_target_pool.a"
	rulesPoolB = "example_target_pool.b"
)

// rulesLBConfig is two target pools (a: instance a, b: instance b) and a
// load balancer "gateway" with an http listener on 80 forwarding to pool
// a, with rules (HCL, or "" for none).
func (e *testEnv) rulesLBConfig(a, b, rules string) string {
	if rules != "" {
		rules = "  rules = " + rules
	}
	return e.config(poolConfig("a", "pool-a", "", a) + poolConfig("b", "pool-b", "", b) + fmt.Sprintf(`
resource "example_load_balancer" "web" {
  name           = "gateway"
  listeners      = { "http/80" = { protocol = "http", port = 80, target_port = 8080 } }
  target_pool_id = example_target_pool.a.id
%s
}
`, rules))
}

// gatewayRules are three rules: /api?v=1 of a.example to pool a (as
// api.internal/v2, in apiProtocol), /web of a.example shared by weight
// between pools a and b (with timeouts, and a retry of weightA/40
// attempts), and old.example redirected to /moved (at priority
// redirectPriority).
// gatewayRules' extra are the api backend's tls, then the web rule's
// cors and session_persistence (HCL attributes).
func gatewayRules(weightA, weightB, redirectPriority int, apiProtocol string, extra ...string) string {
	tls, cors := "", `cors = null`
	if len(extra) > 0 {
		tls, cors = ", "+extra[0], extra[1]
	}
	return fmt.Sprintf(`{
    api   = %s
    web   = %s
    moved = %s
  }`, httpRule(10, "a.example", "/api", `query_params = { v = "1" }`,
		fmt.Sprintf(`backends = [{ target_pool_id = example_target_pool.a.id, port = 30001, protocol = %q%s }]`, apiProtocol, tls),
		`request_headers = { set = { "X-Route" = "api" }, remove = ["X-Drop"] }`, `response_headers = { add = { "Cache-Control" = "no-store" } }`,
		`rewrite = { hostname = "api.internal", path_prefix = "/v2" }`),
		httpRule(20, "a.example", "/web", `headers = {}`, fmt.Sprintf(`backends = [
        { target_pool_id = example_target_pool.a.id, port = 30002, weight = %d },
        { target_pool_id = example_target_pool.b.id, port = 30003, weight = %d },
      ]`, weightA, weightB), `timeouts = { request_ms = 10000, backend_request_ms = 0 }`, cors,
			fmt.Sprintf(`retry = { attempts = %d, status_codes = [502, 503], backoff_ms = 100 }`, weightA/40)),
		httpRule(redirectPriority, "old.example", "", `redirect = { scheme = "https", hostname = "new.example", path = "/moved", status_code = 301 }`))
}

// httpRule is a rule (HCL) of the listener on port 80: the requests for
// hostname, under pathPrefix unless it is "", take action (HCL
// attributes).
func httpRule(priority int, hostname, pathPrefix string, action ...string) string {
	attrs := []string{"listener_port = 80", fmt.Sprintf("priority = %d", priority), fmt.Sprintf("hostnames = [%q]", hostname)}
	if pathPrefix != "" {
		attrs = append(attrs, `path_type = "prefix"`, fmt.Sprintf("path = %q", pathPrefix))
	}
	return "{\n      " + strings.Join(append(attrs, action...), "\n      ") + "\n    }"
}

// checkRequests sends simulated requests (or connections) to the load
// balancer in state, on port 80 unless req names one, and compares how it
// answers with want, given the state's pool ids.
func (e *testEnv) checkRequests(req exampleapi.SimulatedRequest, want func(a, b string) exampleapi.RequestOutcome) resource.TestCheckFunc {
	return func(s *terraform.State) error {
		ids := map[string]string{}
		for _, addr := range []string{lbAddr, rulesPoolA, rulesPoolB} {
			rs, ok := s.RootModule().Resources[addr]
			if !ok {
				return fmt.Errorf("%s not in state", addr)
			}
			ids[addr] = rs.Primary.ID
		}
		ctx, cancel := bg()
		defer cancel()
		req.ListenerPort = cmp.Or(req.ListenerPort, 80)
		got, err := e.client.SimulateRequests(ctx, ids[lbAddr], req)
		if err != nil {
			return fmt.Errorf("simulating %+v: %w", req, err)
		}
		w := want(ids[rulesPoolA], ids[rulesPoolB])
		if got.Status != w.Status || got.RulePriority != w.RulePriority || got.Location != w.Location ||
			!maps.Equal(got.Backends, w.Backends) || (w.RequestHeaders != nil && !maps.Equal(got.RequestHeaders, w.RequestHeaders)) ||
			got.RequestHost != w.RequestHost || got.RequestPath != w.RequestPath {
			return fmt.Errorf("%s %s%s (%s/%d) answered %+v, want %+v", req.Method, req.Host, req.Path, req.Protocol, req.ListenerPort, *got, w)
		}
		return nil
	}
}

// TestAccLoadBalancerRules_lifecycle: a load balancer with rules routes
// requests by them in the cloud (a path and query parameter to one pool,
// another path shared 80/20, a redirect) and reads back without drift; import gives the same
// rules; changing a weight, a priority and a backend's protocol (h2c to
// http) updates it in place; removing
// the rules makes rules null and the listener forward to the load
// balancer's targets again. Each step ends with an empty plan.
func TestAccLoadBalancerRules_lifecycle(t *testing.T) {
	e := newTestEnv(t)
	a := e.createInstance(t, "node-a", "ex-west-1a", nil)
	b := e.createInstance(t, "node-b", "ex-west-1b", nil)
	sameID := sameInEachStep()
	toAPI := func(a, _ string) exampleapi.RequestOutcome {
		return exampleapi.RequestOutcome{Status: 200, RulePriority: 10, Backends: map[string]int{a + ":30001": 1},
			RequestHeaders: map[string]string{"X-Route": "api", "X-Keep": "1"}, RequestHost: "api.internal", RequestPath: "/v2/v1"}
	}
	api := exampleapi.SimulatedRequest{Host: "a.example:80", Path: "/api/v1", Query: "v=1&v=2", Headers: map[string]string{"x-drop": "1", "x-keep": "1"}}
	web := exampleapi.SimulatedRequest{Host: "a.example", Path: "/web", Count: 100}
	old := exampleapi.SimulatedRequest{Host: "old.example", Path: "/x"}
	moved := func(priority int) func(a, b string) exampleapi.RequestOutcome {
		return func(string, string) exampleapi.RequestOutcome {
			return exampleapi.RequestOutcome{Status: 301, RulePriority: priority, Location: "https://new.example/moved"}
		}
	}

	ca := simtest.NewCert(t, simtest.CertOptions{CommonName: "backend CA", IsCA: true})

	accTest(t, e.checkPoolsDestroyed, []resource.TestStep{
		{
			// Only the cloud knows its pools: the apply fails on the rule.
			Config: e.rulesLBConfig(a.ID, b.ID, `{
    ghost = {
      listener_port = 80
      priority      = 1
      backends      = [{ target_pool_id = "tp-0000000000000000", port = 30001 }]
    }
  }`),
			ExpectError: diagRE("Cannot create load balancer", `ghost = {`,
				`rules[0].backends[0].target_pool_id: target pool "tp-0000000000000000" does not exist`),
		},
		{
			Config:           e.rulesLBConfig(a.ID, b.ID, gatewayRules(80, 20, 30, "h2c")),
			ConfigPlanChecks: beforeApply(planCreate(lbAddr), planIs(lbAddr, "rules.api.backends.0.weight", 1)),
			ConfigStateChecks: stateChecks{
				sameID(lbAddr, "id"),
				stateIs(lbAddr, "rules", mapLen(3)),
				stateIs(lbAddr, "rules.api.hostnames", listOf("a.example")),
				stateIs(lbAddr, "rules.api.method", nil),
				stateIs(lbAddr, "rules.api.headers", nil),
				stateIs(lbAddr, "rules.api.redirect", nil),
				stateIs(lbAddr, "rules.api.request_headers", object{"set": mapOf{"X-Route": "api"}, "add": nil, "remove": listOf("X-Drop")}),
				stateIs(lbAddr, "rules.api.query_params", mapOf{"v": "1"}),
				stateIs(lbAddr, "rules.api.response_headers", object{"set": nil, "add": mapOf{"Cache-Control": "no-store"}, "remove": nil}),
				stateIs(lbAddr, "rules.web.headers", mapLen(0)),
				stateIs(lbAddr, "rules.web.backends.0.weight", 80),
				stateIs(lbAddr, "rules.web.timeouts", object{"request_ms": 10000, "backend_request_ms": 0}),
				stateIs(lbAddr, "rules.web.retry", object{"attempts": 2, "status_codes": listOf(502, 503), "backoff_ms": 100}),
				stateIs(lbAddr, "rules.api.timeouts", nil),
				stateIs(lbAddr, "rules.api.backends.0.protocol", "h2c"),
				stateIs(lbAddr, "rules.web.backends.1", object{"target_pool_id": matching(`^tp-`), "port": 30003, "weight": 20, "protocol": nil, "tls": nil}),
				stateSame(rulesPoolB, "id", lbAddr, "rules.web.backends.1.target_pool_id"),
				stateIs(lbAddr, "rules.moved.backends", nil),
				stateIs(lbAddr, "rules.moved.redirect", object{"scheme": "https", "hostname": "new.example", "port": nil, "path": "/moved",
					"path_prefix": nil, "status_code": 301}),
				stateIs(lbAddr, "rules.api.rewrite", object{"hostname": "api.internal", "path": nil, "path_prefix": "/v2"}),
			},
			Check: resource.ComposeAggregateTestCheckFunc(
				e.checkAPI(func(lb *exampleapi.LoadBalancer) error {
					if len(lb.Rules) != 3 || lb.Rules[0].Name != "api" || lb.Rules[2].Name != "moved" ||
						lb.Rules[0].Backends[0].Protocol != exampleapi.BackendH2C ||
						*lb.Rules[1].Timeouts != (exampleapi.Timeouts{RequestMS: 10000}) || lb.Rules[1].Retry.Attempts != 2 {
						return fmt.Errorf("API rules %+v", lb.Rules)
					}
					return nil
				}),
				e.checkRequests(api, toAPI),
				e.checkRequests(exampleapi.SimulatedRequest{Host: "a.example", Path: "/api/v1", Query: "v=2&v=1"}, func(string, string) exampleapi.RequestOutcome {
					return exampleapi.RequestOutcome{Status: 404}
				}),
				e.checkRequests(web, func(a, b string) exampleapi.RequestOutcome {
					return exampleapi.RequestOutcome{Status: 200, RulePriority: 20, Backends: map[string]int{a + ":30002": 80, b + ":30003": 20}}
				}),
				e.checkRequests(old, moved(30)),
				e.checkRequests(exampleapi.SimulatedRequest{Host: "b.example"}, func(string, string) exampleapi.RequestOutcome {
					return exampleapi.RequestOutcome{Status: 404}
				}),
			),
		},
		// The empty headers = {} and a timeout of 0 (none) are
		// configuration the cloud cannot hold.
		importStep(lbAddr, "rules.web.headers", "rules.web.timeouts.backend_request_ms"),
		{
			// One weight, one priority and a protocol: the rules change in place.
			// ...and the api backend re-encrypts, verified against a CA.
			Config: e.rulesLBConfig(a.ID, b.ID, gatewayRules(50, 50, 25, "http",
				fmt.Sprintf(`tls = { ca_bundle = %q, server_name = "api.internal", subject_alt_names = ["spiffe://example.test/api"] }`, ca.CertPEM),
				`cors = { allow_origins = ["https://www.foo.com", "https://*.bar.com"], allow_methods = ["GET"], allow_credentials = true, max_age_seconds = 600 }
      session_persistence = { name = "web-session", absolute_timeout_seconds = 3600, lifetime = "permanent" }`)),
			ConfigPlanChecks: beforeApply(
				planUpdate(lbAddr),
				planIs(lbAddr, "rules.web.backends.0.weight", 50),
				planIs(lbAddr, "rules.web.retry.attempts", 1),
				planIs(lbAddr, "rules.moved.priority", 25),
				planIs(lbAddr, "rules.api.backends.0.protocol", "http"),
				planIs(lbAddr, "rules.api.backends.0.tls.server_name", "api.internal"),
			),
			ConfigStateChecks: stateChecks{
				sameID(lbAddr, "id"),
				stateIs(lbAddr, "rules.web.backends.1.weight", 50),
				stateIs(lbAddr, "rules.api.backends.0.protocol", "http"),
				stateIs(lbAddr, "rules.api.backends.0.tls", object{"ca_bundle": ca.CertPEM, "server_name": "api.internal",
					"subject_alt_names": listOf("spiffe://example.test/api")}),
				stateIs(lbAddr, "rules.web.backends.0.tls", nil),
				stateIs(lbAddr, "rules.web.cors", object{"allow_origins": listOf("https://www.foo.com", "https://*.bar.com"),
					"allow_methods": listOf("GET"), "allow_headers": nil, "expose_headers": nil, "allow_credentials": true, "max_age_seconds": 600}),
				stateIs(lbAddr, "rules.web.session_persistence", object{"type": nil, "name": "web-session", "absolute_timeout_seconds": 3600,
					"lifetime": "permanent"}),
				stateIs(lbAddr, "rules.api.session_persistence", nil),
			},
			Check: resource.ComposeAggregateTestCheckFunc(
				e.checkAPI(func(lb *exampleapi.LoadBalancer) error {
					if t := lb.Rules[0].Backends[0].TLS; t == nil || t.CABundle != ca.CertPEM || t.ServerName != "api.internal" ||
						!slices.Equal(t.SubjectAltNames, []string{"spiffe://example.test/api"}) {
						return fmt.Errorf("API backend TLS %+v", t)
					}
					if c := lb.Rules[1].CORS; c == nil || !c.AllowCredentials || c.MaxAgeSeconds != 600 || len(c.AllowOrigins) != 2 {
						return fmt.Errorf("API rule CORS %+v", c)
					}
					if sp := lb.Rules[1].SessionPersistence; sp == nil || *sp != (exampleapi.SessionPersistence{Name: "web-session",
						AbsoluteTimeoutSeconds: 3600, Lifetime: exampleapi.PermanentLifetime}) {
						return fmt.Errorf("API rule session persistence %+v", sp)
					}
					return nil
				}),
				e.checkRequests(web, func(a, b string) exampleapi.RequestOutcome {
					return exampleapi.RequestOutcome{Status: 200, RulePriority: 20, Backends: map[string]int{a + ":30002": 50, b + ":30003": 50}}
				}),
				e.checkRequests(old, moved(25)),
			),
		},
		{
			// No rules: null, and the listener forwards to the pool again.
			Config:           e.rulesLBConfig(a.ID, b.ID, ""),
			ConfigPlanChecks: beforeApply(planUpdate(lbAddr), planIs(lbAddr, "rules", nil)),
			ConfigStateChecks: stateChecks{
				sameID(lbAddr, "id"),
				stateIs(lbAddr, "rules", nil),
			},
			Check: resource.ComposeAggregateTestCheckFunc(
				e.checkAPI(func(lb *exampleapi.LoadBalancer) error {
					if len(lb.Rules) != 0 {
						return fmt.Errorf("rules left: %+v", lb.Rules)
					}
					return nil
				}),
				e.checkRequests(web, func(string, string) exampleapi.RequestOutcome {
					return exampleapi.RequestOutcome{Status: 200, Backends: map[string]int{"targets": 100}}
				}),
			),
		},
	})
}
