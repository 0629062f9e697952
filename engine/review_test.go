package engine_test

import (
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"

	corev1 "k8s.io/api/core/v1"

	"github.com/example/cloud-provider-example/annotations"
	"github.com/example/cloud-provider-example/engine"
	"github.com/example/cloud-provider-example/exampleapi"
	"github.com/example/cloud-provider-example/internal/testkit"
	"github.com/example/cloud-provider-example/internal/tftest"
	"github.com/example/cloud-provider-example/policy"
)

// On both engines (terraform and tofu).
func TestManualPolicy(t *testing.T) { tftest.OnDistributions(t, testManualPolicy) }

func testManualPolicy(t *testing.T, tc tftest.Toolchain) {
	f := newFixtureOn(t, tc, 2, engine.Options{PlanText: true})
	nodes := []*corev1.Node{f.node(t, "node-a")}
	svc := service("gated", 80)
	manual := annotations.ApplyManual

	// A plan is made and recorded; nothing changes in the cloud.
	id, out := planned(t, f.eng, svc, nodes)
	if out.Planned == nil || out.Planned.ID != id || out.Planned.Text == "" || f.countLBs(t) != 0 {
		t.Fatalf("first reconcile: %+v, %d LBs", out, f.countLBs(t))
	}
	// Asking again does not plan again.
	procs := total(f.eng.Runner().Processes())
	if again, out := planned(t, f.eng, svc, nodes); again != id || out.Planned != nil {
		t.Fatalf("second reconcile re-planned: %+v", out)
	}
	if total(f.eng.Runner().Processes()) != procs {
		t.Fatal("waiting for approval started terraform")
	}
	// An approval of another plan approves nothing.
	if _, _, err := f.eng.ReconcileLoadBalancer(testkit.Context(t), annotations.Read(svc), nodes, reviewed(manual, "plan-000000000000")); awaiting(t, err) != id || f.countLBs(t) != 0 {
		t.Fatalf("wrong id: %v", err)
	}
	// The Service changes: the pending plan is superseded by a new one.
	svc.Spec.Ports[0].Port = 8080
	_, out, err := f.eng.ReconcileLoadBalancer(testkit.Context(t), annotations.Read(svc), nodes, reviewed(manual, id))
	id2 := awaiting(t, err)
	if id2 == id || out.Superseded == nil || out.Superseded.ID != id || f.countLBs(t) != 0 {
		t.Fatalf("changed Service: %+v", out)
	}
	// Its approval applies exactly that plan.
	lb, out, err := f.eng.ReconcileLoadBalancer(testkit.Context(t), annotations.Read(svc), nodes, reviewed(manual, id2))
	if err != nil || out.Applied == nil || out.Applied.ID != id2 || lb == nil || lb.IPv4 == "" || f.countLBs(t) != 1 {
		t.Fatalf("approved: lb=%+v out=%+v err=%v", lb, out, err)
	}
	if len(out.Approval.Approvers) != 1 || out.Approval.Approvers[0] != "alice" {
		t.Fatalf("approvers not reported: %+v", out.Approval)
	}
	// Applied state is stable: the same approval does nothing more.
	if _, out, err = f.eng.ReconcileLoadBalancer(testkit.Context(t), annotations.Read(svc), nodes, reviewed(manual, id2)); err != nil || out.Planned != nil {
		t.Fatalf("after apply: %+v %v", out, err)
	}

	// Plan, then the cloud changes out of band before approval: approving
	// the old plan re-plans and waits again.
	svc.Spec.Ports[0].Port = 9090
	id3, _ := planned(t, f.eng, svc, nodes)
	cloud, _ := f.api.ListLoadBalancers(testkit.Context(t), exampleapi.LoadBalancerFilter{})
	if _, err := f.api.UpdateLoadBalancer(testkit.Context(t), cloud[0].ID, exampleapi.UpdateLoadBalancerRequest{
		Type: "lb-large", Algorithm: "round_robin", Listeners: cloud[0].Listeners, Targets: cloud[0].Targets, Tags: cloud[0].Tags, HealthCheck: cloud[0].HealthCheck,
	}, 0); err != nil {
		t.Fatal(err)
	}
	_, out, err = f.eng.ReconcileLoadBalancer(testkit.Context(t), annotations.Read(svc), nodes, reviewed(manual, id3))
	id4 := awaiting(t, err)
	if id4 == id3 || out.Superseded == nil || out.Applied != nil {
		t.Fatalf("cloud changed after planning: %+v", out)
	}
	if lb, _ := f.api.GetLoadBalancer(testkit.Context(t), cloud[0].ID); lb.Listeners[0].Port != 8080 {
		t.Fatalf("the stale plan was applied: %+v", lb.Listeners)
	}

	// Deletion waits for approval of the destroy plan.
	out, err = f.eng.RemoveLoadBalancer(testkit.Context(t), annotations.Read(svc), reviewed(manual))
	did := awaiting(t, err)
	if !out.Awaiting.Destroy || f.countLBs(t) != 1 {
		t.Fatalf("destroy under manual: %+v, %d LBs", out, f.countLBs(t))
	}
	if out, err = f.eng.RemoveLoadBalancer(testkit.Context(t), annotations.Read(svc), reviewed(manual, did)); err != nil || out.Applied == nil || f.countLBs(t) != 0 {
		t.Fatalf("approved destroy: %+v %v, %d LBs", out, err, f.countLBs(t))
	}
}

