package tfprovider

import (
	"context"
	"fmt"
	"maps"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-framework/path"
	fwresource "github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/example/cloud-provider-example/exampleapi"
)

// ruleSetJSON is a rule set "routes" of lb-1 with rules as JSON.
func ruleSetJSON(rules string) string {
	return `{"load_balancer_id": "lb-1", "name": "routes", "rules": ` + rules + `}`
}

// TestValidateRuleSet: a rule set's rules are checked as the load
// balancer's are (the same checks, at the same paths), but that they have
// an order key and no priority, and route http and https listeners only.
func TestValidateRuleSet(t *testing.T) {
	cases := []struct{ name, rules, at, want string }{
		{"tcp listener", `{"r": {"listener_port": 80, "listener_protocol": "tcp", "order_key": "a"}}`, `rules["r"].listener_protocol`,
			`Rule set rule on a tcp listener: Rule "r" has listener_protocol = "tcp", but a rule set's rules route http and https listeners only`},
		{"udp listener", `{"r": {"listener_port": 80, "listener_protocol": "udp", "order_key": "a"}}`, `rules["r"].listener_protocol`,
			`Rule set rule on a udp listener`},
		{"bad order key", `{"r": {"listener_port": 80, "order_key": "a\tb"}}`, `rules["r"].order_key`,
			`Invalid rule order key: "a\tb" is not an order key`},
		// The load balancer's checks of a rule alone (validateRule).
		{"path without type", `{"r": {"listener_port": 80, "order_key": "a", "path": "/api"}}`, `rules["r"].path_type`,
			`Missing rule path type: Rule "r" has a path, so it needs path_type`},
		{"fixed response and backends", `{"r": {"listener_port": 80, "order_key": "a", "fixed_response": {"status_code": 404},
			"backends": [{"target_pool_id": "tp-a", "port": 30001}]}}`, `rules["r"].fixed_response`, `Conflicting rule fixed_response`},
		{"headers equal ignoring case", `{"r": {"listener_port": 80, "order_key": "a", "headers": {"X-A": "1", "x-a": "2"}}}`,
			`rules["r"].headers["x-a"]`, `Duplicate header name`},
		{"rule name", `{"a b": {"listener_port": 80, "order_key": "a"}}`, `rules["a b"]`, `must be a rule name`},
		{"too many rules", "{" + manyJSON(exampleapi.MaxRules+1, func(i int) string {
			return fmt.Sprintf(`"r%d": {"listener_port": 80, "order_key": "k"}`, i)
		}) + "}", `rules`, `Too many rules: rules has 2001 entries`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			expectOneError(t, validateJSON(t, &ruleSetResource{}, "example_load_balancer_rule_set", ruleSetJSON(c.rules)), c.at, c.want)
		})
	}
	for _, bad := range []struct{ attr, config, want string }{
		{"name", `{"load_balancer_id": "lb-1", "name": "a b"}`, "must be a rule set name"},
		{"load_balancer_id", `{"load_balancer_id": "tp-1", "name": "a"}`, `must be an id starting with "lb-"`},
	} {
		expectOneError(t, validateJSON(t, &ruleSetResource{}, "example_load_balancer_rule_set", bad.config), bad.attr, bad.want)
	}
	valid := ruleSetJSON(`{
		"api": {"listener_port": 80, "order_key": "a.example/0001", "hostnames": ["a.example"], "path_type": "prefix", "path": "/api",
			"backends": [{"target_pool_id": "tp-a", "port": 30001, "protocol": "h2c"}], "retry": {"attempts": 2}},
		"web": {"listener_port": 443, "listener_protocol": "https", "order_key": "a.example/0001"},
		"old": {"listener_port": 80, "listener_protocol": "http", "order_key": "~", "redirect": {"status_code": 301, "scheme": "https"}}}`)
	for _, d := range validateJSON(t, &ruleSetResource{}, "example_load_balancer_rule_set", valid) {
		t.Errorf("valid: %s: %s: %s: %s", d.Severity, attrPathString(d.Attribute), d.Summary, d.Detail)
	}
}

