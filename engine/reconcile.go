package engine

import (
	"context"
	"errors"
	"fmt"

	tfjson "github.com/hashicorp/terraform-json"

	"github.com/example/cloud-provider-example/annotations"
	"github.com/example/cloud-provider-example/objectref"
	"github.com/example/cloud-provider-example/policy"
	"github.com/example/cloud-provider-example/runner"
	"github.com/example/cloud-provider-example/state"
)

// One object's convergence under its Review: the fast path when nothing
// changed, else the plan waiting for a decision (load.go) or a new plan,
// then the decision (denied, only planned, awaiting approval, applied).

// runOptions tune one reconcile.
type runOptions struct {
	// state names the object for the state backends (legacy keys).
	state   state.Object
	destroy bool
	// drift: a drift check (plan from the refreshed cloud, guarded).
	drift bool
	guard func(ctx context.Context) error
	// beforePlan runs before a new plan is made (never under a plan that
	// waits: what it changes in the state would make that one stale).
	beforePlan func(ctx context.Context) error
	// heldTextOnly renders the text of a plan (planText) only when it is
	// held for someone to decide on (runner.EnsureOptions.HeldTextOnly).
	heldTextOnly bool
}

// owned is nil when this replica may plan and apply ref now, else
// ErrNotOwner (Options.Owns).
func (e *Engine) owned(ref objectref.Ref) error {
	if e.owns != nil && !e.owns(ref) {
		return fmt.Errorf("%s: %w", ref.Describe(), ErrNotOwner)
	}
	return nil
}

// destroyObject destroys ref's workspace (job j) under rv, and forgets
// the object once the destroy is applied: an object in a workspace of
// its own whose state is its only record (a reserved address, a pod
// pool).
func (e *Engine) destroyObject(ctx context.Context, ref objectref.Ref, j runner.Job, rv Review) (*Outcome, error) {
	out, err := e.reconcile(ctx, ref, j, rv, runOptions{state: e.stateObject(ref), destroy: true})
	if err == nil && out.Result != nil {
		e.objects.forget(ref)
	}
	return out, err
}

// reconcile converges key to j under rv: the fast path, else the plan
// waiting for a decision, else a new plan; see Review.
func (e *Engine) reconcile(ctx context.Context, ref objectref.Ref, j runner.Job, rv Review, o runOptions) (*Outcome, error) {
	out := &Outcome{Policy: rv.Policy, Workspace: j.Key, Files: j.Files}
	release, err := e.turns.take(ctx, ref.Key())
	if err != nil {
		return out, fmt.Errorf("%s: waiting for the reconcile under way: %w", ref.Describe(), err)
	}
	defer release()
	if !o.destroy && !o.drift {
		if res, ok := e.runner.FastPath(j.Key, j.Hash, 0); ok {
			// A drift correction of these inputs may still wait; any
			// other pending plan is moot.
			if cur, _ := e.objects.get(ref); cur.pending == nil || cur.pending.plan.Hash != j.Hash || cur.pending.plan.Destroy {
				out.Superseded = e.settle(ref, nil)
				out.Result = res
				return out, nil
			}
		}
	}
	// Not this replica's (sharding): it neither plans nor reads what the
	// record keeps, which would stand for the object when it comes back.
	if err := e.owned(ref); err != nil {
		return out, err
	}
	var pend *pending
	if !o.drift {
		kept, err := e.load(ctx, ref, j)
		if err != nil {
			return out, err
		}
		if err := e.migrate(ctx, ref, j, o.state); err != nil {
			return out, err
		}
		if pend, err = e.pendingFor(ctx, ref, j, o.destroy, kept, out); err != nil {
			return out, err
		}
		if pend == nil && !o.destroy && kept != nil {
			if res, ok := e.runner.FastPath(j.Key, j.Hash, 0); ok {
				out.Superseded = e.settle(ref, nil) // a plan kept of other inputs
				out.Result = res                    // applied before this process started
				return out, nil
			}
		}
	}
	if pend == nil {
		if o.beforePlan != nil {
			if err := o.beforePlan(ctx); err != nil {
				return out, err
			}
		}
		var err error
		if pend, err = e.plan(ctx, ref, j, rv, o, out); err != nil || pend == nil {
			return out, err
		}
	}
	return e.decide(ctx, ref, j, pend, rv, out)
}

