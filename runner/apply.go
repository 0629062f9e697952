package runner

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/hashicorp/terraform-exec/tfexec"
	tfjson "github.com/hashicorp/terraform-json"
	"k8s.io/klog/v2"
)

// Result is the outcome of Ensure or Destroy.
type Result struct {
	// Outputs are the root module's non-sensitive outputs (JSON values).
	Outputs map[string]json.RawMessage
	// Plan is what was planned and applied; nil on the fast path.
	Plan *Plan
	// FastPath: the desired state was already applied; no terraform ran.
	FastPath bool
	Applied  bool
	// Held: Review held the plan; it was not applied.
	Held bool
	// Warnings are terraform's warning diagnostics of the apply (e.g. the
	// provider adopting an object an interrupted apply created).
	Warnings []string
}

// Output decodes one string output ("" when absent or not a string).
func (r *Result) Output(name string) string { return stringOutput(r.Outputs, name) }

// EnsureOptions tune Ensure.
type EnsureOptions struct {
	// MaxAge forces a real plan when the last apply is older (drift check);
	// 0 trusts the last apply forever.
	MaxAge time.Duration
	// PlanText renders a plan with changes for people (Plan.Text), in
	// parallel with its apply.
	PlanText bool
	// HeldTextOnly, with PlanText, renders the text only of a plan Review
	// holds, for the people who decide on it: a plan applied at once goes
	// without, one terraform process fewer (a pod pool's membership, ADR
	// 24). Config.KeepPlanText still renders every one.
	HeldTextOnly bool
	// Refresh plans even when the last apply says job.Hash is applied (a
	// drift check).
	Refresh bool
	// Guard, if set, runs first under the workspace's lock: an error ends
	// the run before terraform starts (the object changed or went away
	// since the caller looked).
	Guard func(ctx context.Context) error
	// Review, if set, decides between plan and apply whether a plan with
	// changes may be applied now; inspect runs terraform show -json, for
	// decisions that read attribute values. A held plan is returned
	// unapplied (Result.Held), its saved file kept for a later Apply.
	Review func(p *Plan, inspect func() (*tfjson.Plan, error)) (hold bool, err error)
}

// Ensure brings the object to job's desired state: plan, then apply that
// saved plan. When job.Hash equals the last successful apply (and the
// last apply is younger than MaxAge) it returns the recorded outputs without
// starting terraform.
func (r *Runner) Ensure(ctx context.Context, job Job, o EnsureOptions) (*Result, error) {
	if !o.Refresh {
		if res, ok := r.FastPath(job.Key, job.Hash, o.MaxAge); ok {
			return res, nil
		}
	}
	w, release, err := r.acquireGuarded(ctx, job, o.Guard)
	if err != nil {
		return nil, err
	}
	defer release()
	if rec := w.lastApplied(); !o.Refresh && rec.fresh(job.Hash, o.MaxAge, r.now()) { // applied while we waited
		return &Result{Outputs: rec.Outputs, FastPath: true}, nil
	}
	if err := r.prepare(ctx, w, job); err != nil {
		return nil, err
	}
	for attempt := 1; ; attempt++ {
		p, err := r.plan(ctx, w, job, PlanOptions{})
		if err != nil {
			return nil, err
		}
		if held, err := r.review(ctx, w, p, o); held != nil || err != nil {
			return held, err
		}
		var text <-chan string
		if p.HasChanges && r.appliedText(o) {
			text = r.showAsync(ctx, w, p)
		}
		res, err := r.apply(ctx, w, p)
		if text != nil {
			p.Text = <-text
			r.keepText(w, p.Text)
		}
		// Another writer (a second replica, a person) changed the state
		// between our plan and apply: plan again from the new state.
		if errors.Is(err, ErrStalePlan) && attempt < 3 {
			klog.V(2).InfoS("saved plan went stale, planning again", "workspace", w.key, "plan", p.ID)
			continue
		}
		return res, err
	}
}

// appliedText says whether a plan applied without a hold is rendered
// for people.
func (r *Runner) appliedText(o EnsureOptions) bool {
	return o.PlanText && !o.HeldTextOnly || r.cfg.KeepPlanText
}

