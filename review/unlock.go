package review

import (
	"context"
	"fmt"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/klog/v2"

	"github.com/example/cloud-provider-example/engine"
	"github.com/example/cloud-provider-example/objectref"
	"github.com/example/cloud-provider-example/reviewapi"
)

// A state lock is forced open only on a verified person's request
// (StateUnlock) naming the lock the record says is in the way, or by the
// runner when the lock is stale; either way it is reported and audited.

// Unlocker forces a state lock open: the engine.
type Unlocker interface {
	ForceUnlock(ctx context.Context, job engine.Job, lockID string) error
}

// Unlock executes the unlock requests of s: a request naming the lock the
// record says is in the way forces it open, once; any request is used up.
// render gives the object's job; it runs only when there is a request.
func (b *Board) Unlock(ctx context.Context, r Unlocker, s Subject, render func() (engine.Job, error)) {
	reqs, err := b.approvals.unlocksFor(ctx, s.ref)
	if err != nil {
		if b.once("unlock-policy\x00" + err.Error()) {
			b.eventf(s, v1.EventTypeWarning, "UnlockIgnored", "%v", err)
		}
		return
	}
	if len(reqs.Verified)+len(reqs.Stale) == 0 {
		return
	}
	job, err := render()
	if err != nil {
		return
	}
	// A stale request's requester was never checked: the controller is
	// the actor of its refusal, the name it gives only reported.
	for _, u := range reqs.Stale {
		b.eventf(s, v1.EventTypeWarning, "UnlockIgnored", "StateUnlock %s, naming %q as its requester: %s; nothing was forced open: ask again", u.Name, u.Spec.Requester, reqs.Why)
		b.auditUnlock(s, job.Key, u.Spec.LockID, b.self, fmt.Sprintf("ignored: StateUnlock %s names %q as its requester, unchecked: %s", u.Name, u.Spec.Requester, reqs.Why))
		b.approvals.remove(ctx, reviewapi.StateUnlocks, u.Name)
	}
	for _, u := range reqs.Verified {
		b.unlockOne(ctx, r, s, job, u)
		b.approvals.remove(ctx, reviewapi.StateUnlocks, u.Name)
	}
}

func (b *Board) unlockOne(ctx context.Context, r Unlocker, s Subject, job engine.Job, u *reviewapi.StateUnlock) {
	lock := b.lock(ctx, job.Key)
	if lock == nil || lock.ID != u.Spec.LockID {
		recorded := "no lock is recorded"
		if lock != nil {
			recorded = fmt.Sprintf("the recorded lock is %s", lock.ID)
		}
		b.eventf(s, v1.EventTypeWarning, "UnlockIgnored", "StateUnlock %s by %q names lock %s, but %s: nothing was forced open", u.Name, u.Spec.Requester, u.Spec.LockID, recorded)
		b.auditUnlock(s, job.Key, u.Spec.LockID, u.Spec.Requester, "ignored: "+recorded)
		return
	}
	if err := r.ForceUnlock(ctx, job, u.Spec.LockID); err != nil {
		klog.ErrorS(err, "force-unlock failed", "object", s.String(), "lockID", u.Spec.LockID)
		b.eventf(s, v1.EventTypeWarning, "UnlockFailed", "Forcing open state lock %s failed: %v", u.Spec.LockID, err)
		return
	}
	b.forceUnlocked(s, job.Key, u.Spec.LockID, u.Spec.Requester, fmt.Sprintf("requested by %q (StateUnlock %s)", u.Spec.Requester, u.Name))
}

// StaleLockForced is the runner's OnForceUnlock: it forced open the stale
// lock lockID of workspace, held by holder since created. The controller
// is the actor; the workspace is all that is known of the object.
func (b *Board) StaleLockForced(workspace, lockID, holder string, created time.Time) {
	b.forceUnlocked(Subject{ref: objectref.Workspace(workspace)}, workspace, lockID, b.self,
		fmt.Sprintf("stale: held by %q since %s", holder, created.Format(time.RFC3339)))
}

// forceUnlocked records a lock forced open (stale, or on request).
func (b *Board) forceUnlocked(s Subject, workspace, lockID, actor, why string) {
	b.auditUnlock(s, workspace, lockID, actor, why)
	b.eventf(s, v1.EventTypeWarning, "ForceUnlocked", "Forced open Terraform state lock %s (%s)", lockID, why)
}
