package policy

import (
	"strings"
	"testing"
)

func lbPlan(kind string, rs ...Resource) Plan { return Plan{Kind: kind, Resources: rs} }

func TestDefaultsFlagReplaceDestroyImport(t *testing.T) {
	rules, err := Compile(Defaults)
	if err != nil {
		t.Fatal(err)
	}
	if rules.NeedsValues() {
		t.Error("the defaults read no attribute values: they must not cost a show -json")
	}
	lb := "module.load_balancer.example_load_balancer.this"
	cases := []struct {
		name string
		plan Plan
		want []string
	}{
		{"create", lbPlan("change", Resource{Address: lb, Type: "example_load_balancer", Action: "create"}), nil},
		{"update", lbPlan("change", Resource{Address: lb, Type: "example_load_balancer", Action: "update"}), nil},
		{"replace", lbPlan("change", Resource{Address: lb, Type: "example_load_balancer", Action: "replace"}), []string{"load-balancer-replace"}},
		{"destroy", lbPlan("destroy", Resource{Address: lb, Type: "example_load_balancer", Action: "delete"}), []string{"load-balancer-destroy"}},
		{"import", lbPlan("change", Resource{Address: lb, Type: "example_load_balancer", Action: "update", Importing: true}), []string{"load-balancer-import"}},
		{"route delete", lbPlan("change", Resource{Address: "example_route.r", Type: "example_route", Action: "delete"}), nil},
		{"forget", lbPlan("change", Resource{Address: lb, Type: "example_load_balancer", Action: "remove"}), []string{"load-balancer-forget"}},
		{"forget address", lbPlan("change", Resource{Address: "module.address.example_address.this", Type: "example_address", Action: "remove"}), []string{"load-balancer-forget"}},
	}
	for _, c := range cases {
		var got []string
		for _, v := range rules.Evaluate(Input{Plan: c.plan}) {
			got = append(got, v.Rule)
			if v.Effect != RequireApproval || v.Message == "" {
				t.Errorf("%s: verdict %+v", c.name, v)
			}
		}
		if strings.Join(got, ",") != strings.Join(c.want, ",") {
			t.Errorf("%s: verdicts %v, want %v", c.name, got, c.want)
		}
	}
}

func TestRulesReadTheObjectAndValues(t *testing.T) {
	rules, err := Compile([]Rule{
		{Name: "prod-is-manual", When: `object.namespace == "prod" && plan.add + plan.change + plan.remove > 0`, Effect: RequireApproval, Message: "prod changes need a person"},
		{Name: "no-large", When: `values.exists(a, has(values[a].after.type) && values[a].after.type == "lb-large")`, Effect: Deny, Message: "lb-large is not allowed"},
		{Name: "team-label", When: `!("team" in object.labels)`, Effect: Deny, Message: "label the Service with its team"},
		{Name: "no-hand-over", When: `plan.forget > 0`, Effect: Deny, Message: "nothing is handed over here"},
	})
	if err != nil {
		t.Fatal(err)
	}
	if !rules.NeedsValues() {
		t.Fatal("a rule reads values: NeedsValues must say so")
	}
	in := Input{
		Object: Object{Kind: "Service", Namespace: "prod", Name: "web", Labels: map[string]string{"team": "shop"}},
		Plan:   Plan{Kind: "change", Change: 1},
		Values: map[string]any{"x": map[string]any{"before": map[string]any{"type": "lb-small"}, "after": map[string]any{"type": "lb-large"}}},
	}
	vs := rules.Evaluate(in)
	if len(vs) != 2 || vs[0].Rule != "prod-is-manual" || vs[1].Rule != "no-large" {
		t.Fatalf("verdicts %+v", vs)
	}
	if d := Denied(vs); d == nil || d.Rule != "no-large" || d.Message != "lb-large is not allowed" {
		t.Fatalf("denied %+v", d)
	}
	in.Object.Labels = nil
	in.Object.Namespace = "dev"
	in.Values = nil
	vs = rules.Evaluate(in)
	if len(vs) != 1 || vs[0].Rule != "team-label" {
		t.Fatalf("verdicts %+v", vs)
	}
	in.Object.Labels, in.Plan = map[string]string{"team": "shop"}, Plan{Kind: "change", Forget: 1}
	if d := Denied(rules.Evaluate(in)); d == nil || d.Rule != "no-hand-over" {
		t.Fatalf("a plan that forgets: denied %+v", d)
	}
}

