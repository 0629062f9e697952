package review

import (
	"cmp"
	"context"
	"errors"
	"maps"
	"os"
	"slices"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/klog/v2"

	"github.com/example/cloud-provider-example/engine"
	"github.com/example/cloud-provider-example/objectref"
	"github.com/example/cloud-provider-example/policy"
	"github.com/example/cloud-provider-example/records"
)

// The plan record is what reviewers read (examplectl, kubectl): every
// plan of the object with its outcome, approvals and text, the last
// apply, a held state lock. It is written from the engine's Outcome, one
// update per reconcile, and once more before an apply starts
// (interrupted.go).

// updateRecord writes the outcome into the object's plan record.
func (b *Board) updateRecord(ctx context.Context, s Subject, out *engine.Outcome, err error, now time.Time) {
	if b.store == nil {
		return
	}
	var wait *engine.AwaitingApprovalError
	var denied *engine.DeniedError
	failed := err != nil && !errors.As(err, &wait) && !errors.As(err, &denied) && !errors.Is(err, engine.ErrSkipped)
	saved := savedPlan(out)
	var interrupted *records.Plan
	_, uerr := b.store.Update(ctx, out.Workspace, func(r *records.Record) error {
		r.Object, r.Workspace, r.Policy, r.UpdatedAt = s.ref, out.Workspace, string(out.Policy), now
		r.RequiredApprovals = b.cfg.Review.Approvals.Required
		if len(out.Files) > 0 {
			r.Files = map[string]string{}
			for k, f := range out.Files {
				r.Files[k] = string(f)
			}
		}
		if p := out.Superseded; p != nil {
			decide(r, p.ID, records.Superseded, "", now)
		}
		if p := out.Planned; p != nil && p.HasChanges {
			// Who changed the inputs stays on every plan until an apply;
			// who asked for a release, on that plan alone.
			var unapplied records.Contributors
			if r.Unapplied != nil {
				unapplied = *r.Unapplied
			}
			if !s.asked {
				unapplied = unapplied.Add(s.contrib)
			}
			if !unapplied.Empty() {
				r.Unapplied = &unapplied
			}
			rp := r.Find(p.ID)
			if rp == nil || rp.Outcome != records.AwaitingApproval {
				if rp != nil { // planned again after it was decided: a new entry
					r.Plans = dropPlan(r.Plans, p.ID)
				}
				r.Plans = append([]records.Plan{newRecordPlan(s, out, p, now)}, r.Plans...)
				rp = &r.Plans[0]
			}
			had := rp.Contributors
			rp.Contributors = had.Add(unapplied).Add(s.contrib)
		}
		if p := out.Awaiting; p != nil {
			if rp := r.Find(p.ID); rp != nil {
				rp.Approvals = approvalsOf(out, rp.Approvals, now)
				if saved != nil && rp.SavedSHA256 == "" {
					rp.Saved = saved
				}
			}
		}
		if p := out.Applied; p != nil {
			if rp := r.Find(p.ID); rp != nil {
				rp.Approvals = approvalsOf(out, rp.Approvals, now)
			}
			decide(r, p.ID, records.Applied, "", now)
			r.Lock, r.Unapplied = nil, nil
			// What runs now, for the next plan's HCL diff: the files this
			// reconcile rendered are the ones the applied plan was made of
			// (other files would have superseded it).
			r.AppliedFiles = nil
			if !p.Destroy {
				r.AppliedFiles = maps.Clone(r.Files)
			}
		}
		if err == nil && out.Result != nil {
			r.Lock = nil // whatever lock was seen, this run was not stopped by it
		}
		if s.ref.Kind == objectref.KindServiceGroup && !(out.Applied != nil && out.Applied.Destroy) {
			r.Members = recordedMembers(r.Members, s.members, err == nil && out.Result != nil)
		}
		if res := out.Result; res != nil && !res.FastPath && res.Plan != nil && !res.Plan.Destroy && res.Outputs != nil {
			r.Applied = &records.LastApply{InputsDigest: out.InputsDigest, HCLHash: res.Plan.Hash, PlanID: res.Plan.ID, Outputs: res.Outputs, At: now}
		}
		if s.kind == records.KindDrift && !errors.Is(err, engine.ErrSkipped) {
			if r.Drift == nil {
				r.Drift = &records.Drift{}
			}
			r.Drift.CheckedAt, r.Drift.Detected = now, false
			if p := out.Planned; p != nil && p.HasChanges {
				r.Drift.Detected, r.Drift.LastDetectedAt, r.Drift.PlanID, r.Drift.Resources = true, &now, p.ID, p.Summary.Drift
			}
		}
		if failed {
			if p := cmp.Or(out.Attempted, out.Planned); p != nil && p.HasChanges {
				decide(r, p.ID, records.Failed, err.Error(), now)
			}
			if p := out.Attempted; p != nil && p.HasChanges {
				// The failed apply may have changed the state: a restarted
				// controller must not answer from the apply before it.
				r.Applied = nil
			}
			if id, holder, created, ok := engine.HeldLock(err); ok {
				r.Lock = &records.LockInfo{ID: id, Holder: holder, Created: created, SeenAt: now}
			}
		}
		interrupted = settleApplying(r, out, now)
		return nil
	})
	if uerr != nil {
		klog.ErrorS(uerr, "cannot update plan record", "object", s.String(), "workspace", out.Workspace)
		return
	}
	if interrupted != nil {
		b.reportInterrupted(s, out, interrupted)
	}
}

