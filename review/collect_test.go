package review

import (
	"slices"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/example/cloud-provider-example/internal/testkit"
	"github.com/example/cloud-provider-example/records"
	"github.com/example/cloud-provider-example/reviewapi"
)

// TestCollect: review objects that can no longer approve or unlock
// anything go once old enough; the others stay.
func TestCollect(t *testing.T) {
	now := time.Now()
	old, young := now.Add(-time.Hour), now.Add(-time.Minute)
	earlier := web
	earlier.UID = "uid-0" // an earlier Service of the same name: no record
	lockedOld := stateUnlockObj("u-held", web, "lock-1", "bob")
	lockedOld.SetCreationTimestamp(metav1.NewTime(old))
	goneLock := stateUnlockObj("u-gone", web, "lock-0", "bob")
	goneLock.SetCreationTimestamp(metav1.NewTime(old))
	f := newReviewFixture(t, "", false,
		approvalObj("waiting", web, "plan-aaaaaaaaaaaa", "alice", old),
		approvalObj("applied", web, "plan-bbbbbbbbbbbb", "alice", old),
		approvalObj("unknown-plan", web, "plan-cccccccccccc", "alice", old),
		approvalObj("no-record", earlier, "plan-aaaaaaaaaaaa", "alice", old),
		approvalObj("young", earlier, "plan-dddddddddddd", "alice", young),
		lockedOld, goneLock)
	_, err := f.store.Update(t.Context(), webWS, func(r *records.Record) error {
		r.Object, r.Workspace = web, webWS
		r.Plans = []records.Plan{
			{ID: "plan-aaaaaaaaaaaa", Kind: records.KindChange, Outcome: records.AwaitingApproval, PlannedAt: old},
			{ID: "plan-bbbbbbbbbbbb", Kind: records.KindChange, Outcome: records.Applied, PlannedAt: old},
		}
		r.Lock = &records.LockInfo{ID: "lock-1", SeenAt: old}
		return nil
	})
	testkit.Must(t, err)

	testkit.Must(t, f.collect(t.Context(), now))
	if got := approvalNames(t, f); !slices.Equal(got, []string{"waiting", "young"}) {
		t.Errorf("PlanApprovals left %v; want the one of the plan waiting and the young one", got)
	}
	l, err := f.dyn.Resource(reviewapi.StateUnlocks).Namespace("example-ccm").List(t.Context(), metav1.ListOptions{})
	testkit.Must(t, err)
	if len(l.Items) != 1 || l.Items[0].GetName() != "u-held" {
		t.Errorf("StateUnlocks left %v; want u-held, of the lock the record shows", l.Items)
	}
}
