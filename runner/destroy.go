package runner

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"

	"github.com/hashicorp/terraform-exec/tfexec"
	"k8s.io/klog/v2"
)

// Destroy plans and applies the destruction of everything in the object's
// state, then deletes the state and the workspace directory. Destroying an
// object that was never applied (or is already gone) succeeds. o.Review
// and o.PlanText work as for Ensure (a held destroy forgets nothing).
func (r *Runner) Destroy(ctx context.Context, job Job, o EnsureOptions) (*Result, error) {
	w, release, err := r.acquireJob(ctx, job)
	if errors.Is(err, ErrGone) {
		return &Result{}, nil // destroyed already
	}
	if err != nil {
		return nil, err
	}
	defer release()
	if job.Exists != nil {
		// Nothing stored: nothing to destroy, and no terraform (which
		// would create a pg workspace only to delete it). Asked even when
		// this runner recorded an apply: another replica may have
		// destroyed the state since (a shard handed over mid-delete).
		if ok, err := job.Exists(ctx); err == nil && !ok {
			return &Result{}, r.forgetWorkspace(w, job)
		}
	}
	if err := r.prepare(ctx, w, job); err != nil {
		return nil, err
	}
	p, err := r.plan(ctx, w, job, PlanOptions{Destroy: true})
	if err != nil {
		return nil, err
	}
	if held, err := r.review(ctx, w, p, o); held != nil || err != nil {
		return held, err
	}
	res := &Result{Plan: p}
	if p.HasChanges {
		if r.appliedText(o) {
			if p.Text, err = r.showText(ctx, w, p.File, w.env); err != nil {
				return nil, err
			}
		}
		if res, err = r.apply(ctx, w, p); err != nil {
			return nil, err
		}
	}
	return res, r.forget(ctx, w, job)
}

// DestroyPlanned applies an approved destroy plan, then forgets the object.
func (r *Runner) DestroyPlanned(ctx context.Context, job Job, p *Plan) (*Result, error) {
	if !p.Destroy {
		return nil, fmt.Errorf("workspace %s: plan %s is not a destroy plan", p.Workspace, p.ID)
	}
	res, err := r.Apply(ctx, p)
	if err != nil {
		return nil, err
	}
	w, release, err := r.acquire(ctx, job.Key)
	if err != nil {
		return nil, err
	}
	defer release()
	return res, r.forget(ctx, w, job)
}

// forget deletes the object's state and workspace directory.
func (r *Runner) forget(ctx context.Context, w *workspace, job Job) error {
	if job.CLIWorkspace != "" && job.CLIWorkspace != "default" {
		if err := r.exec("workspace", func() error { return w.tf.WorkspaceSelect(ctx, "default", w.reattach) }); err != nil {
			return w.newError("workspace select", err, nil)
		}
		if err := r.exec("workspace", func() error { return w.tf.WorkspaceDelete(ctx, job.CLIWorkspace, w.reattach) }); err != nil {
			return w.newError("workspace delete", err, nil)
		}
	}
	if job.DeleteState != nil {
		if err := job.DeleteState(ctx); err != nil {
			return fmt.Errorf("workspace %s: delete state: %w", w.key, err)
		}
	}
	return r.forgetWorkspace(w, job)
}

// forgetWorkspace deletes the workspace directory and leaves a tombstone.
func (r *Runner) forgetWorkspace(w *workspace, job Job) error {
	if err := os.RemoveAll(w.dir); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("workspace %s: remove directory: %w", w.key, err)
	}
	r.forgetPreview(w.key)
	known.Forget(w.source())
	r.mu.Lock()
	delete(r.ws, w.key)
	if job.Owner != "" {
		r.bury(w.key, job.Owner)
	}
	r.mu.Unlock()
	klog.V(2).InfoS("workspace forgotten", "workspace", w.key)
	return nil
}

// Outputs returns the object's outputs: from the last apply when there is one,
// else from the state (`terraform output`, no plan). Absent state → nil;
// a destroyed object → ErrGone.
func (r *Runner) Outputs(ctx context.Context, job Job) (map[string]json.RawMessage, error) {
	w, release, err := r.acquireJob(ctx, job)
	if err != nil {
		return nil, err
	}
	defer release()
	if rec := w.lastApplied(); rec.Outputs != nil {
		return rec.Outputs, nil
	}
	if job.Exists != nil {
		if ok, err := job.Exists(ctx); err == nil && !ok {
			return map[string]json.RawMessage{}, nil // no state: no outputs
		}
	}
	if err := r.prepare(ctx, w, job); err != nil {
		return nil, err
	}
	var metas map[string]tfexec.OutputMeta
	err = r.exec("output", func() (err error) { metas, err = w.tf.Output(ctx); return err })
	if err != nil {
		return nil, w.newError("output", err, nil)
	}
	out := map[string]json.RawMessage{}
	for k, m := range metas {
		if !m.Sensitive {
			out[k] = m.Value
		}
	}
	// Kept (without a hash: it proves nothing applied), also when empty,
	// so that the next read, e.g. the route controller's every few
	// seconds, runs no terraform.
	if err := w.saveLastApply(&LastApply{Outputs: out, At: r.now(), Owner: job.Owner}); err != nil {
		return nil, err
	}
	return out, nil
}
