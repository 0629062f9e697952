package review

import (
	"context"
	"slices"
	"time"

	"k8s.io/klog/v2"

	"github.com/example/cloud-provider-example/records"
)

// MoveRecord moves a record from a state's legacy workspace to its
// new one, with the state (engine.Options.Migrated). A plan that waited
// under the legacy workspace does not wait any more: its saved file names
// the legacy state, so it is superseded and planned again.
func (b *Board) MoveRecord(ctx context.Context, legacy, workspace string) {
	if b.store == nil {
		return
	}
	old, err := b.store.Get(ctx, legacy)
	if err != nil || old == nil {
		if err != nil {
			klog.ErrorS(err, "cannot read the plan record of a moved state", "legacyWorkspace", legacy)
		}
		return
	}
	// The plans' texts are kept beside the record, not in it: they move
	// too (a plan without Text would have none under the new key).
	texts := map[string]string{}
	for _, p := range old.Plans {
		if text, err := b.store.PlanText(ctx, legacy, p.ID); err == nil {
			texts[p.ID] = text
		}
	}
	now := time.Now()
	_, err = b.store.Update(ctx, workspace, func(r *records.Record) error {
		if len(r.Plans) > 0 {
			return nil // the new record is in use: keep it
		}
		*r = *old
		r.Workspace = workspace
		r.Plans = slices.Clone(old.Plans)
		for i := range r.Plans {
			r.Plans[i].Text = texts[r.Plans[i].ID]
			if p := &r.Plans[i]; p.Outcome == records.AwaitingApproval || p.Outcome == records.Planned {
				p.Outcome, p.Error, p.DecidedAt = records.Superseded, "the state moved to a new key: planned again", &now
			}
		}
		return nil
	})
	if err != nil {
		klog.ErrorS(err, "cannot move a plan record", "from", legacy, "to", workspace)
		return
	}
	b.deleteRecord(ctx, legacy)
	klog.InfoS("plan record moved with its state", "from", legacy, "to", workspace)
}
