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
	"time"

	"github.com/hashicorp/terraform-exec/tfexec"
	tfjson "github.com/hashicorp/terraform-json"
	"k8s.io/klog/v2"
)

// ResourceChange is one resource's planned action (or detected drift).
type ResourceChange struct {
	Address string `json:"address"`
	Type    string `json:"type"`
	// Action is create, update, delete, replace, read, noop, move, import,
	// remove (forgotten by the state, kept in the cloud).
	Action string `json:"action"`
	Reason string `json:"reason,omitempty"`
	// Importing: the change imports an existing object (an import block).
	Importing bool `json:"importing,omitempty"`
}

// PlanSummary counts a plan's changes; it never holds attribute values.
type PlanSummary struct {
	Add    int `json:"add"`
	Change int `json:"change"`
	Import int `json:"import"`
	Remove int `json:"remove"`
	// Forget counts the resources the state forgets and the cloud keeps
	// (removed blocks with destroy = false: a hand-over).
	Forget    int              `json:"forget,omitempty"`
	Resources []ResourceChange `json:"resources,omitempty"`
	// Drift lists resources changed outside terraform since the last apply.
	Drift []ResourceChange `json:"drift,omitempty"`
}

// String is the short form used in events: "+1 ~0 -0".
func (s PlanSummary) String() string {
	if s.Forget > 0 {
		return fmt.Sprintf("+%d ~%d -%d, %d forgotten", s.Add, s.Change, s.Remove, s.Forget)
	}
	return fmt.Sprintf("+%d ~%d -%d", s.Add, s.Change, s.Remove)
}

// Plan is a saved plan file and what it would do.
type Plan struct {
	// ID names the plan: "plan-" + a short hash of the saved plan file,
	// until Identify names it by what it does (then equal plans of equal
	// inputs and state get equal ids).
	ID string
	// FileHash is the SHA-256 of the saved plan file: Apply applies these
	// bytes or nothing.
	FileHash  string
	File      string
	Workspace string
	Hash      string // desired-state hash of the job planned
	Owner     string // the job's Owner
	// Created is when the plan was made (approvals made before it do not
	// count for it).
	Created    time.Time
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
	// Guard, if set, runs first under the workspace's lock: an error ends
	// the run before terraform starts.
	Guard func(ctx context.Context) error
}

// Plan prepares the workspace and writes a saved plan for job.
func (r *Runner) Plan(ctx context.Context, job Job, o PlanOptions) (*Plan, error) {
	w, release, err := r.acquireGuarded(ctx, job, o.Guard)
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
	opts := []tfexec.PlanOption{tfexec.Out(file), tfexec.LockTimeout(r.lockTimeout()), w.reattach}
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
	sum, err := fileHash(file)
	if err != nil {
		return nil, fmt.Errorf("workspace %s: %w", w.key, err)
	}
	// Kept under its hash until applied or discarded.
	kept, err := keepPlan(w, file, sum)
	if err != nil {
		return nil, err
	}
	p := &Plan{ID: "plan-" + sum[:12], FileHash: sum, File: kept, Workspace: w.key, Hash: job.Hash, Owner: job.Owner, Created: time.Now(), Destroy: o.Destroy,
		HasChanges: changed, Summary: stream.planSummary(), Warnings: stream.warnings}
	p.Summary.Drift = stream.drift

	klog.V(2).InfoS("terraform plan", "workspace", w.key, "plan", p.ID, "changes", p.Summary.String(), "destroy", o.Destroy)
	return p, nil
}

