package review

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"strings"

	v1 "k8s.io/api/core/v1"

	"github.com/example/cloud-provider-example/annotations"
	"github.com/example/cloud-provider-example/audit"
	"github.com/example/cloud-provider-example/engine"
	"github.com/example/cloud-provider-example/records"
)

// Report records one reconcile of s: events on its object, audit lines,
// the workspace's phase (metrics) and its plan record; approvals used up
// are deleted. Failing to record is logged, never returned: the
// infrastructure change already happened (or not). A reconcile skipped
// because its object changed or went away meanwhile (engine.ErrSkipped,
// engine.ErrGone) decided nothing and is not reported.
func (b *Board) Report(ctx context.Context, s Subject, out *engine.Outcome, err error) {
	if errors.Is(err, engine.ErrSkipped) || errors.Is(err, engine.ErrGone) {
		return
	}
	b.redactCredentials()
	var wait *engine.AwaitingApprovalError
	var denied *engine.DeniedError
	awaiting, isDenied := errors.As(err, &wait), errors.As(err, &denied)
	failed := err != nil && !awaiting && !isDenied
	if failed {
		b.Failed(s, err)
	}
	if out == nil || out.Workspace == "" {
		return
	}
	if err == nil && out.Result != nil && out.Result.FastPath && out.Superseded == nil {
		b.phases.set(out.Workspace, "applied")
		return // nothing happened that the record does not say already
	}
	// The record first: an event telling to approve a plan is acted on
	// at once (examplectl approve reads the record).
	destroyed := out.Applied != nil && out.Applied.Destroy
	if !destroyed {
		b.updateRecord(ctx, s, out, err, now())
	}
	if out.Recovered != "" {
		b.eventf(s, v1.EventTypeWarning, "LoadBalancerRecovered", "Load balancer %s, created by an apply that could not record it, is back in the state: the deletion destroys it", out.Recovered)
		b.auditf(s, out, audit.Entry{Action: "import", Outcome: "recovered", Details: map[string]string{"id": out.Recovered}}, nil)
	}
	for _, id := range out.RecoveredCertificates {
		b.eventf(s, v1.EventTypeWarning, "CertificateRecovered", "Certificate %s, uploaded by an apply that could not record it, is in the state now: the plan replaces or destroys it", id)
		b.auditf(s, out, audit.Entry{Action: "import", Outcome: "recovered", Details: map[string]string{"id": id, "resource": "certificate"}}, nil)
	}
	if p := out.Superseded; p != nil {
		b.eventf(s, v1.EventTypeNormal, "PlanSuperseded", "Plan %s superseded: the object, its nodes or the cloud changed", p.ID)
		b.auditf(s, out, audit.Entry{Action: "supersede", Actor: b.self}, p)
		b.approvals.removeForPlan(ctx, s.ref, p.ID)
	}
	if p := out.Planned; p != nil && p.HasChanges {
		if s.kind == records.KindDrift {
			driftDetected.Inc()
			b.eventf(s, v1.EventTypeWarning, "DriftDetected", "Drift detected: %s (%d resources changed outside Terraform)", p.ID, len(p.Summary.Drift))
			b.auditf(s, out, audit.Entry{Action: audit.ActionDrift}, p)
		}
		b.eventf(s, v1.EventTypeNormal, "Planned", "Planned %s (%s)", p.ID, p.Summary)
		b.auditf(s, out, audit.Entry{Action: audit.ActionPlan, Details: verdictDetails(out)}, p)
	}
	b.reportDecision(ctx, s, out, denied)
	if out.Result != nil {
		for _, w := range out.Result.Warnings {
			b.eventf(s, v1.EventTypeWarning, "TerraformWarning", "%s", w)
		}
	}
	if failed {
		b.auditf(s, out, audit.Entry{Action: audit.ActionApply, Outcome: string(records.Failed), Error: err.Error()}, cmp.Or(out.Attempted, out.Planned))
	}
	b.setPhase(out, err, awaiting, isDenied)
	if destroyed {
		b.deleteRecord(ctx, out.Workspace) // records go with the workspace
	}
}

