package review

import (
	"context"
	"errors"
	"fmt"

	"github.com/example/cloud-provider-example/engine"
	"github.com/example/cloud-provider-example/policy"
	"github.com/example/cloud-provider-example/records"
)

var _ engine.PlanStore = (*Board)(nil)

// Load is the engine's PlanStore: what the record of workspace keeps of
// the last apply and of the plan that waits (awaiting approval, or
// planned under plan-only), with its saved file. A controller that starts
// answers unchanged objects from it without terraform, and a plan keeps
// waiting under its id.
func (b *Board) Load(ctx context.Context, workspace, owner string) (*engine.Kept, error) {
	if b.store == nil {
		return nil, nil
	}
	r, err := b.warm.get(ctx, b.store, workspace)
	if err != nil || r == nil {
		return nil, err
	}
	if r.Object.UID != "" && owner != "" && r.Object.UID != owner {
		return nil, fmt.Errorf("workspace %s holds the state of an earlier %s of this name (uid %s), whose load balancer was never destroyed: "+
			"delete that state (or restore the earlier object) first: %w", workspace, r.Object.Kind, r.Object.UID, engine.ErrOwnerMismatch)
	}
	kept := &engine.Kept{}
	if a := r.Applied; a != nil {
		kept.Applied = a
	}
	for _, p := range r.Plans {
		if p.Outcome != records.AwaitingApproval && p.Outcome != records.Planned {
			continue
		}
		data, err := b.store.SavedPlan(ctx, workspace, p.ID)
		if errors.Is(err, records.ErrNotFound) {
			break
		}
		if err != nil {
			return nil, err
		}
		sp := &engine.StoredPlan{Data: data, Plan: engine.Plan{
			ID: p.ID, FileHash: p.SavedSHA256, Hash: p.HCLHash, Destroy: p.Kind == records.KindDestroy, Summary: p.Summary, Created: p.PlannedAt,
		}}
		for _, vd := range p.Verdicts {
			sp.Verdicts = append(sp.Verdicts, engine.Verdict{Rule: vd.Rule, Effect: policy.Effect(vd.Effect), Message: vd.Message})
		}
		kept.Pending = sp
		break
	}
	return kept, nil
}