// TestRuleSetRulesAreTheLoadBalancers: a rule set's rules have the load
// balancer's rules' attributes, the same (types and descriptions), but the
// load balancer's priority, and their order_key is required.
func TestRuleSetRulesAreTheLoadBalancers(t *testing.T) {
	ctx := context.Background()
	attrs := func(r fwresource.Resource) map[string]schema.Attribute {
		var sr fwresource.SchemaResponse
		r.Schema(ctx, fwresource.SchemaRequest{}, &sr)
		return sr.Schema.Attributes["rules"].(schema.MapNestedAttribute).NestedObject.Attributes
	}
	lb, set := attrs(&loadBalancerResource{}), attrs(&ruleSetResource{})
	if _, ok := set["priority"]; ok {
		t.Error("a rule set's rule has a priority")
	}
	if k := set["order_key"]; !k.IsRequired() || !lb["order_key"].IsOptional() || !lb["priority"].IsOptional() {
		t.Errorf("order_key required %t in a set, optional %t in a load balancer (priority %t)", k.IsRequired(),
			lb["order_key"].IsOptional(), lb["priority"].IsOptional())
	}
	want := slices.DeleteFunc(slices.Sorted(maps.Keys(lb)), func(n string) bool { return n == "priority" })
	if got := slices.Sorted(maps.Keys(set)); !slices.Equal(got, want) {
		t.Errorf("a set's rule has %v, want %v", got, want)
	}
	// What a user sees of an attribute (its validators hold funcs, which
	// no two calls share).
	shape := func(a schema.Attribute) string {
		return fmt.Sprintf("%v required %t optional %t computed %t: %s", a.GetType(), a.IsRequired(), a.IsOptional(),
			a.IsComputed(), a.GetDescription())
	}
	for name, a := range set {
		if name != "order_key" && shape(a) != shape(lb[name]) {
			t.Errorf("%s differs:\n set %s\n  lb %s", name, shape(a), shape(lb[name]))
		}
	}
}

// keyedRules are rules ordered by key, as the cloud gives them back: a
// rule set's, or a load balancer's keyed ones.
func keyedRules() []exampleapi.Rule {
	return []exampleapi.Rule{
		{Name: "api", ListenerPort: 80, OrderKey: "a.example/0001", Hostnames: []string{"a.example"}, PathType: "prefix", Path: "/api",
			Backends: []exampleapi.RuleBackend{{TargetPoolID: "tp-a", Port: 30001, Weight: 1}}},
		{Name: "web", ListenerPort: 80, OrderKey: "a.example/0002", Hostnames: []string{"a.example"},
			RequestHeaders: &exampleapi.HeaderModifier{Set: []exampleapi.HeaderMatch{{Name: "X-A", Value: "1"}}},
			Backends:       []exampleapi.RuleBackend{{TargetPoolID: "tp-b", Port: 30002, Weight: 3}}},
		{Name: "secure", ListenerPort: 443, ListenerProtocol: "https", OrderKey: "~", FixedResponse: &exampleapi.FixedResponse{StatusCode: 404}},
	}
}

// TestRuleSetRoundTrip: the cloud's set -> model -> request gives back
// its rules; the model's rules have order keys and no priority, and the
// id is "<load balancer id>/<name>".
func TestRuleSetRoundTrip(t *testing.T) {
	ctx := context.Background()
	rs := &exampleapi.RuleSet{LoadBalancerID: "lb-1", Name: "ns/route", Rules: keyedRules()}
	m, diags := ruleSetFromAPI(ctx, rs, ruleSetModel{})
	if diags.HasError() {
		t.Fatal(diags)
	}
	if m.ID.ValueString() != "lb-1/ns/route" || m.LoadBalancerID.ValueString() != "lb-1" || m.Name.ValueString() != "ns/route" {
		t.Errorf("id %s, load balancer %s, name %s", m.ID, m.LoadBalancerID, m.Name)
	}
	if !m.Rules.ElementType(ctx).Equal(keyedRuleType) {
		t.Errorf("rules of %v, want %v", m.Rules.ElementType(ctx), keyedRuleType)
	}
	want := rulesJSONOf(t, types.MapType{ElemType: keyedRuleType}, `{"secure": {"listener_port": 443, "listener_protocol": "https",
		"order_key": "~", "fixed_response": {"status_code": 404}}}`)
	if got := m.Rules.Elements()["secure"]; !got.Equal(want.Elements()["secure"]) {
		t.Errorf("secure rule\n got %v\nwant %v", got, want.Elements()["secure"])
	}
	for range 10 {
		req, d := m.ruleSetRequest(ctx)
		if d.HasError() || !reflect.DeepEqual(req.Rules, keyedRules()) {
			t.Fatalf("round trip (%v):\n got %+v\nwant %+v", d, req.Rules, keyedRules())
		}
	}
	// No rules: null, or {} when so configured; either sends [], not null.
	none, _ := ruleSetFromAPI(ctx, &exampleapi.RuleSet{LoadBalancerID: "lb-1", Name: "empty"}, ruleSetModel{})
	if !none.Rules.IsNull() {
		t.Errorf("no rules read as %v, want null", none.Rules)
	}
	if req, _ := none.ruleSetRequest(ctx); req.Rules == nil || len(req.Rules) != 0 {
		t.Errorf("no rules send %#v, want []", req.Rules)
	}
}

