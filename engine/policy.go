package engine

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/example/cloud-provider-example/annotations"
	"github.com/example/cloud-provider-example/runner"
)

// AwaitingApprovalError: the object's change is a recorded plan that the
// policy does not let the controller apply (yet).
type AwaitingApprovalError struct {
	PlanID string
	Policy annotations.ApplyPolicy
}

func (e *AwaitingApprovalError) Error() string {
	if e.Policy == annotations.ApplyPlanOnly {
		return fmt.Sprintf("plan %s recorded; the plan-only policy never applies", e.PlanID)
	}
	return fmt.Sprintf("plan %s is awaiting approval (annotate %s=%s)", e.PlanID, annotations.LBApprovePlan, e.PlanID)
}

// Outcome tells what a reconcile decided, for events, records and the
// audit log. Fields are nil when they did not happen.
type Outcome struct {
	Policy annotations.ApplyPolicy
	// Planned is a plan made in this call.
	Planned *runner.Plan
	// Applied is the plan applied in this call.
	Applied *runner.Plan
	// Awaiting is the plan waiting for approval (or recorded, plan-only).
	Awaiting *runner.Plan
	// Superseded is a pending plan replaced in this call.
	Superseded *runner.Plan
	// IgnoredApproval is an approve-plan id that is not the pending plan.
	IgnoredApproval string
	// Result holds the outputs; nil while awaiting.
	Result *runner.Result
	// Workspace and Files are the job reconciled (unset on the fast path).
	Workspace string
	Files     map[string][]byte
	// InputsDigest identifies the Kubernetes inputs (Service, nodes).
	InputsDigest string
}

// pendingPlans holds, per object, the saved plan waiting for approval.
type pendingPlans struct {
	mu sync.Mutex
	m  map[string]*runner.Plan
}

func (p *pendingPlans) get(obj string) *runner.Plan {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.m[obj]
}

func (p *pendingPlans) set(obj string, plan *runner.Plan) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.m == nil {
		p.m = map[string]*runner.Plan{}
	}
	if plan == nil {
		delete(p.m, obj)
	} else {
		p.m[obj] = plan
	}
}

// Pending is the plan awaiting approval for obj (ns/name, or "routes").
func (e *Engine) Pending(obj string) *runner.Plan { return e.pending.get(obj) }

// gated runs job under the manual or plan-only policy: plan once per
// desired state and keep the saved plan; apply exactly that plan when
// approved — after checking that a fresh plan still does the same (the
// cloud may have changed since); else report it as awaiting.
func (e *Engine) gated(ctx context.Context, obj string, job runner.Job, destroy bool, policy annotations.ApplyPolicy, approved string) (*Outcome, error) {
	out := &Outcome{Policy: policy, Workspace: job.Key, Files: job.Files}
	if !destroy {
		if res, ok := e.runner.FastPath(job.Key, job.Hash, 0); ok {
			out.Result = res // this desired state is applied already
			return out, nil
		}
	}
	p := e.pending.get(obj)
	if p != nil && (p.Hash != job.Hash || p.Destroy != destroy) {
		out.Superseded = p
		e.runner.Discard(p)
		e.pending.set(obj, nil)
		p = nil
	}
	if p == nil {
		var err error
		if p, err = e.planForReview(ctx, job, destroy); err != nil {
			return out, err
		}
		out.Planned = p
		if !p.HasChanges {
			return e.nothingToDo(ctx, out, job, p)
		}
		e.pending.set(obj, p)
	}
	if policy != annotations.ApplyManual || approved != p.ID {
		if approved != "" && approved != p.ID {
			out.IgnoredApproval = approved
		}
		out.Awaiting = p
		return out, &AwaitingApprovalError{PlanID: p.ID, Policy: policy}
	}
	return e.applyApproved(ctx, out, obj, job, p)
}

// planForReview plans and renders the plan for people.
func (e *Engine) planForReview(ctx context.Context, job runner.Job, destroy bool) (*runner.Plan, error) {
	p, err := e.runner.Plan(ctx, job, runner.PlanOptions{Destroy: destroy})
	if err != nil {
		return nil, err
	}
	if p.HasChanges {
		if _, err := e.runner.ShowPlan(ctx, p); err != nil {
			return nil, err
		}
	}
	return p, nil
}

// nothingToDo answers a plan without changes: outputs from the state, or
// for a destroy, the object is forgotten.
func (e *Engine) nothingToDo(ctx context.Context, out *Outcome, job runner.Job, p *runner.Plan) (*Outcome, error) {
	e.runner.Discard(p)
	if p.Destroy {
		res, err := e.runner.Destroy(ctx, job) // nothing to destroy: forgets state and workspace
		out.Result = res
		return out, err
	}
	outs, err := e.runner.Outputs(ctx, job)
	out.Result = &runner.Result{Outputs: outs, Plan: p}
	return out, err
}

// applyApproved applies the approved saved plan if a fresh plan still
// does the same; otherwise the fresh plan replaces it and waits.
func (e *Engine) applyApproved(ctx context.Context, out *Outcome, obj string, job runner.Job, p *runner.Plan) (*Outcome, error) {
	fresh, err := e.runner.Plan(ctx, job, runner.PlanOptions{Destroy: p.Destroy})
	if err != nil {
		return out, err
	}
	same, err := e.samePlan(ctx, p, fresh)
	if err != nil {
		return out, err
	}
	if !same {
		// The cloud or the state moved: the approved plan is not what
		// would happen now. Show the new one and wait again.
		e.runner.Discard(p)
		out.Superseded = p
		if fresh.HasChanges {
			if _, err := e.runner.ShowPlan(ctx, fresh); err != nil {
				return out, err
			}
		}
		out.Planned = fresh
		if !fresh.HasChanges {
			e.pending.set(obj, nil)
			return e.nothingToDo(ctx, out, job, fresh)
		}
		e.pending.set(obj, fresh)
		out.Awaiting = fresh
		return out, &AwaitingApprovalError{PlanID: fresh.ID, Policy: out.Policy}
	}
	e.runner.Discard(fresh)
	var res *runner.Result
	if p.Destroy {
		res, err = e.runner.DestroyPlanned(ctx, job, p)
	} else {
		res, err = e.runner.Apply(ctx, p)
	}
	e.pending.set(obj, nil)
	if errors.Is(err, runner.ErrStalePlan) {
		out.Superseded = p
		return out, err // the next reconcile plans again
	}
	if err != nil {
		return out, err
	}
	out.Applied, out.Result = p, res
	return out, nil
}

// samePlan compares what two plans would do.
func (e *Engine) samePlan(ctx context.Context, a, b *runner.Plan) (bool, error) {
	fa, err := e.runner.Fingerprint(ctx, a)
	if err != nil {
		return false, err
	}
	fb, err := e.runner.Fingerprint(ctx, b)
	if err != nil {
		return false, err
	}
	return fa == fb, nil
}

// autoOutcome describes a run under the auto policy.
func autoOutcome(policy annotations.ApplyPolicy, res *runner.Result) *Outcome {
	out := &Outcome{Policy: policy, Result: res}
	if res != nil && res.Plan != nil {
		out.Planned = res.Plan
		if res.Applied {
			out.Applied = res.Plan
		}
	}
	return out
}

func (o *Outcome) fastPath() bool { return o.Result != nil && o.Result.FastPath }
