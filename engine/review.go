package engine

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"

	tfjson "github.com/hashicorp/terraform-json"
	"k8s.io/klog/v2"

	"github.com/example/cloud-provider-example/annotations"
	"github.com/example/cloud-provider-example/objectref"
	"github.com/example/cloud-provider-example/policy"
	"github.com/example/cloud-provider-example/runner"
	"github.com/example/cloud-provider-example/state"
)

// Review is how an object's plans are decided: auto applies a plan no
// policy rule flags; a flagged plan, and every plan under manual, waits
// for approval; plan-only never applies; a plan a rule denies is never
// applied.
type Review struct {
	Policy annotations.ApplyPolicy
	// Object is the object as policy rules see it.
	Object policy.Object
	// Approval tells whether a plan has the approvals it needs; nil
	// approves nothing.
	Approval func(p *runner.Plan) Approval
	// BeforeApply, if set, hears of every plan with changes right before
	// terraform applies it, with its approvers (none under auto): where
	// the audit log writes ahead, so a crash during the apply cannot lose
	// the line.
	BeforeApply func(p *runner.Plan, approvers []string)
}

func (rv Review) beforeApply(p *runner.Plan, approvers []string) {
	if rv.BeforeApply != nil && p.HasChanges {
		rv.BeforeApply(p, approvers)
	}
}

// Approval is what the approvals of one plan amount to.
type Approval struct {
	Approved bool
	// Approvers are the verified approvers counted.
	Approvers []string
	// Ignored describes each approval that was not counted, and why.
	Ignored []string
}

// AwaitingApprovalError: the object's change is a recorded plan that may
// not be applied (yet).
type AwaitingApprovalError struct {
	PlanID   string
	Policy   annotations.ApplyPolicy
	Verdicts []policy.Verdict
}

func (e *AwaitingApprovalError) Error() string {
	if e.Policy == annotations.ApplyPlanOnly {
		return fmt.Sprintf("plan %s recorded; the plan-only policy never applies", e.PlanID)
	}
	why := "the manual policy"
	if len(e.Verdicts) > 0 {
		var rules []string
		for _, v := range e.Verdicts {
			rules = append(rules, fmt.Sprintf("%s: %s", v.Rule, v.Message))
		}
		why = "policy rule " + strings.Join(rules, "; ")
	}
	return fmt.Sprintf("plan %s is awaiting approval (%s): approve it with a PlanApproval (examplectl approve)", e.PlanID, why)
}

// DeniedError: a policy rule denies the plan; it is never applied.
type DeniedError struct {
	PlanID  string
	Verdict policy.Verdict
}

func (e *DeniedError) Error() string {
	return fmt.Sprintf("plan %s is denied by policy rule %s: %s", e.PlanID, e.Verdict.Rule, e.Verdict.Message)
}

// ErrSkipped: a drift check found the object changed or gone since the
// sweep listed it, and did nothing.
var ErrSkipped = errors.New("skipped: the object changed or went away")

// Outcome tells what a reconcile decided, for events, records and the
// audit log. Fields are nil when they did not happen.
type Outcome struct {
	Policy annotations.ApplyPolicy
	// Planned is a plan made in this call.
	Planned *runner.Plan
	// Applied is the plan applied in this call.
	Applied *runner.Plan
	// Attempted is the plan whose apply started in this call and failed:
	// the one a failed apply's audit line and record entry name.
	Attempted *runner.Plan
	// Awaiting is the plan waiting for approval, only planned (plan-only)
	// or denied.
	Awaiting *runner.Plan
	// Restored: Awaiting was kept by an earlier controller process.
	Restored bool
	// Superseded is a pending plan replaced (or made moot) in this call.
	Superseded *runner.Plan
	// Verdicts are the policy rules that flagged the plan decided.
	Verdicts []policy.Verdict
	// Approval is what the approvals of the Awaiting or Applied plan
	// amount to, when they were asked.
	Approval Approval
	// Result holds the outputs; nil while a plan waits.
	Result *runner.Result
	// Workspace and Files are the job reconciled (unset on the fast path).
	Workspace string
	Files     map[string][]byte
	// InputsDigest identifies the Kubernetes inputs (Service, nodes).
	InputsDigest string
	// Recovered is a load balancer an interrupted apply left unrecorded,
	// imported so that a deletion destroys it.
	Recovered string
}

// Plan kinds as rules see them (policy.Plan.Kind).
const (
	kindChange  = "change"
	kindDestroy = "destroy"
	kindDrift   = "drift"
)

// runOptions tune one reconcile.
type runOptions struct {
	// state names the object for the state backends (legacy keys).
	state   state.Object
	destroy bool
	// drift: a drift check (plan from the refreshed cloud, guarded).
	drift bool
	guard func(ctx context.Context) error
}

// reconcile converges key to j under rv: the fast path, else the plan
// waiting for a decision, else a new plan; see Review.
func (e *Engine) reconcile(ctx context.Context, ref objectref.Ref, j runner.Job, rv Review, o runOptions) (*Outcome, error) {
	out := &Outcome{Policy: rv.Policy, Workspace: j.Key, Files: j.Files}
	if !o.destroy && !o.drift {
		if res, ok := e.runner.FastPath(j.Key, j.Hash, 0); ok {
			// A drift correction of these inputs may still wait; any
			// other pending plan is moot.
			if cur, _ := e.objects.get(ref); cur.pending == nil || cur.pending.plan.Hash != j.Hash || cur.pending.plan.Destroy {
				out.Superseded = e.dropPending(ref)
				out.Result = res
				return out, nil
			}
		}
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
				out.Result = res // applied before this process started
				return out, nil
			}
		}
	}
	if pend == nil {
		var err error
		if pend, err = e.plan(ctx, ref, j, rv, o, out); err != nil || pend == nil {
			return out, err
		}
	}
	return e.decide(ctx, ref, j, pend, rv, out)
}

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
	applied.Hash = kept.Applied.Hash
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
		out.Superseded = e.dropPending(ref)
		if out.Superseded == nil { // restored and superseded at once
			out.Superseded = pend.plan
		}
		return nil, nil
	}
	return pend, nil
}

