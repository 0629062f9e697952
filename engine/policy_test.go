package engine_test

import (
	"errors"
	"testing"

	corev1 "k8s.io/api/core/v1"

	"github.com/example/cloud-provider-example/annotations"
	"github.com/example/cloud-provider-example/engine"
	"github.com/example/cloud-provider-example/exampleapi"
)

func awaiting(t *testing.T, err error) string {
	t.Helper()
	var wait *engine.AwaitingApprovalError
	if !errors.As(err, &wait) {
		t.Fatalf("want AwaitingApprovalError, got %v", err)
	}
	return wait.PlanID
}

func TestManualPolicy(t *testing.T) {
	f := newFixture(t, 2)
	nodes := []*corev1.Node{f.node(t, "node-a")}
	svc := service("gated", 80)
	manual := annotations.ApplyManual
	countLBs := func() int {
		l, err := f.api.ListLoadBalancers(ctxT(t), exampleapi.LoadBalancerFilter{})
		if err != nil {
			t.Fatal(err)
		}
		return len(l)
	}

	// A plan is made and recorded; nothing changes in the cloud.
	_, out, err := f.eng.ReconcileLoadBalancer(ctxT(t), svc, nodes, manual, "")
	id := awaiting(t, err)
	if out.Planned == nil || out.Planned.ID != id || out.Planned.Text == "" || countLBs() != 0 {
		t.Fatalf("first reconcile: %+v, %d LBs", out, countLBs())
	}
	// Asking again does not plan again.
	procs := total(f.eng.Runner().Processes())
	if _, out, err = f.eng.ReconcileLoadBalancer(ctxT(t), svc, nodes, manual, ""); awaiting(t, err) != id || out.Planned != nil {
		t.Fatalf("second reconcile re-planned: %+v", out)
	}
	if total(f.eng.Runner().Processes()) != procs {
		t.Fatal("waiting for approval started terraform")
	}
	// A wrong id is ignored and reported.
	_, out, err = f.eng.ReconcileLoadBalancer(ctxT(t), svc, nodes, manual, "plan-000000000000")
	if awaiting(t, err) != id || out.IgnoredApproval != "plan-000000000000" || countLBs() != 0 {
		t.Fatalf("wrong id: %+v", out)
	}
	// The Service changes: the pending plan is superseded by a new one.
	svc.Spec.Ports[0].Port = 8080
	_, out, err = f.eng.ReconcileLoadBalancer(ctxT(t), svc, nodes, manual, id)
	id2 := awaiting(t, err)
	if id2 == id || out.Superseded == nil || out.Superseded.ID != id || countLBs() != 0 {
		t.Fatalf("changed Service: %+v", out)
	}
	// The right id applies exactly that plan.
	lb, out, err := f.eng.ReconcileLoadBalancer(ctxT(t), svc, nodes, manual, id2)
	if err != nil || out.Applied == nil || out.Applied.ID != id2 || lb == nil || lb.IPv4 == "" || countLBs() != 1 {
		t.Fatalf("approved: lb=%+v out=%+v err=%v", lb, out, err)
	}
	// Applied state is stable: the same approval does nothing more.
	if _, out, err = f.eng.ReconcileLoadBalancer(ctxT(t), svc, nodes, manual, id2); err != nil || out.Planned != nil {
		t.Fatalf("after apply: %+v %v", out, err)
	}

	// Plan, then the cloud changes out of band before approval: approving
	// the old plan re-plans and waits again.
	svc.Spec.Ports[0].Port = 9090
	_, _, err = f.eng.ReconcileLoadBalancer(ctxT(t), svc, nodes, manual, "")
	id3 := awaiting(t, err)
	cloud, _ := f.api.ListLoadBalancers(ctxT(t), exampleapi.LoadBalancerFilter{})
	if _, err := f.api.UpdateLoadBalancer(ctxT(t), cloud[0].ID, exampleapi.UpdateLoadBalancerRequest{
		Type: "lb-large", Algorithm: "round_robin", Listeners: cloud[0].Listeners, Targets: cloud[0].Targets, Tags: cloud[0].Tags, HealthCheck: cloud[0].HealthCheck,
	}, 0); err != nil {
		t.Fatal(err)
	}
	_, out, err = f.eng.ReconcileLoadBalancer(ctxT(t), svc, nodes, manual, id3)
	id4 := awaiting(t, err)
	if id4 == id3 || out.Superseded == nil || out.Applied != nil {
		t.Fatalf("cloud changed after planning: %+v", out)
	}
	if lb, _ := f.api.GetLoadBalancer(ctxT(t), cloud[0].ID); lb.Listeners[0].Port != 8080 {
		t.Fatalf("the stale plan was applied: %+v", lb.Listeners)
	}

	// Deletion waits for approval of the destroy plan.
	out, err = f.eng.RemoveLoadBalancer(ctxT(t), svc, manual, "")
	did := awaiting(t, err)
	if !out.Awaiting.Destroy || countLBs() != 1 {
		t.Fatalf("destroy under manual: %+v, %d LBs", out, countLBs())
	}
	if out, err = f.eng.RemoveLoadBalancer(ctxT(t), svc, manual, did); err != nil || out.Applied == nil || countLBs() != 0 {
		t.Fatalf("approved destroy: %+v %v, %d LBs", out, err, countLBs())
	}
}

func TestPlanOnlyNeverApplies(t *testing.T) {
	f := newFixture(t, 2)
	nodes := []*corev1.Node{f.node(t, "node-a")}
	svc := service("dry", 80)
	_, out, err := f.eng.ReconcileLoadBalancer(ctxT(t), svc, nodes, annotations.ApplyPlanOnly, "")
	id := awaiting(t, err)
	// Even "approving" it does not apply under plan-only.
	if _, _, err = f.eng.ReconcileLoadBalancer(ctxT(t), svc, nodes, annotations.ApplyPlanOnly, id); awaiting(t, err) != id {
		t.Fatalf("plan-only approval: %v", err)
	}
	if l, _ := f.api.ListLoadBalancers(ctxT(t), exampleapi.LoadBalancerFilter{}); len(l) != 0 || out.Planned.Summary.Add != 1 {
		t.Fatalf("plan-only changed the cloud: %d LBs, %+v", len(l), out.Planned.Summary)
	}
}