// fileHash is the SHA-256 of a saved plan file, in hex.
func fileHash(file string) (string, error) {
	f, err := os.Open(file)
	if err != nil {
		return "", fmt.Errorf("read saved plan: %w", err)
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", fmt.Errorf("hash saved plan: %w", err)
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// keepPlan moves a saved plan to plans/<hash>.tfplan in the workspace.
func keepPlan(w *workspace, file, sum string) (string, error) {
	kept := w.meta(filepath.Join("plans", sum+".tfplan"))
	if err := os.MkdirAll(filepath.Dir(kept), 0o700); err != nil {
		return "", err
	}
	if err := os.Rename(file, kept); err != nil {
		return "", fmt.Errorf("workspace %s: keep plan: %w", w.key, err)
	}
	return kept, nil
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
	tf, err := r.sideHandle(ctx, w, env)
	if err != nil {
		return "", err
	}
	var out string
	err = r.exec("show", func() (err error) { out, err = tf.ShowPlanFileRaw(ctx, file, w.reattach); return err })
	if err != nil {
		return "", w.newError("show", err, nil)
	}
	return w.sanitize(out), nil
}

// sideHandle is a second terraform-exec handle on the workspace, for
// read-only commands (show) that may run beside the workspace's own.
func (r *Runner) sideHandle(ctx context.Context, w *workspace, env map[string]string) (*tfexec.Terraform, error) {
	tf, err := r.handle(ctx, w.dir)
	if err != nil {
		return nil, err
	}
	return tf, tf.SetEnv(env)
}

// Discard forgets a saved plan that will not be applied (superseded).
func (r *Runner) Discard(p *Plan) {
	if p != nil && p.File != "" {
		_ = os.Remove(p.File)
	}
}

// Identify names p by what it does, independent of when it was made:
// "plan-" + a short hash of terraform show -json without its timestamp.
// Two plans with equal ids make the same changes from the same
// (refreshed) prior state, so a plan made again from unchanged inputs and
// state keeps its id. It returns the JSON plan (attribute values, which
// may be sensitive: only its hash and what policy rules read of it leave
// the process).
func (r *Runner) Identify(ctx context.Context, p *Plan) (*tfjson.Plan, error) {
	w, release, err := r.acquire(ctx, p.Workspace)
	if err != nil {
		return nil, err
	}
	defer release()
	return r.identify(ctx, w, p)
}

func (r *Runner) identify(ctx context.Context, w *workspace, p *Plan) (*tfjson.Plan, error) {
	plan, err := r.showJSON(ctx, w, p)
	if err != nil {
		return nil, err
	}
	// Not what the plan does: when it was made, and which attributes
	// terraform found relevant (listed in no stable order).
	norm := *plan
	norm.Timestamp = ""
	norm.RelevantAttributes = nil
	data, err := json.Marshal(&norm) // struct order, sorted map keys
	if err != nil {
		return nil, fmt.Errorf("workspace %s: plan json: %w", w.key, err)
	}
	sum := sha256.Sum256(data)
	p.ID = "plan-" + hex.EncodeToString(sum[:])[:12]
	return plan, nil
}

// showJSON is terraform show -json of a saved plan.
func (r *Runner) showJSON(ctx context.Context, w *workspace, p *Plan) (*tfjson.Plan, error) {
	tf, err := r.sideHandle(ctx, w, w.env)
	if err != nil {
		return nil, err
	}
	var plan *tfjson.Plan
	if err := r.exec("show", func() (err error) { plan, err = tf.ShowPlanFile(ctx, p.File, w.reattach); return err }); err != nil {
		return nil, w.newError("show", err, nil)
	}
	return plan, nil
}

// RestorePlan puts a saved plan kept elsewhere (a plan record) back into
// the job's workspace, so Apply can apply exactly it; p describes it (its
// ID, FileHash, Hash, Destroy and Summary), data is the file. The
// workspace is prepared as for a plan.
func (r *Runner) RestorePlan(ctx context.Context, job Job, p Plan, data []byte) (*Plan, error) {
	w, release, err := r.acquireJob(ctx, job)
	if err != nil {
		return nil, err
	}
	defer release()
	sum := sha256.Sum256(data)
	if hex.EncodeToString(sum[:]) != p.FileHash {
		return nil, fmt.Errorf("workspace %s: saved plan %s does not match its recorded hash", job.Key, p.ID)
	}
	if err := r.prepare(ctx, w, job); err != nil {
		return nil, err
	}
	tmp := w.meta("restored.tfplan")
	if err := os.WriteFile(tmp, data, 0o600); err != nil {
		return nil, fmt.Errorf("workspace %s: restore plan: %w", job.Key, err)
	}
	if p.File, err = keepPlan(w, tmp, p.FileHash); err != nil {
		return nil, err
	}
	p.Workspace, p.Owner, p.HasChanges = job.Key, job.Owner, true
	return &p, nil
}
