package reviewpage

import (
	"context"
	"fmt"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/example/cloud-provider-example/internal/testcluster"
	"github.com/example/cloud-provider-example/internal/testkit"
	"github.com/example/cloud-provider-example/objectref"
	"github.com/example/cloud-provider-example/records"
)

// TestCacheFollowsRecords: against a real API server, the page's records
// are read once at start, then follow the ConfigMaps' changes (a new plan
// awaiting approval, its apply, a deleted record), each change announced to
// waiters and counted in the badge.
func TestCacheFollowsRecords(t *testing.T) {
	c := testcluster.Start(t)
	ns := "example-ccm"
	_, err := c.Client.CoreV1().Namespaces().Create(t.Context(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{})
	testkit.Must(t, err)
	store := records.NewStore(c.Client, ns, 0)
	put := func(ws, name string, outcome records.Outcome) {
		t.Helper()
		_, err := store.Update(t.Context(), ws, func(r *records.Record) error {
			r.Object = objectref.Ref{Kind: objectref.KindService, Namespace: "shop", Name: name}
			r.Files = map[string]string{"main.tf": mainV1}
			r.Plans = []records.Plan{{ID: "plan-0000000000a1", Outcome: outcome, PlannedAt: time.Now()}}
			return nil
		})
		testkit.Must(t, err)
	}
	put("shop-web-1a2b3c4d", "web", records.Applied)

	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	cc := newCache(store, c.Client, ns)
	testkit.Must(t, cc.start(ctx))
	if all := cc.all(); len(all) != 1 || len(Queue(all)) != 0 || cc.queued() != 0 {
		t.Fatalf("at start: %d records, queue %v, badge %d", len(all), Queue(all), cc.queued())
	}

	changed := cc.wait()
	put("shop-api-5e6f7a8b", "api", records.AwaitingApproval)
	select {
	case <-changed:
	case <-time.After(30 * time.Second):
		t.Fatal("no change announced for a new record")
	}
	testkit.Eventually(t, 30*time.Second, "the new plan in the queue", func() error {
		if q := Queue(cc.all()); len(q) != 1 || q[0].Object.Name != "api" || cc.queued() != 1 {
			return fmt.Errorf("queue %v, badge %d", q, cc.queued())
		}
		return nil
	})
	// Its apply leaves the queue, and the badge with it.
	put("shop-api-5e6f7a8b", "api", records.Applied)
	testkit.Eventually(t, 30*time.Second, "the applied plan out of the badge", func() error {
		if n := cc.queued(); n != 0 {
			return fmt.Errorf("badge %d", n)
		}
		return nil
	})
	put("shop-web-1a2b3c4d", "web", records.AwaitingApproval)
	testkit.Eventually(t, 30*time.Second, "the other plan in the badge", func() error {
		if n := cc.queued(); n != 1 {
			return fmt.Errorf("badge %d", n)
		}
		return nil
	})
	testkit.Must(t, store.Delete(t.Context(), "shop-web-1a2b3c4d"))
	testkit.Eventually(t, 30*time.Second, "the deleted record gone", func() error {
		if r := cc.get("shop-web-1a2b3c4d"); r != nil || len(cc.all()) != 1 || cc.queued() != 0 {
			return fmt.Errorf("%d records, badge %d", len(cc.all()), cc.queued())
		}
		return nil
	})
}
