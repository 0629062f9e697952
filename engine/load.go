package engine

import (
	"context"
	"errors"
	"sync"

	"k8s.io/klog/v2"

	"github.com/example/cloud-provider-example/objectref"
	"github.com/example/cloud-provider-example/runner"
	"github.com/example/cloud-provider-example/state"
)

// What a reconcile reads before it plans, once per object and process:
// its state moved off a legacy key, what the plan store kept of it (the
// last apply, a plan waiting for approval), and the plan still waiting
// for a decision. Later reconciles know it from the engine's memory.

// migrate moves key's state off its legacy key before its first run in
// this process; until that succeeds the object does not run.
func (e *Engine) migrate(ctx context.Context, ref objectref.Ref, j runner.Job, so state.Object) error {
	if so.Kind == "" {
		return nil
	}
	o, _ := e.objects.get(ref)
	if o.migrated {
		return nil
	}
	moved, err := e.MigrateState(ctx, so, j)
	if err != nil {
		return err
	}
	if moved && e.migrated != nil {
		if legacy, err := e.states.LegacyKey(so); err == nil {
			e.migrated(ctx, legacy, j.Key)
		}
	}
	e.objects.with(ref, func(o *object) { o.migrated = true })
	return nil
}

// load reads what the plan store keeps of key, once per process (later
// the engine's memory knows more), and keeps it with the object until a
// reconcile used it; nil when there is nothing. Callers at the same time
// (the pools and the route set are shared by many reconciles) wait for
// the one read. A record under j's key proves the state was migrated.
func (e *Engine) load(ctx context.Context, ref objectref.Ref, j runner.Job) (*Kept, error) {
	if e.plans == nil {
		return nil, nil
	}
	var l *loading
	e.objects.with(ref, func(o *object) {
		if o.loading == nil && !o.looked && o.pending == nil {
			o.loading = &loading{}
		}
		l = o.loading
	})
	if l == nil {
		o, _ := e.objects.get(ref)
		return o.kept, nil
	}
	l.once.Do(func() { l.err = e.loadNow(ctx, ref, j) })
	if l.err != nil {
		e.objects.with(ref, func(o *object) {
			if o.loading == l {
				o.loading = nil // try again next time
			}
		})
		return nil, l.err
	}
	o, _ := e.objects.get(ref)
	return o.kept, nil
}

// loading is one read of the plan store, shared by those who wait for it.
type loading struct {
	once sync.Once
	err  error
}

func (e *Engine) loadNow(ctx context.Context, ref objectref.Ref, j runner.Job) error {
	kept, err := e.plans.Load(ctx, j.Key, j.Owner)
	if errors.Is(err, runner.ErrOwnerMismatch) {
		return err
	}
	if err != nil {
		klog.ErrorS(err, "cannot read what the plan record keeps; planning again", "object", ref, "workspace", j.Key)
		kept = nil
	}
	if kept != nil {
		e.seed(j, kept)
	}
	e.objects.with(ref, func(o *object) {
		o.looked, o.loading, o.kept = true, nil, kept
		o.migrated = o.migrated || kept != nil
	})
	return nil
}

// seed gives the runner the record of the last apply kept outside the
// process: an unchanged object is then answered from it, without
// terraform (drift checks are what look at the cloud).
func (e *Engine) seed(j runner.Job, kept *Kept) {
	if kept.Applied == nil || kept.Applied.Outputs == nil {
		return
	}
	applied := j
	applied.Hash = kept.Applied.HCLHash
	if err := e.runner.Seed(applied, kept.Applied.Outputs, kept.Applied.At); err != nil {
		klog.ErrorS(err, "cannot keep the last apply's record", "workspace", j.Key)
	}
}

// pendingFor is the plan waiting for key: in memory, or the one kept
// from an earlier process. A plan of other inputs is superseded.
func (e *Engine) pendingFor(ctx context.Context, ref objectref.Ref, j runner.Job, destroy bool, kept *Kept, out *Outcome) (*pending, error) {
	o, _ := e.objects.get(ref)
	pend := o.pending
	if pend == nil && kept != nil && kept.Pending != nil {
		pend = e.restore(ctx, ref, j, destroy, kept.Pending, out)
		e.objects.with(ref, func(o *object) { o.kept = nil }) // used
	}
	if pend != nil && (pend.plan.Hash != j.Hash || pend.plan.Destroy != destroy) {
		// Planned again: the plan made tells whether it is this one
		// (the same changes: it keeps waiting) or supersedes it (keep).
		e.dropPending(ref)
		return nil, nil
	}
	return pend, nil
}

// restore brings back the plan an earlier controller process left
// waiting, when it is still the plan of j, with the time it was first
// made (the record's PlannedAt). A plan of other inputs is not restored
// (an init for nothing): it waits by id and time only, until the next
// plan tells whether it is the same (keep).
func (e *Engine) restore(ctx context.Context, ref objectref.Ref, j runner.Job, destroy bool, sp *StoredPlan, out *Outcome) *pending {
	if sp.Plan.Hash != j.Hash || sp.Plan.Destroy != destroy {
		stale := sp.Plan
		e.objects.with(ref, func(o *object) {
			if o.waiting == nil {
				o.waiting = &stale
			}
		})
		return nil
	}
	p, err := e.runner.RestorePlan(ctx, j, sp.Plan, sp.Data)
	if err != nil {
		klog.ErrorS(err, "cannot restore the plan waiting for approval; planning again", "object", ref, "plan", sp.Plan.ID)
		return nil
	}
	pend := &pending{plan: p, verdicts: sp.Verdicts}
	e.objects.with(ref, func(o *object) {
		if o.pending == nil {
			o.pending, o.waiting = pend, waitingOf(p)
		}
	})
	out.Restored = true
	klog.InfoS("restored the plan awaiting approval", "object", ref, "plan", p.ID)
	return pend
}

// dropPending forgets key's pending plan (and its file), returning it.
func (e *Engine) dropPending(ref objectref.Ref) *runner.Plan {
	var p *runner.Plan
	e.objects.with(ref, func(o *object) {
		if o.pending != nil {
			p = o.pending.plan
			o.pending = nil
		}
	})
	e.runner.Discard(p)
	return p
}