// plan makes a plan for j. Under auto, a plan that no rule flags is
// applied in the same terraform run (plan and apply under one lock, no
// extra process); any other plan with changes is kept pending, named by
// what it does, and returned.
func (e *Engine) plan(ctx context.Context, ref objectref.Ref, j runner.Job, rv Review, o runOptions, out *Outcome) (*pending, error) {
	kind := kindChange
	switch {
	case o.destroy:
		kind = kindDestroy
	case o.drift:
		kind = kindDrift
	}
	var verdicts []policy.Verdict
	var started *runner.Plan
	opts := runner.EnsureOptions{PlanText: e.planText, HeldTextOnly: o.heldTextOnly, Refresh: o.drift, Guard: o.guard,
		Review: func(p *runner.Plan, inspect func() (*tfjson.Plan, error)) (bool, error) {
			// The plan took a while: the shard may have moved meanwhile,
			// and the replica that took it plans too (its apply and this
			// one's would meet on the state lock, one failing).
			if err := e.owned(ref); err != nil {
				return true, err
			}
			var err error
			verdicts, err = e.evaluate(p, kind, rv.Object, inspect)
			hold := rv.Policy != annotations.ApplyAuto || len(verdicts) > 0
			if err == nil && !hold {
				rv.beforeApply(p, nil)
				started = p
			}
			return hold, err
		}}
	var res *runner.Result
	var err error
	if o.destroy {
		res, err = e.runner.Destroy(ctx, j, opts)
	} else {
		res, err = e.runner.Ensure(ctx, j, opts)
	}
	if err != nil {
		if started != nil && started.HasChanges {
			out.Planned, out.Attempted = started, started
		}
		return nil, err
	}
	if !res.Held {
		out.Result = res
		if res.Plan != nil {
			out.Planned = res.Plan
			if res.Applied {
				out.Applied = res.Plan
			}
		}
		if w := e.settle(ref, out.Applied); w != nil {
			out.Superseded = w
		}
		return nil, nil
	}
	p := res.Plan
	if _, err := e.runner.Identify(ctx, p); err != nil {
		e.runner.Discard(p)
		return nil, err
	}
	return e.hold(ref, p, verdicts, out), nil
}

// hold keeps p pending for ref with its verdicts, and says so in out: the
// plan made, and the plan it superseded if any.
func (e *Engine) hold(ref objectref.Ref, p *runner.Plan, verdicts []policy.Verdict, out *Outcome) *pending {
	pend := &pending{plan: p, verdicts: verdicts}
	if w := e.keep(ref, pend); w != nil {
		out.Superseded = w
	}
	out.Planned = p
	return pend
}

// decide answers a pending plan: denied, only planned, awaiting approval,
// or approved and applied.
func (e *Engine) decide(ctx context.Context, ref objectref.Ref, j runner.Job, pend *pending, rv Review, out *Outcome) (*Outcome, error) {
	p := pend.plan
	out.Awaiting, out.Verdicts = p, pend.verdicts
	if d := pend.denied(); d != nil {
		return out, &DeniedError{PlanID: p.ID, Verdict: *d}
	}
	if rv.Policy == annotations.ApplyPlanOnly {
		return out, &AwaitingApprovalError{PlanID: p.ID, Policy: rv.Policy, Verdicts: pend.verdicts}
	}
	if rv.Approval != nil {
		out.Approval = rv.Approval(p)
	}
	if !out.Approval.Approved {
		return out, &AwaitingApprovalError{PlanID: p.ID, Policy: rv.Policy, Verdicts: pend.verdicts}
	}
	return e.applyApproved(ctx, ref, j, pend, rv, out)
}

