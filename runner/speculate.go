package runner

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/hashicorp/terraform-exec/tfexec"
	tfjson "github.com/hashicorp/terraform-json"
	"k8s.io/klog/v2"
)

// A speculative plan answers "what would this rendering do?" without
// touching what the controller owns: it runs in a directory of its own
// (previewDir/<key>), takes no state lock, writes no state, no record and
// no saved plan that could be applied, and never creates a state (a
// named workspace that does not exist yet is ErrNoState).

// previewIdle is how long a preview directory is kept unused: an edit
// previewed again soon (kubectl diff, then apply) finds it initialised;
// a replica that only previews (its leader destroys the objects) keeps
// those of the objects edited lately, not of every object ever edited.
const previewIdle = 15 * time.Minute

// previewDir holds the speculative plans' directories; validKey refuses
// keys starting with '.', so it never is a workspace.
const previewDir = ".preview"

// ErrNoState: the object has no state yet, so a plan would add everything
// its rendering holds.
var ErrNoState = errors.New("no state yet")

// ErrBusy: no terraform slot came free within the caller's budget.
var ErrBusy = errors.New("terraform is busy")

// Speculation is what a speculative plan would do.
type Speculation struct {
	HasChanges bool
	Summary    PlanSummary
	// JSON is terraform show -json of the plan: attribute values, which
	// may be sensitive; callers keep what they show to resource
	// addresses, actions and non-sensitive attributes.
	JSON *tfjson.Plan
}

// Speculate plans job in its preview directory. It waits for a terraform
// slot only while ctx allows and then fails with ErrBusy; a job whose
// state does not exist is ErrNoState.
func (r *Runner) Speculate(ctx context.Context, job Job) (*Speculation, error) {
	if err := validKey(job.Key); err != nil {
		return nil, err
	}
	if err := r.checkProviderConfigs(job.Key, job.Files); err != nil {
		return nil, err
	}
	if job.Exists != nil {
		if ok, err := job.Exists(ctx); err == nil && !ok {
			return nil, ErrNoState
		}
	}
	w, err := r.previewWorkspace(job.Key)
	if err != nil {
		return nil, err
	}
	w, release, err := r.acquireSlot(ctx, w, job.Share)
	if err != nil {
		if ctx.Err() != nil {
			return nil, fmt.Errorf("workspace %s: %w", job.Key, ErrBusy)
		}
		return nil, err
	}
	defer release()
	if err := r.prepare(ctx, w, job); err != nil {
		return nil, err
	}
	file := w.meta("speculative.tfplan")
	defer os.Remove(file)
	var changed bool
	s := newUIStream()
	r.count("plan")
	err = func() error {
		defer func() { w.tf.SetStdout(nil); s.Close() }()
		var err error
		changed, err = w.tf.PlanJSON(ctx, s.Writer(), tfexec.Out(file), tfexec.Lock(false), w.reattach)
		return err
	}()
	if err != nil {
		return nil, w.newError("plan", err, s.errors)
	}
	sp := &Speculation{HasChanges: changed, Summary: s.planSummary()}
	if changed {
		if err := r.exec("show", func() (err error) { sp.JSON, err = w.tf.ShowPlanFile(ctx, file, w.reattach); return err }); err != nil {
			return nil, w.newError("show", err, nil)
		}
	}
	return sp, nil
}

// previewWorkspace is the preview directory of key: a workspace of its
// own, never one of r.ws, so its files and init are never the object's.
func (r *Runner) previewWorkspace(key string) (*workspace, error) {
	r.evictPreviews(key)
	r.mu.Lock()
	defer r.mu.Unlock()
	now := r.now()
	if w, ok := r.previews[key]; ok {
		w.used = now
		return w, nil
	}
	dir := filepath.Join(r.cfg.WorkDir, previewDir, key)
	if err := os.MkdirAll(filepath.Join(dir, metaDir), 0o700); err != nil {
		return nil, fmt.Errorf("preview %s: %w", key, err)
	}
	w := &workspace{key: key, dir: dir, speculative: true, used: now}
	if r.previews == nil {
		r.previews = map[string]*workspace{}
	}
	r.previews[key] = w
	return w, nil
}

// evictPreviews removes the preview directories, but key's, unused for
// previewIdle (no preview runs there: one takes seconds).
func (r *Runner) evictPreviews(key string) {
	now := r.now()
	r.mu.Lock()
	var idle []string
	for k, w := range r.previews {
		if k != key && now.Sub(w.used) > previewIdle {
			idle = append(idle, k)
		}
	}
	r.mu.Unlock()
	for _, k := range idle {
		r.forgetPreview(k)
	}
}

// forgetPreview removes key's preview directory with its workspace, once
// a preview running there is done.
func (r *Runner) forgetPreview(key string) {
	r.mu.Lock()
	p := r.previews[key]
	delete(r.previews, key)
	r.mu.Unlock()
	if p != nil {
		p.mu.Lock()
		defer p.mu.Unlock()
	}
	known.Forget(previewSource(key))
	if err := os.RemoveAll(filepath.Join(r.cfg.WorkDir, previewDir, key)); err != nil {
		klog.ErrorS(err, "Cannot remove a preview directory", "workspace", key)
	}
}
