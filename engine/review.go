package engine

import (
	"errors"
	"fmt"
	"strings"

	tfjson "github.com/hashicorp/terraform-json"

	"github.com/example/cloud-provider-example/annotations"
	"github.com/example/cloud-provider-example/policy"
	"github.com/example/cloud-provider-example/runner"
)

// The contract between the engine and its caller (package review builds
// the Review and reads the Outcome), and how policy rules see a plan.

// Review is how an object's plans are decided: auto applies a plan no
// policy rule flags; a flagged plan, and every plan under manual, waits
// for approval; plan-only never applies; a plan a rule denies is never
// applied.
type Review struct {
	Policy annotations.ApplyPolicy
	// Object is the object as policy rules see it.
	Object policy.Object
	// Approval tells whether a plan has the approvals it needs; nil
	// approves nothing.
	Approval func(p *runner.Plan) Approval
	// BeforeApply, if set, hears of every plan with changes right before
	// terraform applies it, with its approvers (none under auto): where
	// the audit log writes ahead, so a crash during the apply cannot lose
	// the line.
	BeforeApply func(p *runner.Plan, approvers []string)
}

func (rv Review) beforeApply(p *runner.Plan, approvers []string) {
	if rv.BeforeApply != nil && p.HasChanges {
		rv.BeforeApply(p, approvers)
	}
}

// Approval is what the approvals of one plan amount to.
type Approval struct {
	Approved bool
	// Approvers are the verified approvers counted.
	Approvers []string
	// Ignored describes each approval that was not counted, and why.
	Ignored []string
}

// AwaitingApprovalError: the object's change is a recorded plan that may
// not be applied (yet).
type AwaitingApprovalError struct {
	PlanID   string
	Policy   annotations.ApplyPolicy
	Verdicts []policy.Verdict
}

func (e *AwaitingApprovalError) Error() string {
	if e.Policy == annotations.ApplyPlanOnly {
		return fmt.Sprintf("plan %s recorded; the plan-only policy never applies", e.PlanID)
	}
	why := "the manual policy"
	if len(e.Verdicts) > 0 {
		var rules []string
		for _, v := range e.Verdicts {
			rules = append(rules, fmt.Sprintf("%s: %s", v.Rule, v.Message))
		}
		why = "policy rule " + strings.Join(rules, "; ")
	}
	return fmt.Sprintf("plan %s is awaiting approval (%s): approve it with a PlanApproval (examplectl approve)", e.PlanID, why)
}

// DeniedError: a policy rule denies the plan; it is never applied.
type DeniedError struct {
	PlanID  string
	Verdict policy.Verdict
}

func (e *DeniedError) Error() string {
	return fmt.Sprintf("plan %s is denied by policy rule %s: %s", e.PlanID, e.Verdict.Rule, e.Verdict.Message)
}

// ErrSkipped: a drift check found the object changed or gone since the
// sweep listed it, and did nothing.
var ErrSkipped = errors.New("skipped: the object changed or went away")

// ErrNotOwner: another replica holds the object's shard (Options.Owns),
// so this one neither plans nor applies it. It is an ErrSkipped: nothing
// is reported of it.
var ErrNotOwner = fmt.Errorf("%w: another replica holds its shard", ErrSkipped)

// Outcome tells what a reconcile decided, for events, records and the
// audit log. Fields are nil when they did not happen.
type Outcome struct {
	Policy annotations.ApplyPolicy
	// Planned is a plan made in this call.
	Planned *runner.Plan
	// Applied is the plan applied in this call.
	Applied *runner.Plan
	// Attempted is the plan whose apply started in this call and failed:
	// the one a failed apply's audit line and record entry name.
	Attempted *runner.Plan
	// Awaiting is the plan waiting for approval, only planned (plan-only)
	// or denied.
	Awaiting *runner.Plan
	// Restored: Awaiting was kept by an earlier controller process.
	Restored bool
	// Superseded is a pending plan replaced (or made moot) in this call.
	Superseded *runner.Plan
	// Verdicts are the policy rules that flagged the plan decided.
	Verdicts []policy.Verdict
	// Approval is what the approvals of the Awaiting or Applied plan
	// amount to, when they were asked.
	Approval Approval
	// Result holds the outputs; nil while a plan waits.
	Result *runner.Result
	// Workspace and Files are the job reconciled (unset on the fast path).
	Workspace string
	Files     map[string][]byte
	// InputsDigest identifies the Kubernetes inputs (Service, nodes).
	InputsDigest string
	// Recovered is a load balancer an interrupted apply left unrecorded,
	// imported so that a deletion destroys it.
	Recovered string
	// RecoveredCertificates are certificates interrupted applies uploaded
	// and could not record, imported so that the plan replaces or
	// destroys them (recoverCertificates).
	RecoveredCertificates []string
}

// Plan kinds as rules see them (policy.Plan.Kind).
const (
	kindChange  = "change"
	kindDestroy = "destroy"
	kindDrift   = "drift"
)

func kindOf(p *runner.Plan) string {
	if p.Destroy {
		return kindDestroy
	}
	return kindChange
}

// evaluate runs the policy rules on a plan; inspect (terraform show
// -json) runs only when a rule reads attribute values.
func (e *Engine) evaluate(p *runner.Plan, kind string, obj policy.Object, inspect func() (*tfjson.Plan, error)) ([]policy.Verdict, error) {
	if e.rules.Len() == 0 {
		return nil, nil
	}
	in := policy.Input{Object: obj, Plan: policy.Plan{
		Kind: kind, Add: int64(p.Summary.Add), Change: int64(p.Summary.Change), Remove: int64(p.Summary.Remove), Import: int64(p.Summary.Import),
		Forget: int64(p.Summary.Forget),
	}}
	for _, r := range p.Summary.Resources {
		in.Plan.Resources = append(in.Plan.Resources, policy.Resource{Address: r.Address, Type: r.Type, Action: r.Action, Reason: r.Reason, Importing: r.Importing})
	}
	if e.rules.NeedsValues() {
		js, err := inspect()
		if err != nil {
			return nil, fmt.Errorf("policy: read the plan's values: %w", err)
		}
		in.Values = valuesOf(js)
	}
	return e.rules.Evaluate(in), nil
}

// valuesOf maps each changed resource's address to its before and after
// attribute values.
func valuesOf(js *tfjson.Plan) map[string]any {
	out := map[string]any{}
	for _, rc := range js.ResourceChanges {
		if rc == nil || rc.Change == nil {
			continue
		}
		var actions []any
		for _, a := range rc.Change.Actions {
			actions = append(actions, string(a))
		}
		out[rc.Address] = map[string]any{"before": rc.Change.Before, "after": rc.Change.After, "actions": actions}
	}
	return out
}
