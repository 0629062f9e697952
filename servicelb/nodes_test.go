package servicelb

import (
	"slices"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/example/cloud-provider-example/deregistration"
	"github.com/example/cloud-provider-example/engine"
	"github.com/example/cloud-provider-example/records"
	"github.com/example/cloud-provider-example/review/reviewtest"
)

// What an apply of the pools made true is kept on their record: the
// nodes the floor keeps waiting, those draining until their delay ends
// (dropped when they come back); a pool left empty is said once.
func TestAfterPoolsRecordsLeavingNodes(t *testing.T) {
	f := newBoardFixture(t, "")
	l := &targetPools{shared: &shared{cfg: f.cfg, board: f.board, lifecycle: newNodeLifecycle(f.cfg)}}
	const ws = "prod-targetpools"
	subj := f.board.PoolsSubject(ws, records.KindChange)
	applied := &engine.Outcome{Workspace: ws, Result: &engine.Result{}}
	delay := 2 * time.Minute

	start := time.Now()
	l.lifecycle.decide("all", deregistration.Decision{
		Targets: []string{"i-a", "i-c"},
		Removed: []deregistration.Departure{{Node: "node-b", ID: "i-b", Reason: deregistration.ReasonDrain}},
		Waiting: []deregistration.Departure{{Node: "node-c", ID: "i-c", Reason: deregistration.ReasonAutoscaler}},
	}, delay)
	l.afterPools(t.Context(), subj, applied, nil)
	got := f.get(t, ws).Leaving
	if len(got) != 2 || got[0].Node != "node-b" || got[0].State != records.LeavingDraining || got[1].Node != "node-c" || got[1].State != records.LeavingWaiting {
		t.Fatalf("leaving = %+v, want node-b draining and node-c waiting", got)
	}
	if u := got[0].Until; u == nil || u.Before(start.Add(delay)) || u.After(time.Now().Add(delay)) {
		t.Errorf("node-b drains until %v, want the apply's time plus %s", u, delay)
	}

	// A run that failed records nothing.
	l.lifecycle.decide("all", deregistration.Decision{Targets: []string{"i-a"}, Picked: 2}, 30*time.Second)
	l.afterPools(t.Context(), subj, nil, engine.ErrInUse)
	if got := f.get(t, ws).Leaving; len(got) != 2 {
		t.Fatalf("a failed run changed the record: %+v", got)
	}

	// node-b is back; node-c went; the pool keeps node-a.
	l.lifecycle.decide("all", deregistration.Decision{Targets: []string{"i-a", "i-b"}, Picked: 3, Base: 3}, 30*time.Second)
	l.afterPools(t.Context(), subj, applied, nil)
	if got := f.get(t, ws).Leaving; len(got) != 0 {
		t.Fatalf("leaving = %+v, want none", got)
	}
	f.takeEvents()

	// Every node gone unready and leaving: empty, said once.
	for range 2 {
		l.lifecycle.decide("all", deregistration.Decision{Picked: 3}, 30*time.Second)
		l.afterPools(t.Context(), subj, applied, nil)
	}
	if evs := reviewtest.Reasons(f.takeEvents()); !slices.Equal(evs, []string{"TargetPoolEmpty"}) {
		t.Errorf("events %v, want one TargetPoolEmpty", evs)
	}
}

// What was said of a node goes with the node; a pool's emptiness stays.
func TestForgetGone(t *testing.T) {
	n := newNodeLifecycle(reviewtest.Config(t, ""))
	n.said["old-1\x00all"], n.said["new-1\x00all"], n.said["\x00empty\x00all"] = "a", "b", "empty"
	n.forgetGone([]*corev1.Node{{ObjectMeta: metav1.ObjectMeta{Name: "new-1"}}})
	if _, ok := n.said["old-1\x00all"]; ok || len(n.said) != 2 {
		t.Errorf("said = %q, want old-1 forgotten", n.said)
	}
}