// review asks o.Review about a plan with changes: a held plan is returned
// as a Result (with its text, when asked for), unapplied.
func (r *Runner) review(ctx context.Context, w *workspace, p *Plan, o EnsureOptions) (*Result, error) {
	if !p.HasChanges || o.Review == nil {
		return nil, nil
	}
	hold, err := o.Review(p, func() (*tfjson.Plan, error) { return r.showJSON(ctx, w, p) })
	if err != nil {
		r.Discard(p)
		return nil, err
	}
	if !hold {
		return nil, nil
	}
	if o.PlanText || r.cfg.KeepPlanText {
		if p.Text, err = r.showText(ctx, w, p.File, w.env); err != nil {
			return nil, err
		}
	}
	return &Result{Plan: p, Held: true}, nil
}

// Apply applies a plan made by Plan, exactly that saved file. A plan whose
// state changed since is refused by terraform (errors.Is ErrStalePlan).
func (r *Runner) Apply(ctx context.Context, p *Plan) (*Result, error) {
	w, release, err := r.acquire(ctx, p.Workspace)
	if err != nil {
		return nil, err
	}
	defer release()
	if sum, err := fileHash(p.File); err != nil || sum != p.FileHash {
		return nil, fmt.Errorf("workspace %s: saved plan %s is gone or was replaced", p.Workspace, p.ID)
	}
	return r.apply(ctx, w, p)
}

func (r *Runner) apply(ctx context.Context, w *workspace, p *Plan) (*Result, error) {
	rec := w.lastApplied()
	if !p.HasChanges && rec.Outputs != nil && !p.Destroy && !r.migrating() {
		// Nothing to do and the outputs are known: skip the apply process
		// (unless migrating to encryption: this apply writes the state
		// encrypted; OpenTofu writes it only if it was read unencrypted).
		rec.HCLHash, rec.At, rec.Owner = p.Hash, r.now(), p.Owner
		if err := w.saveLastApply(rec); err != nil {
			return nil, err
		}
		return &Result{Outputs: rec.Outputs, Plan: p}, nil
	}
	if p.HasChanges {
		// The state changes under the last apply from here on, even when
		// the apply fails or the process dies mid-way.
		if err := w.clearLastApply(); err != nil {
			return nil, err
		}
		klog.V(2).InfoS("terraform apply starting", "workspace", w.key, "plan", p.ID)
	}
	stream, err := r.withLockRecovery(ctx, w, "apply", func(s *uiStream) error {
		return w.tf.ApplyJSON(ctx, s.Writer(), tfexec.DirOrPlan(p.File), tfexec.LockTimeout(r.lockTimeout()), w.reattach)
	})
	// A saved plan is single-use either way.
	_ = os.Remove(p.File)
	if err != nil {
		return nil, err
	}
	klog.V(2).InfoS("terraform apply", "workspace", w.key, "plan", p.ID, "changes", p.Summary.String())
	res := &Result{Outputs: stream.outputs, Plan: p, Applied: true, Warnings: stream.warnings}
	if p.Destroy {
		return res, w.clearLastApply()
	}
	return res, w.saveLastApply(&LastApply{HCLHash: p.Hash, Outputs: stream.outputs, At: r.now(), PlanID: p.ID, Owner: p.Owner})
}

// FastPath answers from the last apply alone: the outputs of the last apply
// when it was of hash (and younger than maxAge), without taking locks or
// starting terraform.
func (r *Runner) FastPath(key, hash string, maxAge time.Duration) (*Result, bool) {
	w := r.knownWorkspace(key)
	if w == nil {
		return nil, false
	}
	if rec := w.lastApplied(); rec.fresh(hash, maxAge, r.now()) {
		return &Result{Outputs: rec.Outputs, FastPath: true}, true
	}
	return nil, false
}

// showAsync renders p for people while it is being applied: show only
// reads a hard link of the plan file, which apply then may delete.
func (r *Runner) showAsync(ctx context.Context, w *workspace, p *Plan) <-chan string {
	out := make(chan string, 1)
	link := p.File + ".show"
	if err := os.Link(p.File, link); err != nil {
		out <- ""
		return out
	}
	env := w.env
	go func() {
		defer os.Remove(link)
		text, err := r.showText(ctx, w, link, env)
		if err != nil {
			klog.V(2).InfoS("terraform show failed", "workspace", w.key, "plan", p.ID, "err", err)
		}
		out <- text
	}()
	return out
}

// keepText writes the last plan's text next to the workspace when
// configured (KeepPlanText).
func (r *Runner) keepText(w *workspace, text string) {
	if r.cfg.KeepPlanText && text != "" {
		_ = os.WriteFile(w.meta("last-plan.txt"), []byte(text+"\n"), 0o600)
	}
}
