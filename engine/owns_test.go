package engine_test

import (
	"errors"
	"sync/atomic"
	"testing"

	corev1 "k8s.io/api/core/v1"

	"github.com/example/cloud-provider-example/annotations"
	"github.com/example/cloud-provider-example/engine"
	"github.com/example/cloud-provider-example/internal/testkit"
	"github.com/example/cloud-provider-example/objectref"
)

// A replica that does not own an object (Options.Owns: sharding) neither
// plans nor applies it: before a plan, after a plan (auto, below), and
// again before a saved plan approved meanwhile is applied. The plan keeps waiting for the replica
// that owns it; ForgetUnowned drops what the engine knew of it.
func TestNotOwnedIsNeitherPlannedNorApplied(t *testing.T) {
	var owns atomic.Bool
	f := newFixtureWith(t, 2, engine.Options{Owns: func(objectref.Ref) bool { return owns.Load() }})
	nodes := []*corev1.Node{f.node(t, "node-a")}
	svc := service("sharded", 80)
	manual := annotations.ApplyManual

	_, _, err := f.eng.ReconcileLoadBalancer(testkit.Context(t), annotations.Read(svc), nodes, reviewed(manual))
	if !errors.Is(err, engine.ErrNotOwner) || !errors.Is(err, engine.ErrSkipped) || total(f.eng.Runner().Processes()) != 0 {
		t.Fatalf("not owned: err %v, processes %v", err, f.eng.Runner().Processes())
	}

	owns.Store(true)
	id, _ := planned(t, f.eng, svc, nodes)

	// Approved, but the shard moved away meanwhile: nothing is applied.
	owns.Store(false)
	plans := f.eng.Runner().Processes()["plan"]
	_, _, err = f.eng.ReconcileLoadBalancer(testkit.Context(t), annotations.Read(svc), nodes, reviewed(manual, id))
	if !errors.Is(err, engine.ErrNotOwner) || f.countLBs(t) != 0 || f.eng.Runner().Processes()["plan"] != plans {
		t.Fatalf("approved, not owned: err %v, %d LBs, %d plans more", err, f.countLBs(t), f.eng.Runner().Processes()["plan"]-plans)
	}
	if n := f.eng.ForgetUnowned(); n != 1 {
		t.Fatalf("ForgetUnowned forgot %d objects, want the Service", n)
	}

	// Back: planned again (nothing kept in memory), the same plan by its
	// id (stable), and the approval applies it.
	owns.Store(true)
	_, out, err := f.eng.ReconcileLoadBalancer(testkit.Context(t), annotations.Read(svc), nodes, reviewed(manual, id))
	if err != nil || out.Applied == nil || out.Applied.ID != id || f.countLBs(t) != 1 {
		t.Fatalf("owned again: %+v %v", out, err)
	}
}

// A shard that moves while terraform plans (auto, whose plan is applied
// in the same run) is not applied by the replica that planned: the plan
// is discarded, and the replica that took the shard plans its own (the
// two applies met on the state lock, one failing in the tenant's events;
// TestShardHandOverKeepsThePlan killed the wrong one).
func TestShardMovedDuringThePlanIsNotApplied(t *testing.T) {
	var looks atomic.Int32
	moves := func(ref objectref.Ref) bool { return ref.Kind != objectref.KindService || looks.Add(1) == 1 }
	var owns atomic.Pointer[func(objectref.Ref) bool]
	owns.Store(&moves)
	f := newFixtureWith(t, 2, engine.Options{Owns: func(ref objectref.Ref) bool { return (*owns.Load())(ref) }})
	nodes := []*corev1.Node{f.node(t, "node-a")}
	svc := service("moving", 80)

	applies := f.eng.Runner().Processes()["apply"]
	_, out, err := f.eng.ReconcileLoadBalancer(testkit.Context(t), annotations.Read(svc), nodes, reviewed(annotations.ApplyAuto))
	if !errors.Is(err, engine.ErrNotOwner) || out.Applied != nil || f.countLBs(t) != 0 || f.eng.Runner().Processes()["apply"] != applies {
		t.Fatalf("moved during the plan: err %v, applied %v, %d LBs, %d applies more", err, out.Applied, f.countLBs(t), f.eng.Runner().Processes()["apply"]-applies)
	}
	if looks.Load() != 2 {
		t.Fatalf("ownership looked at %d times, want before and after the plan", looks.Load())
	}

	stays := func(objectref.Ref) bool { return true }
	owns.Store(&stays)
	if _, out, err := f.eng.ReconcileLoadBalancer(testkit.Context(t), annotations.Read(svc), nodes, reviewed(annotations.ApplyAuto)); err != nil || out.Applied == nil || f.countLBs(t) != 1 {
		t.Fatalf("owned: %+v %v", out, err)
	}
}