// reportDecision reports what became of the plan decided: denied,
// awaiting approval (and the approvals not counted), or applied.
func (b *Board) reportDecision(ctx context.Context, s Subject, out *engine.Outcome, denied *engine.DeniedError) {
	fresh := out.Awaiting != nil && out.Planned == out.Awaiting
	switch {
	case denied != nil && fresh:
		b.eventf(s, v1.EventTypeWarning, "PlanDenied", "Plan %s denied by policy rule %s: %s", denied.PlanID, denied.Verdict.Rule, denied.Verdict.Message)
		b.auditf(s, out, audit.Entry{Action: "deny", Outcome: string(records.Denied), Details: verdictDetails(out)}, out.Awaiting)
	case out.Awaiting != nil && denied == nil && fresh && out.Policy != annotations.ApplyPlanOnly:
		b.eventf(s, v1.EventTypeNormal, "AwaitingApproval", "AwaitingApproval %s (%s): %s; approve with `examplectl approve %s %s`",
			out.Awaiting.ID, out.Awaiting.Summary, b.why(out), s.ref.Arg(), out.Awaiting.ID)
	}
	for _, msg := range out.Approval.Ignored {
		if b.once("ignored\x00" + msg) {
			b.eventf(s, v1.EventTypeWarning, "ApprovalIgnored", "%s", msg)
			b.auditf(s, out, audit.Entry{Action: audit.ActionApprove, Outcome: "ignored", Details: map[string]string{"reason": msg}}, out.Awaiting)
		}
	}
	p := out.Awaiting
	if p == nil {
		p = out.Applied
	}
	if p != nil {
		for _, who := range out.Approval.Approvers {
			if b.once("approved\x00" + p.ID + "\x00" + who) {
				b.auditf(s, out, audit.Entry{Action: audit.ActionApprove, Actor: who, Outcome: "counted",
					Details: map[string]string{"approvals": fmt.Sprintf("%d of %d", len(out.Approval.Approvers), b.cfg.Review.Approvals.Required)}}, p)
			}
		}
	}
	if p := out.Applied; p != nil && p.HasChanges {
		action, actor := audit.ActionApply, b.self
		if p.Destroy {
			action = audit.ActionDestroy
		}
		by := ""
		if len(out.Approval.Approvers) > 0 {
			actor = strings.Join(out.Approval.Approvers, ", ")
			by = " approved by " + actor
		}
		b.eventf(s, v1.EventTypeNormal, "Applied", "Applied %s (%s)%s", p.ID, p.Summary, by)
		details := verdictDetails(out)
		// The authors the record keeps, not the caller's: a change stays
		// its author's however the plan was reached.
		if c, err := b.planContributors(ctx, s, p); err == nil {
			if len(c.Authors) > 0 {
				details = withDetail(details, "author", strings.Join(c.Authors, ", "))
			}
			if len(c.Unverified) > 0 {
				var in []string
				for _, u := range c.Unverified {
					in = append(in, u.String())
				}
				details = withDetail(details, "unverified", strings.Join(in, ", "))
			}
		}
		b.auditf(s, out, audit.Entry{Action: action, Actor: actor, Outcome: string(records.Applied), Details: details}, p)
		b.approvals.removeForPlan(ctx, s.ref, p.ID)
	}
}

// why says why a plan waits: the manual policy or the rules that flagged it.
func (b *Board) why(out *engine.Outcome) string {
	need := fmt.Sprintf("needs %d approval(s)", b.cfg.Review.Approvals.Required)
	if len(out.Verdicts) == 0 {
		return need + " (manual policy)"
	}
	var rules []string
	for _, vd := range out.Verdicts {
		rules = append(rules, fmt.Sprintf("rule %s: %s", vd.Rule, vd.Message))
	}
	return need + " (" + strings.Join(rules, "; ") + ")"
}

func verdictDetails(out *engine.Outcome) map[string]string {
	if len(out.Verdicts) == 0 {
		return nil
	}
	var parts []string
	for _, vd := range out.Verdicts {
		parts = append(parts, fmt.Sprintf("%s (%s): %s", vd.Rule, vd.Effect, vd.Message))
	}
	return map[string]string{"verdicts": strings.Join(parts, "; ")}
}

func withDetail(m map[string]string, k, val string) map[string]string {
	if m == nil {
		m = map[string]string{}
	}
	m[k] = val
	return m
}

// setPhase keeps the workspace's phase for the workspaces gauge.
func (b *Board) setPhase(out *engine.Outcome, err error, waiting, denied bool) {
	switch {
	case out.Applied != nil && out.Applied.Destroy:
		b.phases.set(out.Workspace, "")
	case denied:
		b.phases.set(out.Workspace, "denied")
	case waiting && out.Policy == annotations.ApplyPlanOnly:
		b.phases.set(out.Workspace, "planned")
	case waiting:
		b.phases.set(out.Workspace, "awaiting-approval")
	case err != nil && !errors.Is(err, engine.ErrSkipped):
		b.phases.set(out.Workspace, "failed")
	case err == nil:
		b.phases.set(out.Workspace, "applied")
	}
}

// RetiredAnnotations reports, once per object and value, an annotation
// that no longer does anything.
func (b *Board) RetiredAnnotations(s Subject, ann map[string]string) {
	for name, why := range annotations.Retired {
		if val, ok := ann[string(name)]; ok && b.once("retired\x00"+s.ref.UID+"\x00"+string(name)+"\x00"+val) {
			b.eventf(s, v1.EventTypeWarning, "RetiredAnnotation", "Annotation %s is ignored: %s", name, why)
		}
	}
}
