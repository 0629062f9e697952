package ccm

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"os"
	"slices"
	"sync"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/klog/v2"

	"github.com/example/cloud-provider-example/audit"
	"github.com/example/cloud-provider-example/engine"
	"github.com/example/cloud-provider-example/objectref"
	"github.com/example/cloud-provider-example/policy"
	"github.com/example/cloud-provider-example/records"
	"github.com/example/cloud-provider-example/reviewapi"
	"github.com/example/cloud-provider-example/runner"
)

// updateRecord writes the outcome into the object's plan record.
func (v *review) updateRecord(ctx context.Context, s subject, out *engine.Outcome, err error, now time.Time) {
	if v.store == nil {
		return
	}
	var wait *engine.AwaitingApprovalError
	var denied *engine.DeniedError
	failed := err != nil && !errors.As(err, &wait) && !errors.As(err, &denied) && !errors.Is(err, engine.ErrSkipped)
	saved := v.savedPlan(out)
	_, uerr := v.store.Update(ctx, out.Workspace, func(r *records.Record) error {
		r.Object, r.Workspace, r.Policy, r.UpdatedAt = s.ref, out.Workspace, string(out.Policy), now
		r.RequiredApprovals = v.cfg.Review.Approvals.Required
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
			if rp := r.Find(p.ID); rp == nil || rp.Outcome != records.AwaitingApproval {
				if rp != nil { // planned again after it was decided: a new entry
					r.Plans = dropPlan(r.Plans, p.ID)
				}
				r.Plans = append([]records.Plan{newRecordPlan(s, out, p, now)}, r.Plans...)
			}
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
			r.Lock = nil
		}
		if s.ref.Kind == objectref.KindServiceGroup && !(out.Applied != nil && out.Applied.Destroy) {
			// As applied; while a plan waits, also those it would apply.
			if err == nil && out.Result != nil {
				r.Members = memberRefs(s.members)
			} else {
				r.Members = union(r.Members, memberRefs(s.members))
			}
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
			if id, holder, created, ok := runner.HeldLock(err); ok {
				r.Lock = &records.LockInfo{ID: id, Holder: holder, Created: created, SeenAt: now}
			}
		}
		return nil
	})
	if uerr != nil {
		klog.ErrorS(uerr, "cannot update plan record", "object", s.String(), "workspace", out.Workspace)
	}
}

