package review

import (
	"context"
	"strings"

	"github.com/example/cloud-provider-example/annotations"
	"github.com/example/cloud-provider-example/audit"
	"github.com/example/cloud-provider-example/engine"
	"github.com/example/cloud-provider-example/policy"
	"github.com/example/cloud-provider-example/records"
)

// For is how s's plans are decided under apply policy pol: the object as
// policy rules see it, the approvals that count for a plan (approvals.go),
// and the audit line written before an apply starts.
func (b *Board) For(ctx context.Context, s Subject, pol annotations.ApplyPolicy) engine.Review {
	obj := engine.PolicyObject{Kind: s.ref.Kind, Namespace: s.ref.Namespace, Name: s.ref.Name, Labels: s.meta.Labels, Annotations: s.meta.Annotations}
	for _, m := range s.members {
		obj.Members = append(obj.Members, policy.Member{Namespace: m.Namespace, Name: m.Name, Labels: m.Labels, Annotations: m.Annotations})
	}
	return engine.Review{
		Policy: pol,
		Object: obj,
		Approval: func(p *engine.Plan) engine.Approval {
			a, _ := b.approvals.decide(ctx, s.ref, p, func() (records.Contributors, error) { return b.planContributors(ctx, s, p) })
			return a
		},
		BeforeApply: func(p *engine.Plan, approvers []string) { b.applyStarting(ctx, s, pol, p, approvers) },
	}
}

// Change is one change run under review: the engine's call, given the
// Review it decides under.
type Change func(rv engine.Review) (*engine.Outcome, error)

// Run runs change under s's Review with apply policy pol and reports what
// it decided (Report). change may update *s before the report (a group's
// members as rendered are what its record keeps).
func (b *Board) Run(ctx context.Context, s *Subject, pol annotations.ApplyPolicy, change Change) (*engine.Outcome, error) {
	out, err := change(b.For(ctx, *s, pol))
	b.Report(ctx, *s, out, err)
	return out, err
}

// planContributors are who may have made plan p's change: s's, and those
// its record keeps, of every plan since the last apply and of p itself. A
// change stays its author's however the plan carrying it was reached
// (another member's reconcile, a drift check, a restart).
func (b *Board) planContributors(ctx context.Context, s Subject, p *engine.Plan) (records.Contributors, error) {
	c := s.contrib
	if b.store == nil {
		return c, nil
	}
	r, err := b.store.Get(ctx, p.Workspace)
	if err != nil || r == nil {
		return c, err
	}
	if r.Unapplied != nil {
		c = c.Add(*r.Unapplied)
	}
	if rp := r.Find(p.ID); rp != nil {
		c = c.Add(rp.AuthorSet())
	}
	return c, nil
}

// applyStarting writes the audit line of an apply, and the apply into the
// object's record, before it starts: a crash during the apply cannot lose
// either (interrupted.go: recordApplyStart).
func (b *Board) applyStarting(ctx context.Context, s Subject, pol annotations.ApplyPolicy, p *engine.Plan, approvers []string) {
	action, actor := audit.ActionApply, b.self
	if p.Destroy {
		action = audit.ActionDestroy
	}
	if len(approvers) > 0 {
		actor = strings.Join(approvers, ", ")
	}
	// The record first: a start line then always has its record, which
	// the object's next plan settles if this apply never reports.
	b.recordApplyStart(ctx, s, pol, p)
	b.auditf(s, &engine.Outcome{Policy: pol, Workspace: p.Workspace}, audit.Entry{Action: action, Actor: actor, Outcome: "started"}, p)
}
