package review

import (
	"context"
	"time"

	"k8s.io/klog/v2"

	"github.com/example/cloud-provider-example/objectref"
	"github.com/example/cloud-provider-example/records"
	"github.com/example/cloud-provider-example/reviewapi"
)

// Approvals and unlock requests that can no longer do anything are
// collected: those naming an object without a record (deleted, an earlier
// object of the same name, a typo), an approval of a plan its record does
// not hold waiting, an unlock of a lock its record does not show. Used
// ones go as they are used (their record and the audit log keep them).

// collectAfter is how old a review object must be before it is collected:
// one made just before its plan is recorded waits for the record.
const collectAfter = 10 * time.Minute

// collectEvery is how often the controller collects.
const collectEvery = 5 * time.Minute

// collect deletes the review objects that can no longer do anything.
func (b *Board) collect(ctx context.Context, now time.Time) error {
	if b.store == nil {
		return nil
	}
	all, err := b.store.List(ctx)
	if err != nil {
		return err
	}
	byRef := map[objectref.Ref]*records.Record{}
	for _, r := range all {
		byRef[r.Object] = r
	}
	var plans, unlocks []string
	for _, pa := range list(b.approvals.plans, reviewapi.PlanApprovalFrom) {
		if now.Sub(pa.Created) < collectAfter {
			continue
		}
		r := byRef[pa.Spec.Object]
		if p := findPlan(r, pa.Spec.PlanID); p == nil || (p.Outcome != records.AwaitingApproval && p.Outcome != records.Planned) {
			plans = append(plans, pa.Name)
		}
	}
	for _, u := range list(b.approvals.unlocks, reviewapi.StateUnlockFrom) {
		if now.Sub(u.Created) < collectAfter {
			continue
		}
		if r := byRef[u.Spec.Object]; r == nil || r.Lock == nil || r.Lock.ID != u.Spec.LockID {
			unlocks = append(unlocks, u.Name)
		}
	}
	if len(plans)+len(unlocks) > 0 {
		klog.InfoS("review objects collected: they can no longer approve or unlock anything", "planApprovals", plans, "stateUnlocks", unlocks)
	}
	b.approvals.remove(ctx, reviewapi.PlanApprovals, plans...)
	b.approvals.remove(ctx, reviewapi.StateUnlocks, unlocks...)
	return nil
}

func findPlan(r *records.Record, id string) *records.Plan {
	if r == nil {
		return nil
	}
	return r.Find(id)
}

// collectLoop collects every collectEvery until stop.
func (b *Board) collectLoop(stop <-chan struct{}) {
	t := time.NewTicker(collectEvery)
	defer t.Stop()
	for {
		select {
		case <-stop:
			return
		case now := <-t.C:
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			if err := b.collect(ctx, now); err != nil {
				klog.ErrorS(err, "cannot collect unused approvals and unlock requests")
			}
			cancel()
		}
	}
}