// applyApproved applies the approved saved plan if a fresh plan still does
// the same (same id: same changes from the same refreshed state);
// otherwise the fresh plan replaces it and waits for its own approval.
func (e *Engine) applyApproved(ctx context.Context, ref objectref.Ref, j runner.Job, pend *pending, rv Review, out *Outcome) (*Outcome, error) {
	p := pend.plan
	if err := e.owned(ref); err != nil {
		return out, err
	}
	fresh, err := e.runner.Plan(ctx, j, runner.PlanOptions{Destroy: p.Destroy})
	if err != nil {
		return out, err
	}
	var js *tfjson.Plan
	if fresh.HasChanges {
		if js, err = e.runner.Identify(ctx, fresh); err != nil {
			e.discardFresh(fresh, p)
			return out, err
		}
	}
	if !fresh.HasChanges || fresh.ID != p.ID {
		// The cloud or the state moved: the approved plan is not what
		// would happen now.
		out.Awaiting, out.Verdicts, out.Approval = nil, nil, Approval{}
		if !fresh.HasChanges {
			out.Superseded = e.settle(ref, nil)
			return e.nothingToDo(ctx, j, fresh, out)
		}
		e.dropPending(ref) // fresh supersedes it (replan)
		return e.replan(ctx, ref, fresh, js, rv, out)
	}
	e.discardFresh(fresh, p)
	// The fresh plan took a while: the shard may have moved meanwhile.
	if err := e.owned(ref); err != nil {
		return out, err
	}
	rv.beforeApply(p, out.Approval.Approvers)
	var res *runner.Result
	if p.Destroy {
		res, err = e.runner.DestroyPlanned(ctx, j, p)
	} else {
		res, err = e.runner.Apply(ctx, p)
	}
	if errors.Is(err, runner.ErrStalePlan) {
		// Nothing was applied: the next reconcile plans again, and the
		// same plan made again still waits for the approvals made for it.
		e.dropPending(ref)
		out.Awaiting = nil
		return out, err
	}
	e.settle(ref, p) // applied, or its apply attempted: its approvals are spent
	if err != nil {
		out.Awaiting, out.Attempted = nil, p
		return out, err
	}
	out.Awaiting, out.Applied, out.Result = nil, p, res
	return out, nil
}

// discardFresh discards fresh, made again to check approved plan p,
// unless it is p's very file: a plan file made within the same second as
// p's, from the same state, is byte for byte p's, kept under the same
// hash, and removing it would lose the approved plan.
func (e *Engine) discardFresh(fresh, p *runner.Plan) {
	if fresh.File != p.File {
		e.runner.Discard(fresh)
	}
}

// replan makes fresh the pending plan; it waits for its own approval.
func (e *Engine) replan(ctx context.Context, ref objectref.Ref, fresh *runner.Plan, js *tfjson.Plan, rv Review, out *Outcome) (*Outcome, error) {
	verdicts, err := e.evaluate(fresh, kindOf(fresh), rv.Object, func() (*tfjson.Plan, error) { return js, nil })
	if err != nil {
		e.runner.Discard(fresh)
		return out, err
	}
	if e.planText {
		if _, err := e.runner.ShowPlan(ctx, fresh); err != nil {
			e.runner.Discard(fresh)
			return out, err
		}
	}
	pend := e.hold(ref, fresh, verdicts, out)
	out.Awaiting, out.Verdicts = fresh, verdicts
	if d := pend.denied(); d != nil {
		return out, &DeniedError{PlanID: fresh.ID, Verdict: *d}
	}
	return out, &AwaitingApprovalError{PlanID: fresh.ID, Policy: rv.Policy, Verdicts: verdicts}
}

// nothingToDo answers a fresh plan without changes: the outputs, or for a
// destroy, the object is forgotten.
func (e *Engine) nothingToDo(ctx context.Context, j runner.Job, p *runner.Plan, out *Outcome) (*Outcome, error) {
	e.runner.Discard(p)
	if p.Destroy {
		res, err := e.runner.Destroy(ctx, j, runner.EnsureOptions{}) // nothing to destroy: forgets state and workspace
		out.Result = res
		return out, err
	}
	outs, err := e.runner.Outputs(ctx, j)
	out.Result = &runner.Result{Outputs: outs, Plan: p}
	return out, err
}