// newRecordPlan is the record entry of a plan made now.
func newRecordPlan(s subject, out *engine.Outcome, p *runner.Plan, now time.Time) records.Plan {
	rp := records.Plan{
		ID: p.ID, Kind: kindOf(s, p), HCLHash: p.Hash, InputsDigest: out.InputsDigest, Summary: p.Summary,
		Policy: string(out.Policy), Outcome: records.AwaitingApproval, PlannedAt: now, Text: p.Text, Author: s.author,
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

// savedPlan is the file of a plan that waits, to keep in the record.
func (v *review) savedPlan(out *engine.Outcome) []byte {
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

func kindOf(s subject, p *runner.Plan) string {
	if p.Destroy {
		return records.KindDestroy
	}
	return s.kind
}

func (v *review) deleteRecord(ctx context.Context, workspace string) {
	if v.store == nil {
		return
	}
	if err := v.store.Delete(ctx, workspace); err != nil {
		klog.ErrorS(err, "cannot delete plan record", "workspace", workspace)
	}
}

// lock is the state lock recorded for workspace, if any.
func (v *review) lock(ctx context.Context, workspace string) *records.LockInfo {
	if v.store == nil {
		return nil
	}
	r, err := v.store.Get(ctx, workspace)
	if err != nil || r == nil {
		return nil
	}
	return r.Lock
}

// Load is the engine's PlanStore: what the record of workspace keeps of
// the last apply and of the plan that waits (awaiting approval, or
// planned under plan-only), with its saved file.
func (v *review) Load(ctx context.Context, workspace, owner string) (*engine.Kept, error) {
	if v.store == nil {
		return nil, nil
	}
	r, err := v.warm.get(ctx, v.store, workspace)
	if err != nil || r == nil {
		return nil, err
	}
	if r.Object.UID != "" && owner != "" && r.Object.UID != owner {
		return nil, fmt.Errorf("workspace %s holds the state of an earlier %s of this name (uid %s), whose load balancer was never destroyed: "+
			"delete that state (or restore the earlier object) first: %w", workspace, r.Object.Kind, r.Object.UID, runner.ErrOwnerMismatch)
	}
	kept := &engine.Kept{}
	if a := r.Applied; a != nil {
		kept.Applied = &engine.Applied{Hash: a.HCLHash, Outputs: a.Outputs, At: a.At}
	}
	for _, p := range r.Plans {
		if p.Outcome != records.AwaitingApproval && p.Outcome != records.Planned {
			continue
		}
		data, err := v.store.SavedPlan(ctx, workspace, p.ID)
		if errors.Is(err, records.ErrNotFound) {
			break
		}
		if err != nil {
			return nil, err
		}
		sp := &engine.StoredPlan{Data: data, Plan: runner.Plan{
			ID: p.ID, FileHash: p.SavedSHA256, Hash: p.HCLHash, Destroy: p.Kind == records.KindDestroy, Summary: p.Summary, Created: p.PlannedAt,
		}}
		for _, vd := range p.Verdicts {
			sp.Verdicts = append(sp.Verdicts, policy.Verdict{Rule: vd.Rule, Effect: policy.Effect(vd.Effect), Message: vd.Message})
		}
		kept.Pending = sp
		break
	}
	return kept, nil
}

// warmRecords answers the first reads after a start from one List of
// every record, instead of a GET per object (a thousand GETs at the
// client's default QPS would take a minute).
type warmRecords struct {
	mu     sync.Mutex
	listed time.Time
	byWS   map[string]*records.Record
	// read are the workspaces the List answered for already.
	read map[string]bool
}

// warmFor is how long a List answers for: the objects a restart finds.
const warmFor = 2 * time.Minute

func (w *warmRecords) get(ctx context.Context, store *records.Store, workspace string) (*records.Record, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.listed.IsZero() {
		all, err := store.List(ctx)
		if err != nil {
			return nil, err
		}
		w.listed, w.byWS, w.read = time.Now(), map[string]*records.Record{}, map[string]bool{}
		for _, r := range all {
			w.byWS[r.Workspace] = r
		}
	}
	if time.Since(w.listed) > warmFor {
		w.byWS, w.read = nil, nil
		return store.Get(ctx, workspace)
	}
	// The List answers once per workspace: a read again (the engine
	// retries a Load that failed, e.g. for another owner) gets the record
	// as it is now, not none.
	if w.read[workspace] {
		return store.Get(ctx, workspace)
	}
	r := w.byWS[workspace]
	delete(w.byWS, workspace)
	w.read[workspace] = true
	return r, nil
}

// unlock executes the unlock requests of s: a request naming the lock the
// record says is in the way forces it open, once; any request is used up.
// render gives the object's job; it runs only when there is a request.
func (v *review) unlock(ctx context.Context, r *runner.Runner, s subject, render func() (runner.Job, error)) {
	reqs, err := v.approvals.unlocksFor(ctx, s.ref)
	if err != nil {
		if v.once("unlock-policy\x00" + err.Error()) {
			v.eventf(s, v1.EventTypeWarning, "UnlockIgnored", "%v", err)
		}
		return
	}
	if len(reqs) == 0 {
		return
	}
	job, err := render()
	if err != nil {
		return
	}
	for _, u := range reqs {
		v.unlockOne(ctx, r, s, job, u)
		v.approvals.remove(ctx, reviewapi.StateUnlocks, u.Name)
	}
}

func (v *review) unlockOne(ctx context.Context, r *runner.Runner, s subject, job runner.Job, u *reviewapi.StateUnlock) {
	lock := v.lock(ctx, job.Key)
	if lock == nil || lock.ID != u.Spec.LockID {
		recorded := "no lock is recorded"
		if lock != nil {
			recorded = fmt.Sprintf("the recorded lock is %s", lock.ID)
		}
		v.eventf(s, v1.EventTypeWarning, "UnlockIgnored", "StateUnlock %s by %q names lock %s, but %s: nothing was forced open", u.Name, u.Spec.Requester, u.Spec.LockID, recorded)
		v.auditUnlock(s, job.Key, u.Spec.LockID, u.Spec.Requester, "ignored: "+recorded)
		return
	}
	if err := r.ForceUnlock(ctx, job, u.Spec.LockID); err != nil {
		klog.ErrorS(err, "force-unlock failed", "object", s.String(), "lockID", u.Spec.LockID)
		v.eventf(s, v1.EventTypeWarning, "UnlockFailed", "Forcing open state lock %s failed: %v", u.Spec.LockID, err)
		return
	}
	v.forceUnlocked(s, job.Key, u.Spec.LockID, u.Spec.Requester, fmt.Sprintf("requested by %q (StateUnlock %s)", u.Spec.Requester, u.Name))
}

// forceUnlocked records a lock forced open (stale, or on request).
func (v *review) forceUnlocked(s subject, workspace, lockID, actor, why string) {
	v.auditUnlock(s, workspace, lockID, actor, why)
	v.eventf(s, v1.EventTypeWarning, "ForceUnlocked", "Forced open Terraform state lock %s (%s)", lockID, why)
}

func (v *review) auditUnlock(s subject, workspace, lockID, actor, why string) {
	if v.audit == nil {
		return
	}
	if err := v.audit.Write(audit.Entry{Time: time.Now(), Action: audit.ActionForceUnlock, Object: s.String(), Workspace: workspace,
		Actor: actor, Details: map[string]string{"lockID": lockID, "reason": why}}); err != nil {
		klog.ErrorS(err, "cannot write audit log")
	}
}

// moveRecord moves a record from a state's legacy workspace key to its
// new one, with the state (engine.Options.Migrated). A plan that waited
// under the legacy key does not wait any more: its saved file names the
// legacy state, so it is superseded and planned again.
func (v *review) moveRecord(ctx context.Context, legacy, workspace string) {
	if v.store == nil {
		return
	}
	old, err := v.store.Get(ctx, legacy)
	if err != nil || old == nil {
		if err != nil {
			klog.ErrorS(err, "cannot read the plan record of a moved state", "legacyWorkspace", legacy)
		}
		return
	}
	// The plans' texts are kept beside the record, not in it: they move
	// too (a plan without Text would have none under the new key).
	texts := map[string]string{}
	for _, p := range old.Plans {
		if text, err := v.store.PlanText(ctx, legacy, p.ID); err == nil {
			texts[p.ID] = text
		}
	}
	now := time.Now()
	_, err = v.store.Update(ctx, workspace, func(r *records.Record) error {
		if len(r.Plans) > 0 {
			return nil // the new record is in use: keep it
		}
		*r = *old
		r.Workspace = workspace
		r.Plans = slices.Clone(old.Plans)
		for i := range r.Plans {
			r.Plans[i].Text = texts[r.Plans[i].ID]
			if p := &r.Plans[i]; p.Outcome == records.AwaitingApproval || p.Outcome == records.Planned {
				p.Outcome, p.Error, p.DecidedAt = records.Superseded, "the state moved to a new key: planned again", &now
			}
		}
		return nil
	})
	if err != nil {
		klog.ErrorS(err, "cannot move a plan record", "from", legacy, "to", workspace)
		return
	}
	v.deleteRecord(ctx, legacy)
	klog.InfoS("plan record moved with its state", "from", legacy, "to", workspace)
}
