package engine

import (
	"github.com/example/cloud-provider-example/objectref"
	"github.com/example/cloud-provider-example/runner"
)

// An approval names a plan by id, and counts only if it was made after
// the plan was (review). A plan made again with the id of the one waiting
// (its file dropped when the inputs' rendering changed but not what the
// plan does, a fresh plan before an apply, a restart, two reconciles at
// once) is the same plan, the same changes from the same state: it keeps
// the time it was first made, so the approvals made for it still count.
// Only a plan of another id supersedes it, and an apply, or inputs that
// need nothing done, end its wait.

// keep makes pend the plan waiting for ref's decision, and returns the
// plan it supersedes (nil when none, or when pend is the waiting plan
// made again).
func (e *Engine) keep(ref objectref.Ref, pend *pending) (superseded *runner.Plan) {
	e.objects.with(ref, func(o *object) {
		if o.pending != nil && o.pending.plan != pend.plan {
			e.runner.Discard(o.pending.plan)
		}
		switch w := o.waiting; {
		case w != nil && w.ID == pend.plan.ID:
			pend.plan.Created = w.Created
		case w != nil:
			superseded = w
		}
		o.pending, o.waiting = pend, waitingOf(pend.plan)
	})
	return superseded
}

// waitingOf is what is kept of p while it waits: not its text, which may
// be long and which its record keeps.
func waitingOf(p *runner.Plan) *runner.Plan {
	w := *p
	w.Text, w.Warnings = "", nil
	return &w
}

// settle ends the wait of ref's plan, the object being as its inputs say
// (applied is the plan applied, nil when nothing was to do): it returns
// the plan that waited, now superseded, unless that is the one applied.
func (e *Engine) settle(ref objectref.Ref, applied *runner.Plan) *runner.Plan {
	dropped := e.dropPending(ref)
	var w *runner.Plan
	e.objects.with(ref, func(o *object) { w, o.waiting = o.waiting, nil })
	if w == nil {
		w = dropped
	}
	if w == nil || applied != nil && w.ID == applied.ID {
		return nil
	}
	return w
}