// Reconciles of one object run one at a time: the TLS resync reconciles
// a Service beside the service controller, and two reconciles of one
// approved plan used to both plan afresh, then both apply it; the second
// found the saved plan spent ("gone or was replaced").
func TestApprovedPlanReconciledTwiceAtOnce(t *testing.T) {
	f := newFixture(t, 2)
	nodes := []*corev1.Node{f.node(t, "node-a")}
	for round := range 3 {
		svc := service(fmt.Sprintf("twice-%d", round), 80)
		id, _ := planned(t, f.eng, svc, nodes)
		var wg sync.WaitGroup
		errs := make([]error, 4)
		applied := make([]bool, len(errs))
		for i := range errs {
			wg.Go(func() {
				_, out, err := f.eng.ReconcileLoadBalancer(testkit.Context(t), annotations.Read(svc), nodes, reviewed(annotations.ApplyManual, id))
				errs[i], applied[i] = err, out.Applied != nil
			})
		}
		wg.Wait()
		if err := errors.Join(errs...); err != nil {
			t.Fatalf("round %d: %v", round, err)
		}
		applies := len(slices.DeleteFunc(applied, func(a bool) bool { return !a }))
		if lbs := f.countLBs(t); applies != 1 || lbs != round+1 {
			t.Fatalf("round %d: %d reconciles applied plan %s (want one), %d load balancers", round, applies, id, lbs)
		}
	}
}

func TestPlanOnlyNeverApplies(t *testing.T) {
	f := newFixture(t, 2)
	nodes := []*corev1.Node{f.node(t, "node-a")}
	svc := service("dry", 80)
	_, out, err := f.eng.ReconcileLoadBalancer(testkit.Context(t), annotations.Read(svc), nodes, reviewed(annotations.ApplyPlanOnly))
	id := awaiting(t, err)
	// Even an approval does not apply under plan-only.
	if _, _, err = f.eng.ReconcileLoadBalancer(testkit.Context(t), annotations.Read(svc), nodes, reviewed(annotations.ApplyPlanOnly, id)); awaiting(t, err) != id {
		t.Fatalf("plan-only approval: %v", err)
	}
	if f.countLBs(t) != 0 || out.Planned.Summary.Add != 1 {
		t.Fatalf("plan-only changed the cloud: %d LBs, %+v", f.countLBs(t), out.Planned.Summary)
	}
}

// Equal inputs and state make equal plan ids, also in another process.
func TestPlanIDsAreStable(t *testing.T) {
	f := newFixture(t, 2)
	nodes := []*corev1.Node{f.node(t, "node-a")}
	svc := service("stable", 80, 443)
	id, _ := planned(t, f.eng, svc, nodes)
	other := f.engine(t, 2, engine.Options{})
	if again, _ := planned(t, other, svc, nodes); again != id {
		t.Fatalf("the same plan got another id: %s, then %s", id, again)
	}
}