// A group's rules see its members.
func TestRulesReadGroupMembers(t *testing.T) {
	rules, err := Compile([]Rule{{Name: "prod-member", Effect: RequireApproval, Message: "a prod Service shares this load balancer",
		When: `object.kind == "ServiceGroup" && object.members.exists(m, ("tier" in m.labels && m.labels.tier == "prod") || m.namespace == "prod")`}})
	if err != nil {
		t.Fatal(err)
	}
	in := Input{Object: Object{Kind: "ServiceGroup", Namespace: "shop", Name: "front", Members: []Member{
		{Namespace: "shop", Name: "a"}, {Namespace: "shop", Name: "b", Labels: map[string]string{"tier": "prod"}},
	}}, Plan: Plan{Kind: "change", Change: 1}}
	if vs := rules.Evaluate(in); len(vs) != 1 || vs[0].Rule != "prod-member" {
		t.Fatalf("verdicts %+v", vs)
	}
	in.Object.Members = in.Object.Members[:1]
	if vs := rules.Evaluate(in); len(vs) != 0 {
		t.Fatalf("no prod member: verdicts %+v", vs)
	}
	if vs := rules.Evaluate(Input{Object: Object{Kind: "Service"}}); len(vs) != 0 {
		t.Fatalf("a Service has no members: verdicts %+v", vs)
	}
}

// A broken rule stops start-up with an error naming it.
func TestCompileErrorsNameTheRule(t *testing.T) {
	cases := map[string]Rule{
		"syntax":        {Name: "syntax", When: `plan.resources.exists(r, `, Effect: Deny, Message: "m"},
		"no-such-field": {Name: "no-such-field", When: `plan.resourcez.size() > 0`, Effect: Deny, Message: "m"},
		"not-bool":      {Name: "not-bool", When: `plan.add + 1`, Effect: Deny, Message: "m"},
		"type-error":    {Name: "type-error", When: `plan.add == "one"`, Effect: Deny, Message: "m"},
		"bad-effect":    {Name: "bad-effect", When: `true`, Effect: "warn", Message: "m"},
		"no-message":    {Name: "no-message", When: `true`, Effect: Deny},
	}
	for name, r := range cases {
		_, err := Compile([]Rule{{Name: "fine", When: "true", Effect: Deny, Message: "m"}, r})
		if err == nil || !strings.Contains(err.Error(), `rule "`+name+`"`) {
			t.Errorf("%s: got %v", name, err)
		}
	}
	if _, err := Compile([]Rule{{Name: "a", When: "true", Effect: Deny, Message: "m"}, {Name: "a", When: "false", Effect: Deny, Message: "m"}}); err == nil {
		t.Error("duplicate rule names accepted")
	}
}

// A rule that fails at run time flags the plan (fails closed).
func TestEvaluationErrorFlags(t *testing.T) {
	rules, err := Compile([]Rule{{Name: "anno", When: `object.annotations["missing"] == "x"`, Effect: Deny, Message: "m"}})
	if err != nil {
		t.Fatal(err)
	}
	vs := rules.Evaluate(Input{Object: Object{Kind: "Service"}})
	if len(vs) != 1 || vs[0].Effect != Deny || !strings.Contains(vs[0].Message, "failed to evaluate") {
		t.Fatalf("verdicts %+v", vs)
	}
}
