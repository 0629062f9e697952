package preview

import (
	"strings"
	"testing"

	tfjson "github.com/hashicorp/terraform-json"

	"github.com/example/cloud-provider-example/annotations"
	"github.com/example/cloud-provider-example/policy"
	"github.com/example/cloud-provider-example/renderer"
	"github.com/example/cloud-provider-example/runner"
)

func shape(internal bool, listeners ...renderer.ListenerShape) *renderer.Shape {
	return &renderer.Shape{Name: "k8s-web", Type: "lb-small", Algorithm: "round_robin", Internal: internal, IPFamily: "ipv4", Listeners: listeners}
}

var (
	tcp80   = renderer.ListenerShape{Protocol: "tcp", Port: 80, TargetPort: 30080}
	tcp8080 = renderer.ListenerShape{Protocol: "tcp", Port: 8080, TargetPort: 30081}
)

func TestWarnings(t *testing.T) {
	const lb = "module.load_balancer.example_load_balancer.this"
	replace := &runner.Speculation{HasChanges: true,
		Summary: runner.PlanSummary{Add: 1, Remove: 1, Resources: []runner.ResourceChange{{Address: lb, Type: "example_load_balancer", Action: "replace"}}},
		JSON: &tfjson.Plan{ResourceChanges: []*tfjson.ResourceChange{{Address: lb,
			Change: &tfjson.Change{Actions: tfjson.Actions{tfjson.ActionDelete, tfjson.ActionCreate}, ReplacePaths: []any{[]any{"internal"}}}}}}}
	held := []policy.Verdict{{Rule: "load-balancer-replace", Effect: policy.RequireApproval, Message: "replaces a load balancer"}}
	for _, tc := range []struct {
		name    string
		c       Change
		want    []string
		outcome Outcome
	}{
		{
			name: "a replacement held by a rule",
			c:    Change{Old: shape(false, tcp80), New: shape(true, tcp80), Plan: replace, Verdicts: held, Policy: annotations.ApplyAuto, Approvals: 2},
			want: []string{"cloud change (terraform plan): +1 ~0 -1", "REPLACES " + lb + " (because internal changes)",
				"rule load-balancer-replace holds this change for approval (2 needed): replaces a load balancer"},
			outcome: NeedsApproval,
		},
		{
			name: "the delay asked of the pool, under manual",
			c: Change{Old: shape(false, tcp80), New: shape(false, tcp80), Plan: &runner.Speculation{HasChanges: true,
				JSON: &tfjson.Plan{OutputChanges: map[string]*tfjson.Change{renderer.DelayOutput: {Actions: tfjson.Actions{tfjson.ActionCreate}, After: float64(3600)}}}},
				Policy: annotations.ApplyManual, Approvals: 1},
			want: []string{"the deregistration delay asked of the target pool: the cluster's -> 3600s (the shared pool follows once this plan is applied)",
				"apply policy manual: the plan waits for 1 approval(s)"},
			outcome: NeedsApproval,
		},
		{
			name:    "no change",
			c:       Change{Old: shape(false, tcp80), New: shape(false, tcp80), Plan: &runner.Speculation{}, Policy: annotations.ApplyManual, Approvals: 1},
			want:    []string{"no cloud change (terraform plan)"},
			outcome: NoChange,
		},
		{
			name: "a listener added, from the rendering under manual",
			c:    Change{Old: shape(false, tcp80), New: shape(false, tcp80, tcp8080), Fallback: "terraform did not answer within 1s", Policy: annotations.ApplyManual, Approvals: 1},
			want: []string{"cloud change (from the rendering: terraform did not answer within 1s, not a terraform plan)",
				"listener tcp/8080 added (to node port 30081)", "apply policy manual: the plan waits for 1 approval(s)"},
			outcome: NeedsApproval,
		},
		{
			name:    "a replacement from the rendering",
			c:       Change{Old: shape(false, tcp80), New: shape(true), Fallback: "no state yet", Policy: annotations.ApplyAuto},
			want:    []string{"REPLACES the load balancer (internal false -> true)", "listener tcp/80 removed"},
			outcome: Changes,
		},
		{
			name:    "a new Service",
			c:       Change{New: shape(false, tcp80), Policy: annotations.ApplyAuto},
			want:    []string{"a new load balancer k8s-web (lb-small) will be created", "listener tcp/80 added"},
			outcome: Changes,
		},
		{
			name:    "refused",
			c:       Change{Refusals: []string{`unknown annotation "loadbalancer.example.com/internl"`}},
			want:    []string{`the controller would refuse this Service: unknown annotation "loadbalancer.example.com/internl"`},
			outcome: Refused,
		},
		{
			name:    "denied by a rule",
			c:       Change{Old: shape(false, tcp80), New: shape(true, tcp80), Plan: replace, Verdicts: []policy.Verdict{{Rule: "no-replace", Effect: policy.Deny, Message: "never"}}},
			want:    []string{"rule no-replace denies this change: never"},
			outcome: Refused,
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := tc.c.Warnings()
			for _, w := range tc.want {
				found := false
				for _, g := range got {
					found = found || strings.Contains(g, w)
				}
				if !found {
					t.Errorf("no warning says %q:\n%s", w, strings.Join(got, "\n"))
				}
			}
			for _, g := range got {
				if !strings.HasPrefix(g, Prefix) || len(g) > maxWarning {
					t.Errorf("warning %q: want the prefix and at most %d bytes", g, maxWarning)
				}
			}
			if o := tc.c.Outcome(); o != tc.outcome {
				t.Errorf("outcome %d, want %d", o, tc.outcome)
			}
		})
	}
}

func TestClip(t *testing.T) {
	long := strings.Repeat("x", 400)
	if got := clip(long); len(got) != maxWarning || !strings.HasSuffix(got, "...") {
		t.Errorf("clip: %d bytes", len(got))
	}
}

func TestRenderedResources(t *testing.T) {
	for _, tc := range []struct {
		name string
		c    Change
		want string
	}{
		{"create", Change{New: shape(false, tcp80)}, "create"},
		{"replace", Change{Old: shape(false, tcp80), New: shape(true, tcp80)}, "replace"},
		{"update", Change{Old: shape(false, tcp80), New: shape(false, tcp80, tcp8080)}, "update"},
		{"none", Change{Old: shape(false, tcp80), New: shape(false, tcp80)}, ""},
	} {
		got := tc.c.RenderedResources()
		action := ""
		if len(got) == 1 {
			action = got[0].Action
		}
		if action != tc.want || len(got) > 1 {
			t.Errorf("%s: %+v, want action %q", tc.name, got, tc.want)
		}
	}
}

func TestOutcomeLine(t *testing.T) {
	for _, c := range []Change{
		{Refusals: []string{"bad"}},
		{Old: shape(false, tcp80), New: shape(false, tcp80), Plan: &runner.Speculation{}},
		{New: shape(false, tcp80), Policy: annotations.ApplyManual},
		{New: shape(false, tcp80), Policy: annotations.ApplyAuto},
	} {
		got, ok := ParseOutcome(c.Warnings())
		if !ok || got != c.Outcome() {
			t.Errorf("%+v: parsed %v, %t; want %v", c, got, ok, c.Outcome())
		}
	}
	if _, ok := ParseOutcome([]string{"something else"}); ok {
		t.Error("an outcome parsed from no outcome line")
	}
}