// newRecordPlan is the record entry of a plan made now.
func newRecordPlan(s Subject, out *engine.Outcome, p *engine.Plan, now time.Time) records.Plan {
	rp := records.Plan{
		ID: p.ID, Kind: kindOf(s, p), HCLHash: p.Hash, InputsDigest: out.InputsDigest, Summary: p.Summary,
		Policy: string(out.Policy), Outcome: records.AwaitingApproval, PlannedAt: now, Text: p.Text,
	}
	if !p.Created.IsZero() {
		// When the plan was made, not recorded: approvals made since count.
		rp.PlannedAt = p.Created
	}
	if out.Awaiting == p {
		for _, vd := range out.Verdicts {
			rp.Verdicts = append(rp.Verdicts, records.Verdict{Rule: vd.Rule, Effect: string(vd.Effect), Message: vd.Message})
		}
		switch {
		case policy.Denied(out.Verdicts) != nil:
			rp.Outcome, rp.DecidedAt = records.Denied, &now // final as it is planned
		case out.Policy == "plan-only":
			rp.Outcome = records.Planned
		}
	}
	return rp
}

// approvalsOf merges the approvals counted now into the recorded ones.
func approvalsOf(out *engine.Outcome, had []records.Approval, now time.Time) []records.Approval {
	for _, who := range out.Approval.Approvers {
		known := false
		for _, a := range had {
			known = known || a.By == who
		}
		if !known {
			had = append(had, records.Approval{By: who, At: now})
		}
	}
	return had
}

// savedPlan is the file of a plan that waits, to keep in the record: a
// controller that starts applies exactly the plan approved.
func savedPlan(out *engine.Outcome) []byte {
	p := out.Awaiting
	if p == nil || out.Planned != p {
		return nil
	}
	data, err := os.ReadFile(p.File)
	if err != nil {
		klog.ErrorS(err, "cannot read the saved plan to keep it in the record", "plan", p.ID)
		return nil
	}
	return data
}

func dropPlan(plans []records.Plan, id string) []records.Plan {
	out := plans[:0:0]
	for _, p := range plans {
		if p.ID != id {
			out = append(out, p)
		}
	}
	return out
}

func decide(r *records.Record, id string, o records.Outcome, msg string, now time.Time) {
	if p := r.Find(id); p != nil && p.Outcome != records.Applied {
		p.Outcome, p.Error, p.DecidedAt = o, msg, &now
	}
}

func kindOf(s Subject, p *engine.Plan) string {
	if p.Destroy {
		return records.KindDestroy
	}
	return s.kind
}

// recordedMembers are a group's members as its record keeps them: as
// applied; while a plan waits, also those it would apply (had, then the
// members not in had).
func recordedMembers(had []objectref.Ref, members []*v1.Service, applied bool) []objectref.Ref {
	out := make([]objectref.Ref, 0, len(had)+len(members))
	if !applied {
		out = append(out, had...)
	}
	for _, m := range members {
		if ref := objectref.Service(m); applied || !slices.Contains(out, ref) {
			out = append(out, ref)
		}
	}
	return out
}

// Removed is told of a removal that succeeded (a Service deleted, a group
// emptied, a Service's own load balancer released): one that destroyed
// nothing leaves no record either (Report deletes the record of a
// destroy it applied).
func (b *Board) Removed(ctx context.Context, out *engine.Outcome) {
	if out.Applied == nil || !out.Applied.HasChanges {
		b.deleteRecord(ctx, out.Workspace) // nothing was left to destroy
	}
	b.phases.set(out.Workspace, "") // the workspace is gone, whatever it had
}

func (b *Board) deleteRecord(ctx context.Context, workspace string) {
	if b.store == nil {
		return
	}
	if err := b.store.Delete(ctx, workspace); err != nil {
		klog.ErrorS(err, "cannot delete plan record", "workspace", workspace)
	}
}

// lock is the state lock recorded for workspace, if any.
func (b *Board) lock(ctx context.Context, workspace string) *records.LockInfo {
	if b.store == nil {
		return nil
	}
	r, err := b.store.Get(ctx, workspace)
	if err != nil || r == nil {
		return nil
	}
	return r.Lock
}
