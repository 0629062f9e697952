package runner

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"

	"github.com/hashicorp/terraform-exec/tfexec"
	tfjson "github.com/hashicorp/terraform-json"
	"k8s.io/klog/v2"
)

// ResourceChange is one resource's planned action (or detected drift).
type ResourceChange struct {
	Address string `json:"address"`
	Type    string `json:"type"`
	// Action is create, update, delete, replace, read, noop, move, import, remove.
	Action string `json:"action"`
	Reason string `json:"reason,omitempty"`
}

// PlanSummary counts a plan's changes; it never holds attribute values.
type PlanSummary struct {
	Add       int              `json:"add"`
	Change    int              `json:"change"`
	Import    int              `json:"import"`
	Remove    int              `json:"remove"`
	Resources []ResourceChange `json:"resources,omitempty"`
	// Drift lists resources changed outside terraform since the last apply.
	Drift []ResourceChange `json:"drift,omitempty"`
}

// String is the short form used in events: "+1 ~0 -0".
func (s PlanSummary) String() string {
	return fmt.Sprintf("+%d ~%d -%d", s.Add, s.Change, s.Remove)
}

// Plan is a saved plan file and what it would do.
type Plan struct {
	// ID is "plan-" + a short hash of the saved plan file: approving an ID
	// approves exactly these bytes.
	ID         string
	File       string
	Workspace  string
	Hash       string // desired-state hash of the job planned
	Destroy    bool
	HasChanges bool
	Summary    PlanSummary
	Warnings   []string
	// Text is terraform's human-readable rendering (terraform show), when
	// asked for: Terraform redacts the values it knows are sensitive.
	Text string
}

// PlanOptions select the kind of plan.
type PlanOptions struct {
	Destroy     bool
	RefreshOnly bool
}

// Plan prepares the workspace and writes a saved plan for job.
func (r *Runner) Plan(ctx context.Context, job Job, o PlanOptions) (*Plan, error) {
	w, release, err := r.acquire(ctx, job.Key)
	if err != nil {
		return nil, err
	}
	defer release()
	if err := r.prepare(ctx, w, job); err != nil {
		return nil, err
	}
	return r.plan(ctx, w, job, o)
}

func (r *Runner) plan(ctx context.Context, w *workspace, job Job, o PlanOptions) (*Plan, error) {
	file := w.meta("current.tfplan")
	_ = os.Remove(file)
	opts := []tfexec.PlanOption{tfexec.Out(file), tfexec.LockTimeout(r.lockTimeout())}
	if o.Destroy {
		opts = append(opts, tfexec.Destroy(true))
	}
	if o.RefreshOnly {
		opts = append(opts, tfexec.RefreshOnly(true))
	}
	var changed bool
	stream, err := r.withLockRecovery(ctx, w, "plan", func(s *uiStream) error {
		var err error
		changed, err = w.tf.PlanJSON(ctx, s.Writer(), opts...)
		return err
	})
	if err != nil {
		return nil, err
	}
	id, err := planID(file)
	if err != nil {
		return nil, fmt.Errorf("workspace %s: %w", w.key, err)
	}
	// Kept under its id until applied or discarded: an approval names it.
	kept := w.meta(filepath.Join("plans", id+".tfplan"))
	if err := os.MkdirAll(filepath.Dir(kept), 0o700); err != nil {
		return nil, err
	}
	if err := os.Rename(file, kept); err != nil {
		return nil, fmt.Errorf("workspace %s: keep plan: %w", w.key, err)
	}
	file = kept
	p := &Plan{ID: id, File: file, Workspace: w.key, Hash: job.Hash, Destroy: o.Destroy, HasChanges: changed, Warnings: stream.warnings}
	p.Summary.Resources = stream.planned
	p.Summary.Drift = stream.drift
	if m := stream.summary; m != nil && m.Changes != nil {
		p.Summary.Add, p.Summary.Change, p.Summary.Import, p.Summary.Remove = m.Changes.Add, m.Changes.Change, m.Changes.Import, m.Changes.Remove
	}
	sort.Slice(p.Summary.Resources, func(i, j int) bool { return p.Summary.Resources[i].Address < p.Summary.Resources[j].Address })

	klog.V(2).InfoS("terraform plan", "workspace", w.key, "plan", p.ID, "changes", p.Summary.String(), "destroy", o.Destroy)
	return p, nil
}

// planID names a saved plan by its content.
func planID(file string) (string, error) {
	f, err := os.Open(file)
	if err != nil {
		return "", fmt.Errorf("read saved plan: %w", err)
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", fmt.Errorf("hash saved plan: %w", err)
	}
	return "plan-" + hex.EncodeToString(h.Sum(nil))[:12], nil
}

// ShowPlan renders a saved plan the way a person reads it (terraform
// show, with Terraform's own redaction) and sets p.Text.
func (r *Runner) ShowPlan(ctx context.Context, p *Plan) (string, error) {
	w, release, err := r.acquire(ctx, p.Workspace)
	if err != nil {
		return "", err
	}
	defer release()
	text, err := r.showText(ctx, w, p.File, w.env)
	if err != nil {
		return "", err
	}
	p.Text = text
	return text, nil
}

// showText runs terraform show on a plan file with its own terraform-exec
// handle, so it may run while the workspace's handle applies.
func (r *Runner) showText(ctx context.Context, w *workspace, file string, env map[string]string) (string, error) {
	tf, err := r.sideHandle(w, env)
	if err != nil {
		return "", err
	}
	var out string
	err = r.exec("show", func() (err error) { out, err = tf.ShowPlanFileRaw(ctx, file); return err })
	if err != nil {
		return "", w.newError("show", err, nil)
	}
	return w.sanitize(out), nil
}

// sideHandle is a second terraform-exec handle on the workspace, for
// read-only commands (show) that may run beside the workspace's own.
func (r *Runner) sideHandle(w *workspace, env map[string]string) (*tfexec.Terraform, error) {
	tf, err := tfexec.NewTerraform(w.dir, r.terraform)
	if err != nil {
		return nil, err
	}
	if err := tf.SetEnv(env); err != nil {
		return nil, err
	}
	return tf, tf.SetDisablePluginTLS(true)
}

// Discard forgets a saved plan that will not be applied (superseded).
func (r *Runner) Discard(p *Plan) {
	if p != nil && p.File != "" {
		_ = os.Remove(p.File)
	}
}

// Fingerprint identifies what a saved plan would do, independent of when
// it was made: terraform show -json without its timestamp, hashed. Two
// plans with equal fingerprints make the same changes from the same
// (refreshed) prior state. The JSON may hold sensitive values; only its
// hash leaves this function.
func (r *Runner) Fingerprint(ctx context.Context, p *Plan) (string, error) {
	w, release, err := r.acquire(ctx, p.Workspace)
	if err != nil {
		return "", err
	}
	defer release()
	tf, err := r.sideHandle(w, w.env)
	if err != nil {
		return "", err
	}
	var plan *tfjson.Plan
	if err := r.exec("show", func() (err error) { plan, err = tf.ShowPlanFile(ctx, p.File); return err }); err != nil {
		return "", w.newError("show", err, nil)
	}
	// Not what the plan does: when it was made, and which attributes
	// terraform found relevant (listed in no stable order).
	plan.Timestamp = ""
	plan.RelevantAttributes = nil
	norm, err := json.Marshal(plan) // struct order, sorted map keys
	if err != nil {
		return "", fmt.Errorf("workspace %s: plan json: %w", w.key, err)
	}
	sum := sha256.Sum256(norm)
	return hex.EncodeToString(sum[:]), nil
}
