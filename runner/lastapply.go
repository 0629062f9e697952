package runner

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"time"
)

// lastApply is what the runner remembers of a workspace's last successful
// apply: enough to answer "is this already applied?" and "what are the
// outputs?" without starting terraform.
type lastApply struct {
	Hash      string                     `json:"hash"`
	PlanID    string                     `json:"plan_id,omitempty"`
	Owner     string                     `json:"owner,omitempty"`
	Outputs   map[string]json.RawMessage `json:"outputs"`
	AppliedAt time.Time                  `json:"applied_at"`
}

// fresh tells whether rec is the apply of hash, made less than maxAge
// before now (any age when maxAge is not positive).
func (rec *lastApply) fresh(hash string, maxAge time.Duration, now time.Time) bool {
	if rec == nil || rec.Hash == "" || rec.Hash != hash {
		return false
	}
	return maxAge <= 0 || now.Sub(rec.AppliedAt) < maxAge
}

// lastApplied reads the workspace's last apply; a missing or unreadable one is empty.
func (w *workspace) lastApplied() *lastApply {
	data, err := os.ReadFile(w.meta("last-apply.json"))
	if err != nil {
		return &lastApply{}
	}
	var rec lastApply
	if json.Unmarshal(data, &rec) != nil {
		return &lastApply{}
	}
	return &rec
}

func (w *workspace) saveLastApply(rec *lastApply) error {
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

// Seed records that job.Hash was applied with outputs, as kept outside
// the process (a plan record): a controller that starts trusts it, so an
// unchanged object costs no terraform process; drift checks are what
// look at the cloud. A last apply of this process is not overwritten.
func (r *Runner) Seed(job Job, outputs map[string]json.RawMessage, at time.Time) error {
	w, err := r.workspaceFor(job.Key)
	if err != nil {
		return err
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if rec := w.lastApplied(); rec.Hash != "" {
		return nil
	}
	return w.saveLastApply(&lastApply{Hash: job.Hash, Outputs: outputs, AppliedAt: at, Owner: job.Owner})
}
