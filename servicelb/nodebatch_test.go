package servicelb

import (
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// A rotation's taints, however slowly they come, are one batch until the
// nodes are quiet; a batch that never goes quiet ends at nodeBatchMost.
func TestNodeChangesGatherUntilQuiet(t *testing.T) {
	t0 := time.Date(2026, 12, 5, 9, 0, 0, 0, time.UTC)
	at := func(d time.Duration) time.Time { return t0.Add(d) }
	var b nodeChanges
	if d := b.gathering(t0); d != 0 {
		t.Fatalf("no change: gathering %s, want 0", d)
	}
	// Ten taints 400 ms apart: 3.6 s, never quiet for 500 ms.
	for i := range 10 {
		b.changed(at(time.Duration(i) * 400 * time.Millisecond))
		if d := b.gathering(at(time.Duration(i)*400*time.Millisecond + 300*time.Millisecond)); d != 200*time.Millisecond {
			t.Fatalf("taint %d: gathering %s 300 ms after it, want 200ms", i, d)
		}
	}
	if d := b.gathering(at(3600*time.Millisecond + nodeBatch)); d != 0 {
		t.Fatalf("quiet for %s: gathering %s, want 0", nodeBatch, d)
	}
	if d := b.gathering(at(4 * time.Second)); d != 0 {
		t.Fatalf("after the apply took the batch: gathering %s, want 0", d)
	}

	// A change every 100 ms from 10 s on: the batch ends at 15 s.
	for i := range 60 {
		now := at(10*time.Second + time.Duration(i)*100*time.Millisecond)
		b.changed(now)
		want := nodeBatch
		if left := at(15 * time.Second).Sub(now); left < want {
			want = max(left, 0)
		}
		if d := b.gathering(now); d != want {
			t.Fatalf("change at %s: gathering %s, want %s", now.Sub(t0), d, want)
		}
		if want == 0 {
			break
		}
	}
}

// Only what the pools decide from holds a batch: not a heartbeat.
func TestPoolsChange(t *testing.T) {
	node := func(edit func(*v1.Node)) *v1.Node {
		n := &v1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n", Labels: map[string]string{"pool": "a"}},
			Spec:   v1.NodeSpec{ProviderID: "example://ex-west-1a/i-1"},
			Status: v1.NodeStatus{Conditions: []v1.NodeCondition{{Type: v1.NodeReady, Status: v1.ConditionTrue}}}}
		if edit != nil {
			edit(n)
		}
		return n
	}
	now := metav1.Now()
	for name, tc := range map[string]struct {
		edit func(*v1.Node)
		want bool
	}{
		"a heartbeat":   {func(n *v1.Node) { n.Status.Conditions[0].LastHeartbeatTime = now }, false},
		"an annotation": {func(n *v1.Node) { n.Annotations = map[string]string{"x": "y"} }, false},
		"a taint": {func(n *v1.Node) {
			n.Spec.Taints = []v1.Taint{{Key: "ToBeDeletedByClusterAutoscaler", Effect: v1.TaintEffectNoSchedule}}
		}, true},
		"a cordon":        {func(n *v1.Node) { n.Spec.Unschedulable = true }, true},
		"a label":         {func(n *v1.Node) { n.Labels["pool"] = "b" }, true},
		"not Ready":       {func(n *v1.Node) { n.Status.Conditions[0].Status = v1.ConditionFalse }, true},
		"being deleted":   {func(n *v1.Node) { n.DeletionTimestamp = &now }, true},
		"no Ready at all": {func(n *v1.Node) { n.Status.Conditions = nil }, true},
	} {
		if got := poolsChange(node(nil), node(tc.edit)); got != tc.want {
			t.Errorf("%s: poolsChange %v, want %v", name, got, tc.want)
		}
	}
}
