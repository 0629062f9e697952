package runner

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"time"
)

// LastApply is an object's last successful apply: enough to answer "is
// this already applied?" and "what are the outputs?" without starting
// terraform. It is the one type of it: the runner keeps it in the
// workspace, the engine's plan store across restarts and the plan record
// shows it (records.LastApply).
type LastApply struct {
	// HCLHash identifies the rendering that was applied; InputsDigest the
	// Kubernetes inputs (Service, nodes) it was rendered from, where the
	// caller knows them (plan records).
	HCLHash      string `json:"hclHash"`
	InputsDigest string `json:"inputsDigest,omitempty"`
	PlanID       string `json:"planID,omitempty"`
	// Owner is the uid of the object the workspace was applied for.
	Owner string `json:"owner,omitempty"`
	// Outputs are the root module's non-sensitive outputs.
	Outputs map[string]json.RawMessage `json:"outputs"`
	At      time.Time                  `json:"at"`
}

// Output decodes one string output of the apply ("" when absent, not a
// string, or nothing was applied).
func (rec *LastApply) Output(name string) string {
	if rec == nil {
		return ""
	}
	return stringOutput(rec.Outputs, name)
}

func stringOutput(outputs map[string]json.RawMessage, name string) string {
	var s string
	_ = json.Unmarshal(outputs[name], &s) // null or missing: ""
	return s
}

// fresh tells whether rec is the apply of hash, made less than maxAge
// before now (any age when maxAge is not positive).
func (rec *LastApply) fresh(hash string, maxAge time.Duration, now time.Time) bool {
	if rec == nil || rec.HCLHash == "" || rec.HCLHash != hash {
		return false
	}
	return maxAge <= 0 || now.Sub(rec.At) < maxAge
}

// lastApplied reads the workspace's last apply; a missing or unreadable one is empty.
func (w *workspace) lastApplied() *LastApply {
	data, err := os.ReadFile(w.meta("last-apply.json"))
	if err != nil {
		return &LastApply{}
	}
	var rec LastApply
	if json.Unmarshal(data, &rec) != nil {
		return &LastApply{}
	}
	return &rec
}

func (w *workspace) saveLastApply(rec *LastApply) error {
	data, err := json.Marshal(rec)
	if err != nil {
		return err
	}
	if err := writeIfChanged(w.meta("last-apply.json"), data, 0o600); err != nil {
		return fmt.Errorf("workspace %s: save last apply: %w", w.key, err)
	}
	return nil
}

func (w *workspace) clearLastApply() error {
	if err := os.Remove(w.meta("last-apply.json")); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("workspace %s: clear last apply: %w", w.key, err)
	}
	return nil
}

// Seed records that job.Hash was applied with outputs at at, as kept
// outside the process (a plan record): a controller that starts trusts
// it, so an unchanged object costs no terraform process; drift checks are
// what look at the cloud. A last apply in the workspace as recent is not
// overwritten; an older one is (another replica applied since: sharding,
// or a container restarted on its old workspaces).
func (r *Runner) Seed(job Job, outputs map[string]json.RawMessage, at time.Time) error {
	w, err := r.workspaceFor(job.Key)
	if err != nil {
		return err
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if rec := w.lastApplied(); rec.HCLHash != "" && !rec.At.Before(at) {
		return nil
	}
	return w.saveLastApply(&LastApply{HCLHash: job.Hash, Outputs: outputs, At: at, Owner: job.Owner})
}
