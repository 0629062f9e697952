package runner

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"strings"
	"time"

	"k8s.io/klog/v2"

	"github.com/example/cloud-provider-example/internal/sleep"
)

// heldLock is what terraform tells about a lock it could not acquire.
type heldLock struct {
	ID string
	// Who and Created are known only when terraform printed the holder's
	// lock info (local, kubernetes); the http backend prints only its ID.
	Who     string
	Created time.Time
}

// pgCreationLocked reports whether text is the pg backend's error when its
// workspace-creation lock is taken: "Already locked for workspace
// creation" (workspace new) or "Cannot lock workspace; already locked for
// workspace creation" (other commands).
func pgCreationLocked(text string) bool {
	return strings.Contains(strings.ToLower(text), "locked for workspace creation")
}

var (
	// "HTTP remote state already locked: ID=..." (http backend).
	heldIDRe = regexp.MustCompile(`already locked: ID=(\S+)`)
	// The "Lock Info:" block, multi-line on stderr or folded onto one line
	// in -json diagnostics.
	lockIDRe      = regexp.MustCompile(`\bID:\s+(\S+)`)
	lockWhoRe     = regexp.MustCompile(`\bWho:\s+(\S+)`)
	lockCreatedRe = regexp.MustCompile(`\bCreated:\s+(\d{4}-\d\d-\d\d \d\d:\d\d:\d\d(?:\.\d+)? [+-]\d{4} \S+)`)
)

// parseHeldLock reads the holder of a lock from a lock error.
func parseHeldLock(text string) (heldLock, bool) {
	var li heldLock
	if pgCreationLocked(text) {
		// The pg backend's one lock for creating and deleting workspaces:
		// its Lock Info block is our own attempt, and nobody is known to
		// hold it (whoever does holds it for a moment). Not a lock to
		// record or to force open.
		return li, false
	}
	info := lockIDRe.FindStringSubmatch(text)
	if m := heldIDRe.FindStringSubmatch(text); m != nil {
		li.ID = m[1]
		// The "Lock Info" block then describes our own attempt, not the
		// holder: trust it only if it names the same lock.
		if info == nil || info[1] != li.ID {
			return li, true
		}
	} else if info == nil {
		return li, false
	} else {
		li.ID = info[1]
	}
	if m := lockWhoRe.FindStringSubmatch(text); m != nil {
		li.Who = m[1]
	}
	if m := lockCreatedRe.FindStringSubmatch(text); m != nil {
		// Go's time.Time.String format, as terraform prints it.
		if t, err := time.Parse("2006-01-02 15:04:05.999999999 -0700 MST", m[1]); err == nil {
			li.Created = t
		}
	}
	return li, true
}

// lockAge is how long the lock has been held as far as we can tell: since
// its Created time, or since this runner first ran into the same lock ID.
func (r *Runner) lockAge(w *workspace, li heldLock) time.Duration {
	now := r.now()
	r.lockMu.Lock()
	key := w.key + "/" + li.ID
	first, ok := r.lockSeen[key]
	if !ok {
		// A lock seen twice StaleLockAge ago was forced open then, or
		// released: its sighting is dropped.
		for k, t := range r.lockSeen {
			if now.Sub(t) > 2*r.cfg.StaleLockAge {
				delete(r.lockSeen, k)
			}
		}
		if r.lockSeen == nil {
			r.lockSeen = map[string]time.Time{}
		}
		first = now
		r.lockSeen[key] = first
	}
	r.lockMu.Unlock()
	age := now.Sub(first)
	if !li.Created.IsZero() && now.Sub(li.Created) > age {
		age = now.Sub(li.Created)
	}
	return age
}

// withLockRecovery runs a -json terraform command. If it fails on a state
// lock held longer than StaleLockAge — by someone else, since this runner
// holds the workspace mutex — the lock is forced open, logged, and the
// command runs once more. A younger lock is returned as ErrStateLocked and
// the caller retries later.
func (r *Runner) withLockRecovery(ctx context.Context, w *workspace, op string, run func(*uiStream) error) (*uiStream, error) {
	if err := r.versioned(ctx, w); err != nil {
		return nil, err
	}
	forced, raced := false, 0
	for {
		s := newUIStream()
		r.count(op)
		start := time.Now()
		err := run(s)
		// The *JSON methods of terraform-exec keep the writer they were
		// given as the handle's stdout; later commands must not write to
		// this closed stream.
		w.tf.SetStdout(nil)
		s.Close()
		if err == nil {
			r.observe(op, nil, start)
			return s, nil
		}
		e := w.newError(op, err, s.errors)
		r.observe(op, e, start) // with the diagnostics, so a lock is seen as one
		if !errors.Is(e, ErrStateLocked) {
			return s, e
		}
		var te *Error
		errors.As(e, &te) // newError returns an *Error
		li, ok := parseHeldLock(te.Diagnostics + "\n" + err.Error())
		if !ok && raced < lockRaces {
			// terraform could not tell who holds the lock: its holder was
			// just releasing it (the local backend's lock info is gone
			// between terraform's failed flock and its read of it, and
			// terraform gives up instead of waiting). Try again.
			raced++
			if !sleep.For(ctx, time.Duration(raced)*200*time.Millisecond) {
				return s, e
			}
			continue
		}
		if !ok || forced {
			return s, e
		}
		opened, err := r.openStale(ctx, w, li, e)
		if !opened {
			return s, err
		}
		forced = true
	}
}

