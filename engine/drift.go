package engine

import (
	"context"
)

// Guard re-reads an object's current inputs under its workspace's lock,
// and fails (ErrSkipped) when the object is gone or changed since it was
// listed.
type Guard func(ctx context.Context) error

// CheckDrift plans a converged object again from the refreshed cloud.
// Changes mean drift, decided like any plan under k.Review: under auto an
// unflagged plan is applied at once, otherwise it waits for approval (or
// is only recorded, or denied). An Outcome with no Planned changes means
// no drift.
//
// The check runs under the workspace's lock, and first makes sure it is
// still about the object as it is now: the engine has not rendered it
// anew since k was listed, the workspace was not destroyed (a tombstone),
// and guard (the caller re-reading the object) agrees. Otherwise it does
// nothing and returns ErrSkipped: a sweep never acts on a stale snapshot.
func (e *Engine) CheckDrift(ctx context.Context, k Known, guard Guard) (*Outcome, error) {
	g := func(ctx context.Context) error {
		o, ok := e.objects.get(k.Ref)
		if !ok || !o.converged || o.job.Hash != k.Job.Hash || o.pending != nil {
			return ErrSkipped
		}
		if guard != nil {
			return guard(ctx)
		}
		return nil
	}
	return e.reconcile(ctx, k.Ref, k.Job, k.Review, runOptions{drift: true, guard: g})
}
