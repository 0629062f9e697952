package review

import (
	"context"
	"fmt"
	"slices"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/klog/v2"

	"github.com/example/cloud-provider-example/annotations"
	"github.com/example/cloud-provider-example/audit"
	"github.com/example/cloud-provider-example/engine"
	"github.com/example/cloud-provider-example/records"
)

// An apply cut short (the controller killed, its shard moved) reports
// nothing: its plan would be missing from the record, and the record's
// last apply would still answer for a state the apply may have changed.
// So the record says an apply is under way before it starts, and the
// object's next plan, made once the state lock is free again, records
// what became of it.

// recordApplyStart writes plan p into s's record as the apply under way,
// and clears the last apply, before the apply starts; an earlier apply
// still under way is settled first. Failing to write is logged, and the
// apply goes on: the audit line of its start is written after this.
func (b *Board) recordApplyStart(ctx context.Context, s Subject, pol annotations.ApplyPolicy, p *engine.Plan) {
	if b.store == nil {
		return
	}
	at := now()
	var interrupted *records.Plan
	_, err := b.store.Update(ctx, p.Workspace, func(r *records.Record) error {
		// An earlier apply still under way is over: this one planned, so
		// it holds the state lock.
		interrupted = settleApplying(r, &engine.Outcome{Planned: p}, at)
		r.Object, r.Workspace, r.Policy = s.ref, p.Workspace, string(pol)
		rp := records.Plan{ID: p.ID, Kind: kindOf(s, p), HCLHash: p.Hash, Summary: p.Summary, Policy: string(pol), PlannedAt: p.Created}
		if had := r.Find(p.ID); had != nil {
			rp = *had
			rp.Text, rp.Saved = "", nil
		}
		if rp.PlannedAt.IsZero() {
			rp.PlannedAt = at
		}
		r.Applying = &records.ApplyStart{Plan: rp, Replica: b.audit.Replica(), StartedAt: at}
		r.Applied = nil
		return nil
	})
	if err != nil {
		klog.ErrorS(err, "cannot record the start of an apply", "object", s.String(), "workspace", p.Workspace, "plan", p.ID)
		return
	}
	if interrupted != nil {
		b.reportInterrupted(s, &engine.Outcome{Policy: pol, Workspace: p.Workspace}, interrupted)
	}
}

// settleApplying ends r's apply under way: this reconcile decided its
// plan (applied or failed), or made a plan of its own (out.Planned; also
// the start of the next apply), which it could only with the state lock
// free, so that apply is over and is recorded Interrupted, with what the
// new plan found. It returns the interrupted plan's entry, nil if none.
func settleApplying(r *records.Record, out *engine.Outcome, now time.Time) *records.Plan {
	a := r.Applying
	if a == nil {
		return nil
	}
	for _, p := range []*engine.Plan{out.Applied, out.Attempted} {
		if p != nil && p.ID == a.Plan.ID {
			r.Applying = nil
			return nil
		}
	}
	next := out.Planned
	if next == nil || next.ID == a.Plan.ID {
		return nil // not known yet
	}
	r.Applying = nil
	left := "found changes left to make"
	if !next.HasChanges {
		left = "found nothing left to change: the state holds what it applied"
	}
	msg := fmt.Sprintf("its apply started at %s%s and never reported; plan %s %s", a.StartedAt.UTC().Format(time.RFC3339), onReplica(a.Replica), next.ID, left)
	p := r.Find(a.Plan.ID)
	if p == nil {
		// Newest first: before the first plan made earlier than it.
		i := slices.IndexFunc(r.Plans, func(q records.Plan) bool { return q.PlannedAt.Before(a.Plan.PlannedAt) })
		if i < 0 {
			i = len(r.Plans)
		}
		r.Plans = slices.Insert(r.Plans, i, a.Plan)
		p = &r.Plans[i]
	}
	if p.Outcome == records.Applied {
		return nil
	}
	p.Outcome, p.Error, p.DecidedAt = records.Interrupted, msg, &now
	interrupted := *p
	return &interrupted
}

func onReplica(name string) string {
	if name == "" {
		return ""
	}
	return " on replica " + name
}

// reportInterrupted tells of a plan settleApplying found interrupted.
func (b *Board) reportInterrupted(s Subject, out *engine.Outcome, p *records.Plan) {
	b.eventf(s, v1.EventTypeWarning, "ApplyInterrupted", "Plan %s: %s", p.ID, p.Error)
	action := audit.ActionApply
	if p.Kind == records.KindDestroy {
		action = audit.ActionDestroy
	}
	b.auditf(s, out, audit.Entry{Action: action, Outcome: string(records.Interrupted), PlanID: p.ID, Summary: p.Summary.String(), Error: p.Error}, nil)
}
