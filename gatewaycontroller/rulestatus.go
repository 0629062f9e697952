package gatewaycontroller

import (
	"errors"
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/example/cloud-provider-example/annotations"
	"github.com/example/cloud-provider-example/engine"
	"github.com/example/cloud-provider-example/gateway"
)

// RulesProgrammed is the condition, in a route's status for a Gateway of
// this controller, of what became of the route's rules on the Gateway's
// load balancer: its rule set's plan (docs/adr/0028), which may wait for
// an approval, be denied or fail without holding the Gateway's
// Programmed. Gateway API defines no such route condition, so the type
// carries this controller's domain. Events tell each plan; this says
// where the route stands, for as long as it does.
const RulesProgrammed = "gateway.example.com/RulesProgrammed"

// RulesProgrammed's reasons.
const (
	RulesApplied          = "Applied"
	RulesAwaitingApproval = "AwaitingApproval"
	// RulesPlanOnly: the plan-only policy records the plan and never
	// applies it.
	RulesPlanOnly   = "PlanOnly"
	RulesPlanDenied = "PlanDenied"
	RulesFailed     = "RulesFailed"
	// RulesPending: this look did not reach the route's rule set.
	RulesPending = "Pending"
)

// ruleState is one route's RulesProgrammed.
type ruleState struct {
	status          metav1.ConditionStatus
	reason, message string
}

var (
	rulesApplied = ruleState{metav1.ConditionTrue, RulesApplied, "the route's rules are applied to the Gateway's load balancer"}
	// rulesHeld are the rules of a set that waits to move (moves.go):
	// they are in the load balancer's own plan meanwhile.
	rulesHeld = ruleState{metav1.ConditionUnknown, RulesPending,
		"the route's rules are planned with the Gateway's load balancer until they move to a rule set of their own; the Gateway's Programmed condition tells that plan's state"}
	// rulesUnreached is a route changed since it was told, whose set a
	// look did not reach: the Gateway's load balancer is not built as it
	// is.
	rulesUnreached = ruleState{metav1.ConditionUnknown, RulesPending,
		"the Gateway's load balancer is not programmed, so neither are the route's rules as they are now: the Gateway's Programmed condition says why"}
)

// rulesAwaitingPools is a route whose set waits for the pod pools of its
// own backends (ports), not applied yet: its rules stay as last applied.
// It names no other route's backend, which may be another team's.
func rulesAwaitingPools(ports string) ruleState {
	return ruleState{metav1.ConditionUnknown, RulesPending,
		fmt.Sprintf("the route's rules wait for the pod pool of %s, not applied yet (its plan may await approval, or have failed: the Service's events say); they stay as last applied meanwhile", ports)}
}

// ruleStateOf is what the route is told of its set's reconcile, which
// ended in err: the plan and the policy rules by name, from what the
// engine returns, never its text. The events say more, redacted; a
// failure's error stays on the Gateway, for its owners: it is about the
// shared load balancer (review.routeFailure).
func ruleStateOf(err error) ruleState {
	var wait *engine.AwaitingApprovalError
	var denied *engine.DeniedError
	switch {
	case err == nil:
		return rulesApplied
	case errors.As(err, &wait) && wait.Policy == annotations.ApplyPlanOnly:
		return ruleState{metav1.ConditionFalse, RulesPlanOnly,
			fmt.Sprintf("plan %s is recorded; the plan-only policy never applies it", wait.PlanID)}
	case errors.As(err, &wait):
		why := "the manual policy"
		if len(wait.Verdicts) > 0 {
			var rules []string
			for _, v := range wait.Verdicts {
				rules = append(rules, v.Rule)
			}
			why = "policy rule " + strings.Join(rules, ", ")
		}
		return ruleState{metav1.ConditionFalse, RulesAwaitingApproval,
			fmt.Sprintf("plan %s is awaiting approval (%s): approve it with a PlanApproval (examplectl approve); the route's events say more", wait.PlanID, why)}
	case errors.As(err, &denied):
		return ruleState{metav1.ConditionFalse, RulesPlanDenied,
			fmt.Sprintf("plan %s is denied by policy rule %s; the route's events say why", denied.PlanID, denied.Verdict.Rule)}
	}
	return ruleState{metav1.ConditionFalse, RulesFailed, "the route's rules could not be applied; the Gateway's events say why (its owners read them)"}
}

// ruleStates are what one look at a Gateway told of its routes' rules,
// by route. synced: the look reached the rule sets, so a route without
// one has no rules of its own there (an L4 route forwards with its
// listener).
type ruleStates struct {
	synced bool
	by     map[gateway.RouteKey]ruleState
}

// set writes route key's RulesProgrammed into conds, the conditions of
// its status for a parent, at the route's generation gen: none where the
// parent did not accept it, or it has no rule set. A look that did not
// reach the sets leaves a route unchanged since it was told as it was
// (its rules as applied are still there), and tells one changed since
// that they are pending, so that no condition stays at an earlier
// generation; a route never told is not told then.
func (r ruleStates) set(conds *[]metav1.Condition, key gateway.RouteKey, accepted bool, gen int64) {
	st, ok := r.by[key]
	old := meta.FindStatusCondition(*conds, RulesProgrammed)
	switch {
	case !accepted || r.synced && !ok:
		meta.RemoveStatusCondition(conds, RulesProgrammed)
		return
	case !ok && (old == nil || old.ObservedGeneration == gen):
		return
	case !ok:
		st = rulesUnreached
	}
	meta.SetStatusCondition(conds, metav1.Condition{Type: RulesProgrammed, Status: st.status, Reason: st.reason,
		Message: st.message, ObservedGeneration: gen})
}