// TestLoadBalancerKeyedRulesRoundTrip: a load balancer's keyed rules read
// with a null priority and send none, beside numbered ones.
func TestLoadBalancerKeyedRulesRoundTrip(t *testing.T) {
	ctx := context.Background()
	lb := &exampleapi.LoadBalancer{ID: "lb-1", LoadBalancerSpec: fullSpec()}
	numbered := exampleapi.Rule{Name: "first", ListenerPort: 80, Priority: 1, Redirect: &exampleapi.Redirect{StatusCode: 302}}
	lb.Rules = append([]exampleapi.Rule{numbered}, keyedRules()...)
	slices.SortFunc(lb.Rules, compareRules)
	m, diags := loadBalancerFromAPI(ctx, lb, loadBalancerModel{})
	if diags.HasError() {
		t.Fatal(diags)
	}
	rules := m.Rules.Elements()
	if p := rules["api"].(types.Object).Attributes()["priority"]; !p.IsNull() {
		t.Errorf("a keyed rule's priority is %v, want null", p)
	}
	if k := rules["first"].(types.Object).Attributes()["order_key"]; !k.IsNull() {
		t.Errorf("a numbered rule's order key is %v, want null", k)
	}
	if spec, d := m.toSpec(ctx); d.HasError() || !reflect.DeepEqual(spec.Rules, lb.Rules) {
		t.Errorf("round trip (%v):\n got %+v\nwant %+v", d, spec.Rules, lb.Rules)
	}
}

func TestParseRuleSetID(t *testing.T) {
	for id, want := range map[string][2]string{
		"lb-1/routes":            {"lb-1", "routes"},
		"lb-1/ns/route:80@a.b#c": {"lb-1", "ns/route:80@a.b#c"},
	} {
		lb, name, err := parseRuleSetID(id)
		if err != nil || lb != want[0] || name != want[1] {
			t.Errorf("%q: %q %q %v, want %q", id, lb, name, err, want)
		}
		if got := ruleSetID(lb, name); got != id {
			t.Errorf("ruleSetID(%q, %q) = %q", lb, name, got)
		}
	}
	for _, id := range []string{"", "lb-1", "lb-1/", "/routes", "tp-1/routes", "lb-/routes", "lb-1/a b", "routes"} {
		if _, _, err := parseRuleSetID(id); err == nil || !strings.Contains(err.Error(), "want <load_balancer_id>/<name>") {
			t.Errorf("%q: %v, want an error naming the id's form", id, err)
		}
	}
}

// TestRuleSetFieldResolver: the cloud's error on rules[i] of the PUT
// (sorted as sent), or inside it, lands on that rule's key.
func TestRuleSetFieldResolver(t *testing.T) {
	r := ruleSetFieldResolver(exampleapi.PutRuleSetRequest{Rules: keyedRules()})
	for field, want := range map[string]path.Path{
		"rules":                               path.Root("rules"),
		"rules[0].order_key":                  path.Root("rules").AtMapKey("api"),
		"rules[1].backends[0].target_pool_id": path.Root("rules").AtMapKey("web"),
		"rules[2]":                            path.Root("rules").AtMapKey("secure"),
		"rules[3].listener_port":              path.Root("rules"),
		"name":                                path.Root("name"),
	} {
		if got, ok := r(field); !ok || !got.Equal(want) {
			t.Errorf("%s: got %v %v, want %v", field, got, ok, want)
		}
	}
	if _, ok := r("load_balancer_id.x"); ok {
		t.Error("an unknown field resolved")
	}
}
