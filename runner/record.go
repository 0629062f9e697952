package runner

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"time"
)

// record is what the runner remembers of a workspace's last successful
// apply: enough to answer "is this already applied?" and "what are the
// outputs?" without starting terraform.
type record struct {
	Hash      string                     `json:"hash"`
	PlanID    string                     `json:"plan_id,omitempty"`
	Owner     string                     `json:"owner,omitempty"`
	Outputs   map[string]json.RawMessage `json:"outputs"`
	AppliedAt time.Time                  `json:"applied_at"`
}

func (rec *record) fresh(hash string, maxAge time.Duration) bool {
	if rec == nil || rec.Hash == "" || rec.Hash != hash {
		return false
	}
	return maxAge <= 0 || time.Since(rec.AppliedAt) < maxAge
}

// record reads the workspace's record; a missing or unreadable one is empty.
func (w *workspace) record() *record {
	data, err := os.ReadFile(w.meta("last-apply.json"))
	if err != nil {
		return &record{}
	}
	var rec record
	if json.Unmarshal(data, &rec) != nil {
		return &record{}
	}
	return &rec
}

func (w *workspace) saveRecord(rec *record) error {
	data, err := json.Marshal(rec)
	if err != nil {
		return err
	}
	if err := writeIfChanged(w.meta("last-apply.json"), data, 0o600); err != nil {
		return fmt.Errorf("workspace %s: save record: %w", w.key, err)
	}
	return nil
}

func (w *workspace) clearRecord() error {
	if err := os.Remove(w.meta("last-apply.json")); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("workspace %s: clear record: %w", w.key, err)
	}
	return nil
}

// Seed records that job.Hash was applied with outputs, as kept outside
// the process (a plan record): a controller that starts trusts it, so an
// unchanged object costs no terraform process; drift checks are what
// look at the cloud. A record of this process is not overwritten.
func (r *Runner) Seed(job Job, outputs map[string]json.RawMessage, at time.Time) error {
	w, err := r.workspaceFor(job.Key)
	if err != nil {
		return err
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if rec := w.record(); rec.Hash != "" {
		return nil
	}
	return w.saveRecord(&record{Hash: job.Hash, Outputs: outputs, AppliedAt: at, Owner: job.Owner})
}