// lockRaces bounds the retries of a lock error that names no holder.
const lockRaces = 3

// HeldLock tells, for an error that is errors.Is ErrStateLocked, which lock
// was in the way (its holder and age only when terraform printed them).
func HeldLock(err error) (id, holder string, created time.Time, ok bool) {
	var e *Error
	if !errors.As(err, &e) || !errors.Is(err, ErrStateLocked) {
		return "", "", time.Time{}, false
	}
	text := e.Diagnostics
	if e.Err != nil {
		text += "\n" + e.Err.Error()
	}
	li, ok := parseHeldLock(text)
	return li.ID, li.Who, li.Created, ok
}

// openStale forces open li, the lock in the way of a command that failed
// with e, if it is older than StaleLockAge, and says so; a younger one is
// left and e returned (the caller retries later).
func (r *Runner) openStale(ctx context.Context, w *workspace, li heldLock, e error) (bool, error) {
	if r.cfg.StaleLockAge < 0 {
		return false, e
	}
	if age := r.lockAge(w, li); age < r.cfg.StaleLockAge {
		klog.V(2).InfoS("terraform state locked", "workspace", w.key, "lockID", li.ID, "holder", li.Who, "heldFor", age.Round(time.Second))
		return false, e
	}
	klog.InfoS("force-unlocking stale terraform state lock", "workspace", w.key, "lockID", li.ID, "holder", li.Who, "created", li.Created)
	if uerr := r.forceOpen(ctx, w, li.ID); uerr != nil {
		return false, errors.Join(e, uerr)
	}
	r.lockMu.Lock()
	delete(r.lockSeen, w.key+"/"+li.ID)
	r.lockMu.Unlock()
	if r.OnForceUnlock != nil {
		r.OnForceUnlock(w.key, li.ID, li.Who, li.Created)
	}
	return true, nil
}

// forceOpen opens the lock lockID: terraform force-unlock, else the
// backend's own way (Job.Unlock). force-unlock loads the state first, and
// a lock taken to create a state that does not exist yet stops it there.
func (r *Runner) forceOpen(ctx context.Context, w *workspace, lockID string) error {
	err := r.exec("force-unlock", func() error { return w.tf.ForceUnlock(ctx, lockID) })
	if err == nil {
		return nil
	}
	e := w.newError("force-unlock", err, nil)
	if w.unlock == nil {
		return e
	}
	if uerr := w.unlock(ctx, lockID); uerr != nil {
		return errors.Join(e, fmt.Errorf("workspace %s: open lock %s in the backend: %w", w.key, lockID, uerr))
	}
	klog.InfoS("terraform force-unlock could not load the state: lock opened in the backend", "workspace", w.key, "lockID", lockID)
	return nil
}

// ForceUnlock forces open the object's state lock lockID, on a person's
// request (examplectl unlock). Only that lock: terraform refuses another
// id, and Job.Unlock opens only a lock that still has it.
func (r *Runner) ForceUnlock(ctx context.Context, job Job, lockID string) error {
	w, release, err := r.acquire(ctx, job.Key)
	if err != nil {
		return err
	}
	defer release()
	if err := r.prepare(ctx, w, job); err != nil {
		// The lock on a state being created stops init too: only the
		// backend can open it.
		if !errors.Is(err, ErrStateLocked) || job.Unlock == nil {
			return err
		}
		if uerr := job.Unlock(ctx, lockID); uerr != nil {
			return errors.Join(err, fmt.Errorf("workspace %s: open lock %s in the backend: %w", w.key, lockID, uerr))
		}
	} else if err := r.forceOpen(ctx, w, lockID); err != nil {
		return err
	}
	klog.InfoS("force-unlocked terraform state lock on request", "workspace", w.key, "lockID", lockID)
	return nil
}
