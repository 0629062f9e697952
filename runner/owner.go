package runner

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// ErrGone: the job's object was destroyed by this runner (its workspace
// was forgotten): nothing may create it again. A new object of the same
// name (another Owner) is not gone.
var ErrGone = errors.New("object was destroyed")

// ErrOwnerMismatch: the workspace holds another object's state.
var ErrOwnerMismatch = errors.New("workspace belongs to another object")

// acquireJob is acquire for a job, refusing a module the provider mode
// cannot run, a destroyed object and a workspace applied for another
// owner; the first refusal costs no slot and no process.
func (r *Runner) acquireJob(ctx context.Context, job Job) (*workspace, func(), error) {
	if err := r.checkProviderConfigs(job.Key, job.Files); err != nil {
		return nil, nil, err
	}
	if err := r.checkTombstone(job); err != nil {
		return nil, nil, err
	}
	w, release, err := r.acquireShare(ctx, job.Key, job.Share)
	if err != nil {
		return nil, nil, err
	}
	// Checked again under the lock: a destroy may have finished meanwhile.
	if err := r.checkTombstone(job); err != nil {
		release()
		return nil, nil, err
	}
	if rec := w.lastApplied(); rec.Owner != "" && job.Owner != "" && rec.Owner != job.Owner {
		release()
		return nil, nil, fmt.Errorf("workspace %s was applied for %q, not %q: %w", job.Key, rec.Owner, job.Owner, ErrOwnerMismatch)
	}
	return w, release, nil
}

// acquireGuarded is acquireJob, then guard (if set) under the
// workspace's lock: its error ends the run before terraform starts, and
// releases the workspace.
func (r *Runner) acquireGuarded(ctx context.Context, job Job, guard func(context.Context) error) (*workspace, func(), error) {
	w, release, err := r.acquireJob(ctx, job)
	if err != nil {
		return nil, nil, err
	}
	if guard != nil {
		if err := guard(ctx); err != nil {
			release()
			return nil, nil, err
		}
	}
	return w, release, nil
}

// checkTombstone refuses a job for an object this runner destroyed; a job
// for another owner of the key (a new object of the same name) clears the
// tombstone.
func (r *Runner) checkTombstone(job Job) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	t, ok := r.tombstones[job.Key]
	switch {
	case !ok:
		return nil
	case t.owner == job.Owner:
		return fmt.Errorf("workspace %s: %w", job.Key, ErrGone)
	default:
		delete(r.tombstones, job.Key)
		return nil
	}
}

// tombstoneAge is how long a tombstone stands: longer than any late
// reconcile of a deleted object (the service controller retries a key
// within 5 minutes, and forgets a deleted one; a drift check of an object
// gone since its sweep listed it is skipped by its guard), so that the
// tombstones are bounded by the deletions of the last minutes, not by
// every deletion since the start.
const tombstoneAge = 10 * time.Minute

type tombstone struct {
	owner string
	at    time.Time
}

// bury leaves a tombstone for a forgotten workspace, and clears those
// older than tombstoneAge (r.mu held).
func (r *Runner) bury(key, owner string) {
	now := r.now()
	for k, t := range r.tombstones {
		if now.Sub(t.at) > tombstoneAge {
			delete(r.tombstones, k)
		}
	}
	if r.tombstones == nil {
		r.tombstones = map[string]tombstone{}
	}
	r.tombstones[key] = tombstone{owner: owner, at: now}
}
