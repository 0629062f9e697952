package gatewaycontroller

import (
	"errors"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/example/cloud-provider-example/annotations"
	"github.com/example/cloud-provider-example/engine"
	"github.com/example/cloud-provider-example/gateway"
)

// TestRuleStateOf: a route is told what became of its set's plan, by the
// plan's id and the policy rules' names, never the text of an error: a
// failure's, about the shared load balancer, stays on the Gateway.
func TestRuleStateOf(t *testing.T) {
	for _, tc := range []struct {
		err                  error
		status               metav1.ConditionStatus
		reason, has, hasNone string
	}{
		{nil, metav1.ConditionTrue, RulesApplied, "applied", ""},
		{&engine.AwaitingApprovalError{PlanID: "plan-1", Policy: annotations.ApplyManual}, metav1.ConditionFalse, RulesAwaitingApproval, "plan plan-1 is awaiting approval (the manual policy)", ""},
		// A rule's message may quote the plan (a header's value): its
		// event is redacted, the condition names the rule alone.
		{&engine.AwaitingApprovalError{PlanID: "plan-1", Policy: annotations.ApplyAuto, Verdicts: []engine.Verdict{{Rule: "big-change", Message: "token s3cr3t"}}},
			metav1.ConditionFalse, RulesAwaitingApproval, "(policy rule big-change)", "s3cr3t"},
		{&engine.AwaitingApprovalError{PlanID: "plan-1", Policy: annotations.ApplyPlanOnly}, metav1.ConditionFalse, RulesPlanOnly, "plan-only policy never applies", ""},
		{&engine.DeniedError{PlanID: "plan-1", Verdict: engine.Verdict{Rule: "no-wildcards", Message: "token s3cr3t"}}, metav1.ConditionFalse, RulesPlanDenied, "denied by policy rule no-wildcards", "s3cr3t"},
		{errors.New("load balancer lb-1 of team-a: quota"), metav1.ConditionFalse, RulesFailed, "the Gateway's events say why", "team-a"},
	} {
		st := ruleStateOf(tc.err)
		if st.status != tc.status || st.reason != tc.reason || !strings.Contains(st.message, tc.has) ||
			tc.hasNone != "" && strings.Contains(st.message, tc.hasNone) {
			t.Errorf("%v: %+v; want %s %s saying %q", tc.err, st, tc.status, tc.reason, tc.has)
		}
	}
}

// TestRulesProgrammedCondition: the route's status for the Gateway says
// where its rules stand, at its generation: never left at an earlier one
// (the conformance suite's observedGeneration checks), gone where the
// route has no set or is not accepted.
func TestRulesProgrammedCondition(t *testing.T) {
	key := gateway.RouteKey{Kind: gateway.KindHTTPRoute, NamespacedName: types.NamespacedName{Namespace: "team-b", Name: "cross"}}
	ns := gatewayv1.Namespace("infra")
	sc := scope{gateway: types.NamespacedName{Namespace: "infra", Name: "gw"}, set: func(types.NamespacedName) bool { return false }}
	accepted := []gateway.Parent{{Ref: gatewayv1.ParentReference{Namespace: &ns, Name: "gw"},
		Accepted:     gateway.Reason{Reason: string(gatewayv1.RouteReasonAccepted)},
		ResolvedRefs: gateway.Reason{Reason: string(gatewayv1.RouteReasonResolvedRefs)}}}
	refused := []gateway.Parent{{Ref: accepted[0].Ref, Accepted: gateway.Reason{Reason: string(gatewayv1.RouteReasonNotAllowedByListeners)},
		ResolvedRefs: accepted[0].ResolvedRefs}}
	waiting := ruleStateOf(&engine.AwaitingApprovalError{PlanID: "plan-1", Policy: annotations.ApplyManual})
	var st gatewayv1.RouteStatus
	for _, step := range []struct {
		what    string
		gen     int64
		parents []gateway.Parent
		rules   ruleStates
		reason  string // "": no condition
	}{
		{"not reached, never told", 1, accepted, ruleStates{}, ""},
		{"its set waits", 2, accepted, ruleStates{synced: true, by: map[gateway.RouteKey]ruleState{key: waiting}}, RulesAwaitingApproval},
		{"applied", 2, accepted, ruleStates{synced: true, by: map[gateway.RouteKey]ruleState{key: rulesApplied}}, RulesApplied},
		{"not reached, the route unchanged", 2, accepted, ruleStates{}, RulesApplied},
		{"not reached, the route changed", 3, accepted, ruleStates{}, RulesPending},
		{"no set", 4, accepted, ruleStates{synced: true}, ""},
		{"applied again", 5, accepted, ruleStates{synced: true, by: map[gateway.RouteKey]ruleState{key: rulesApplied}}, RulesApplied},
		{"not accepted", 6, refused, ruleStates{synced: true, by: map[gateway.RouteKey]ruleState{key: rulesApplied}}, ""},
	} {
		setParents(key, step.gen, &st, sc, step.parents, step.rules)
		if len(st.Parents) != 1 {
			t.Fatalf("%s: parents %+v", step.what, st.Parents)
		}
		c := meta.FindStatusCondition(st.Parents[0].Conditions, RulesProgrammed)
		switch {
		case step.reason == "" && c != nil:
			t.Errorf("%s: %+v; want no %s", step.what, c, RulesProgrammed)
		case step.reason != "" && (c == nil || c.Reason != step.reason || c.ObservedGeneration != step.gen):
			t.Errorf("%s: %+v; want %s at generation %d", step.what, c, step.reason, step.gen)
		}
		if a := meta.FindStatusCondition(st.Parents[0].Conditions, string(gatewayv1.RouteConditionAccepted)); a == nil || a.ObservedGeneration != step.gen {
			t.Errorf("%s: Accepted %+v", step.what, a)
		}
	}
}
