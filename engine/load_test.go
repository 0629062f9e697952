package engine_test

import (
	"errors"
	"testing"

	corev1 "k8s.io/api/core/v1"

	"github.com/example/cloud-provider-example/annotations"
	"github.com/example/cloud-provider-example/engine"
	"github.com/example/cloud-provider-example/internal/testkit"
	"github.com/example/cloud-provider-example/internal/tftest"
	"github.com/example/cloud-provider-example/lbmodel"
	"github.com/example/cloud-provider-example/runner"
)

// A controller restart (a new engine, an empty work directory) finds the
// plan awaiting approval in the plan store: the same id waits, and
// approving it applies it without a new plan. On both engines: the saved
// plan file is restored into a new workspace and applied there.
func TestPendingPlanSurvivesRestart(t *testing.T) {
	tftest.OnDistributions(t, testPendingPlanSurvivesRestart)
}

func testPendingPlanSurvivesRestart(t *testing.T, tc tftest.Toolchain) {
	store := newMemStore()
	f := newFixtureOn(t, tc, 2, engine.Options{Plans: store})
	nodes := []*corev1.Node{f.node(t, "node-a")}
	svc := service("restart", 80)
	manual := annotations.ApplyManual
	id, out := planned(t, f.eng, svc, nodes)
	store.keep(t, string(svc.UID), out)

	next := f.engine(t, 2, engine.Options{Plans: store})
	procs := next.Runner().Processes()
	again, out := planned(t, next, svc, nodes)
	if again != id || !out.Restored || out.Planned != nil {
		t.Fatalf("after restart: %+v", out)
	}
	if p := next.Runner().Processes(); p["plan"] != procs["plan"] {
		t.Fatalf("the restarted controller planned again: %v", p)
	}
	lb, out, err := next.ReconcileLoadBalancer(testkit.Context(t), annotations.Read(svc), nodes, reviewed(manual, id))
	if err != nil || out.Applied == nil || out.Applied.ID != id || out.Planned != nil || lb == nil || f.countLBs(t) != 1 {
		t.Fatalf("approved after restart: %+v %v", out, err)
	}
}

// A workspace recorded for an earlier Service of the same name is refused.
func TestOwnerMismatchRefused(t *testing.T) {
	store := newMemStore()
	f := newFixtureWith(t, 2, engine.Options{Plans: store})
	nodes := []*corev1.Node{f.node(t, "node-a")}
	svc := service("owned", 80)
	_, out := planned(t, f.eng, svc, nodes)
	store.keep(t, "an-earlier-uid", out)
	next := f.engine(t, 2, engine.Options{Plans: store})
	if _, _, err := next.ReconcileLoadBalancer(testkit.Context(t), annotations.Read(svc), nodes, auto); err == nil || !errors.Is(err, runner.ErrOwnerMismatch) {
		t.Fatalf("want owner mismatch, got %v", err)
	}
	if f.countLBs(t) != 0 {
		t.Fatal("a load balancer was created for the wrong owner")
	}
}

// A controller that starts (a new pod: an empty work directory) answers
// an unchanged Service from its plan record, without terraform; a changed
// one is planned as usual.
func TestRestartRunsNoTerraform(t *testing.T) {
	store := newMemStore()
	f := newFixtureWith(t, 2, engine.Options{Plans: store})
	nodes := []*corev1.Node{f.node(t, "node-a")}
	svc := service("steady", 80)
	lb, out, err := f.eng.ReconcileLoadBalancer(testkit.Context(t), annotations.Read(svc), nodes, auto)
	if err != nil {
		t.Fatal(err)
	}
	store.keep(t, string(svc.UID), out)
	routes := []lbmodel.Route{{Destination: "10.244.1.0/24", TargetInstanceID: instanceID(t, nodes[0]), NodeName: "node-a"}}
	_, out, err = f.eng.ReconcileRoutes(testkit.Context(t), routes, auto)
	if err != nil {
		t.Fatal(err)
	}
	store.keep(t, "", out)

	next := f.engine(t, 2, engine.Options{Plans: store})
	again, out, err := next.ReconcileLoadBalancer(testkit.Context(t), annotations.Read(svc), nodes, auto)
	if err != nil || !out.Result.FastPath || again.IPv4 != lb.IPv4 {
		t.Fatalf("unchanged Service after a restart: %+v %+v %v", again, out, err)
	}
	if got, exists, err := next.GetLoadBalancer(testkit.Context(t), annotations.Read(svc)); err != nil || !exists || got.IPv4 != lb.IPv4 {
		t.Fatalf("get after a restart: %+v %v %v", got, exists, err)
	}
	if listed, err := next.Routes(testkit.Context(t)); err != nil || len(listed) != 1 {
		t.Fatalf("routes after a restart: %+v %v", listed, err)
	}
	if _, out, err = next.ReconcileRoutes(testkit.Context(t), routes, auto); err != nil || !out.Result.FastPath {
		t.Fatalf("unchanged route set after a restart: %+v %v", out, err)
	}
	if p := next.Runner().Processes(); len(p) != 0 {
		t.Fatalf("terraform ran after a restart with nothing changed: %v", p)
	}
	svc.Spec.Ports[0].Port = 81
	if _, out, err = next.ReconcileLoadBalancer(testkit.Context(t), annotations.Read(svc), nodes, auto); err != nil || out.Applied == nil || out.Applied.Summary.Change != 1 {
		t.Fatalf("changed Service after a restart: %+v %v", out, err)
	}
}