// restore brings back the plan an earlier controller process left
// waiting, when it is still the plan of j. A plan of other inputs is only
// reported superseded: restoring it would cost an init for nothing.
func (e *Engine) restore(ctx context.Context, ref objectref.Ref, j runner.Job, destroy bool, sp *StoredPlan, out *Outcome) *pending {
	if sp.Plan.Hash != j.Hash || sp.Plan.Destroy != destroy {
		stale := sp.Plan
		out.Superseded = &stale
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
			o.pending = pend
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
	opts := runner.EnsureOptions{PlanText: e.planText, Refresh: o.drift, Guard: o.guard,
		Review: func(p *runner.Plan, inspect func() (*tfjson.Plan, error)) (bool, error) {
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
		return nil, nil
	}
	p := res.Plan
	if _, err := e.runner.Identify(ctx, p); err != nil {
		e.runner.Discard(p)
		return nil, err
	}
	pend := &pending{plan: p, verdicts: verdicts}
	e.objects.with(ref, func(ob *object) {
		if ob.pending != nil && ob.pending.plan != p {
			out.Superseded = ob.pending.plan
			e.runner.Discard(ob.pending.plan)
		}
		ob.pending = pend
	})
	out.Planned = p
	return pend, nil
}

// evaluate runs the policy rules on a plan; inspect (terraform show
// -json) runs only when a rule reads attribute values.
func (e *Engine) evaluate(p *runner.Plan, kind string, obj policy.Object, inspect func() (*tfjson.Plan, error)) ([]policy.Verdict, error) {
	if e.rules.Len() == 0 {
		return nil, nil
	}
	in := policy.Input{Object: obj, Plan: policy.Plan{
		Kind: kind, Add: int64(p.Summary.Add), Change: int64(p.Summary.Change), Remove: int64(p.Summary.Remove), Import: int64(p.Summary.Import),
	}}
	for _, r := range p.Summary.Resources {
		in.Plan.Resources = append(in.Plan.Resources, policy.Resource{Address: r.Address, Type: r.Type, Action: r.Action, Reason: r.Reason, Importing: r.Importing})
	}
	if e.rules.NeedsValues() {
		js, err := inspect()
		if err != nil {
			return nil, fmt.Errorf("policy: read the plan's values: %w", err)
		}
		in.Values = valuesOf(js)
	}
	return e.rules.Evaluate(in), nil
}

// valuesOf maps each changed resource's address to its before and after
// attribute values.
func valuesOf(js *tfjson.Plan) map[string]any {
	out := map[string]any{}
	for _, rc := range js.ResourceChanges {
		if rc == nil || rc.Change == nil {
			continue
		}
		var actions []any
		for _, a := range rc.Change.Actions {
			actions = append(actions, string(a))
		}
		out[rc.Address] = map[string]any{"before": rc.Change.Before, "after": rc.Change.After, "actions": actions}
	}
	return out
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
	fresh, err := e.runner.Plan(ctx, j, runner.PlanOptions{Destroy: p.Destroy})
	if err != nil {
		return out, err
	}
	var js *tfjson.Plan
	if fresh.HasChanges {
		if js, err = e.runner.Identify(ctx, fresh); err != nil {
			e.runner.Discard(fresh)
			return out, err
		}
	}
	if !fresh.HasChanges || fresh.ID != p.ID {
		// The cloud or the state moved: the approved plan is not what
		// would happen now.
		out.Superseded, out.Awaiting, out.Verdicts, out.Approval = e.dropPending(ref), nil, nil, Approval{}
		if !fresh.HasChanges {
			return e.nothingToDo(ctx, j, fresh, out)
		}
		return e.replan(ctx, ref, fresh, js, rv, out)
	}
	e.runner.Discard(fresh)
	rv.beforeApply(p, out.Approval.Approvers)
	var res *runner.Result
	if p.Destroy {
		res, err = e.runner.DestroyPlanned(ctx, j, p)
	} else {
		res, err = e.runner.Apply(ctx, p)
	}
	e.dropPending(ref)
	if errors.Is(err, runner.ErrStalePlan) {
		out.Superseded, out.Awaiting = p, nil
		return out, err // the next reconcile plans again
	}
	if err != nil {
		out.Awaiting, out.Attempted = nil, p
		return out, err
	}
	out.Awaiting, out.Applied, out.Result = nil, p, res
	return out, nil
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
	pend := &pending{plan: fresh, verdicts: verdicts}
	e.objects.with(ref, func(o *object) { o.pending = pend })
	out.Planned, out.Awaiting, out.Verdicts = fresh, fresh, verdicts
	if d := pend.denied(); d != nil {
		return out, &DeniedError{PlanID: fresh.ID, Verdict: *d}
	}
	return out, &AwaitingApprovalError{PlanID: fresh.ID, Policy: rv.Policy, Verdicts: verdicts}
}

func kindOf(p *runner.Plan) string {
	if p.Destroy {
		return kindDestroy
	}
	return kindChange
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