// Policy rules hold flagged plans under auto, deny what they deny, and
// leave other plans alone.
func TestRulesUnderAuto(t *testing.T) {
	rules, err := policy.Compile(append(policy.Defaults, policy.Rule{
		Name: "no-large", Effect: policy.Deny, Message: "lb-large is reserved",
		When: `object.annotations.exists(k, k == "loadbalancer.example.com/type" && object.annotations[k] == "lb-large")`,
	}))
	if err != nil {
		t.Fatal(err)
	}
	f := newFixtureWith(t, 2, engine.Options{Rules: rules})
	nodes := []*corev1.Node{f.node(t, "node-a")}
	svc := service("ruled", 80)
	rv := func(approved ...string) engine.Review {
		r := reviewed(annotations.ApplyAuto, approved...)
		r.Object.Annotations = svc.Annotations
		return r
	}
	if _, out, err := f.eng.ReconcileLoadBalancer(testkit.Context(t), annotations.Read(svc), nodes, rv()); err != nil || out.Applied == nil {
		t.Fatalf("create, no rule flags it: %+v %v", out, err)
	}
	// A new name replaces the load balancer: held for approval.
	svc.Annotations = map[string]string{string(annotations.LBName): "renamed"}
	_, out, err := f.eng.ReconcileLoadBalancer(testkit.Context(t), annotations.Read(svc), nodes, rv())
	id := awaiting(t, err)
	if len(out.Verdicts) != 1 || out.Verdicts[0].Rule != "load-balancer-replace" || out.Awaiting == nil {
		t.Fatalf("replace under auto: %+v", out)
	}
	if _, out, err = f.eng.ReconcileLoadBalancer(testkit.Context(t), annotations.Read(svc), nodes, rv(id)); err != nil || out.Applied == nil || out.Applied.ID != id {
		t.Fatalf("approved replace: %+v %v", out, err)
	}
	// A denied plan is never applied, approved or not, and asking again
	// runs no terraform.
	svc.Annotations[string(annotations.LBType)] = "lb-large"
	_, _, err = f.eng.ReconcileLoadBalancer(testkit.Context(t), annotations.Read(svc), nodes, rv())
	var denied *engine.DeniedError
	if !errors.As(err, &denied) || denied.Verdict.Rule != "no-large" {
		t.Fatalf("want denied, got %v", err)
	}
	procs := total(f.eng.Runner().Processes())
	if _, _, err = f.eng.ReconcileLoadBalancer(testkit.Context(t), annotations.Read(svc), nodes, rv(denied.PlanID)); !errors.As(err, &denied) {
		t.Fatalf("approving a denied plan: %v", err)
	}
	if total(f.eng.Runner().Processes()) != procs {
		t.Fatal("a denied plan was planned again")
	}
	if l, _ := f.api.ListLoadBalancers(testkit.Context(t), exampleapi.LoadBalancerFilter{}); len(l) != 1 || l[0].Type == "lb-large" {
		t.Fatalf("denied plan applied: %+v", l)
	}
	// The destroy is held too (once the denied annotation is gone: the
	// rule reads the object, so it would deny the destroy as well).
	delete(svc.Annotations, string(annotations.LBType))
	out, err = f.eng.RemoveLoadBalancer(testkit.Context(t), annotations.Read(svc), rv())
	did := awaiting(t, err)
	if len(out.Verdicts) == 0 || out.Verdicts[0].Rule != "load-balancer-destroy" || f.countLBs(t) != 1 {
		t.Fatalf("destroy under auto: %+v", out)
	}
	if _, err = f.eng.RemoveLoadBalancer(testkit.Context(t), annotations.Read(svc), rv(did)); err != nil || f.countLBs(t) != 0 {
		t.Fatalf("approved destroy: %v", err)
	}
}

// Rules that read only actions cost no terraform process; a rule that
// reads values costs one show per plan.
func TestRulesCost(t *testing.T) {
	defaults, _ := policy.Compile(policy.Defaults)
	values, _ := policy.Compile([]policy.Rule{{Name: "v", Effect: policy.Deny, Message: "m",
		When: `values.exists(a, has(values[a].after.type) && values[a].after.type == "lb-large")`}})
	count := func(o engine.Options) int64 {
		f := newFixtureWith(t, 2, o)
		nodes := []*corev1.Node{f.node(t, "node-a")}
		if _, _, err := f.eng.ReconcileLoadBalancer(testkit.Context(t), annotations.Read(service("cost", 80)), nodes, auto); err != nil {
			t.Fatal(err)
		}
		return total(f.eng.Runner().Processes())
	}
	none, flagged, valued := count(engine.Options{}), count(engine.Options{Rules: defaults}), count(engine.Options{Rules: values})
	if flagged != none || valued != none+1 {
		t.Fatalf("terraform processes for a create: no rules %d, default rules %d, a values rule %d", none, flagged, valued)
	}
}
