package engine_test

import (
	"errors"
	"testing"

	corev1 "k8s.io/api/core/v1"

	"github.com/example/cloud-provider-example/annotations"
	"github.com/example/cloud-provider-example/engine"
	"github.com/example/cloud-provider-example/exampleapi"
	"github.com/example/cloud-provider-example/internal/tftest"
	"github.com/example/cloud-provider-example/policy"
	"github.com/example/cloud-provider-example/renderer"
	"github.com/example/cloud-provider-example/runner"
)

func awaiting(t *testing.T, err error) string {
	t.Helper()
	var wait *engine.AwaitingApprovalError
	if !errors.As(err, &wait) {
		t.Fatalf("want AwaitingApprovalError, got %v", err)
	}
	return wait.PlanID
}

func (f *fixture) countLBs(t *testing.T) int {
	t.Helper()
	l, err := f.api.ListLoadBalancers(ctxT(t), exampleapi.LoadBalancerFilter{})
	if err != nil {
		t.Fatal(err)
	}
	return len(l)
}

// On both engines (terraform and tofu).
func TestManualPolicy(t *testing.T) { onDistributions(t, testManualPolicy) }

func testManualPolicy(t *testing.T, tc tftest.Toolchain) {
	f := newFixtureOn(t, tc, 2, engine.Options{PlanText: true})
	nodes := []*corev1.Node{f.node(t, "node-a")}
	svc := service("gated", 80)
	manual := annotations.ApplyManual

	// A plan is made and recorded; nothing changes in the cloud.
	_, out, err := f.eng.ReconcileLoadBalancer(ctxT(t), svc, nodes, reviewed(manual))
	id := awaiting(t, err)
	if out.Planned == nil || out.Planned.ID != id || out.Planned.Text == "" || f.countLBs(t) != 0 {
		t.Fatalf("first reconcile: %+v, %d LBs", out, f.countLBs(t))
	}
	// Asking again does not plan again.
	procs := total(f.eng.Runner().Processes())
	if _, out, err = f.eng.ReconcileLoadBalancer(ctxT(t), svc, nodes, reviewed(manual)); awaiting(t, err) != id || out.Planned != nil {
		t.Fatalf("second reconcile re-planned: %+v", out)
	}
	if total(f.eng.Runner().Processes()) != procs {
		t.Fatal("waiting for approval started terraform")
	}
	// An approval of another plan approves nothing.
	if _, _, err = f.eng.ReconcileLoadBalancer(ctxT(t), svc, nodes, reviewed(manual, "plan-000000000000")); awaiting(t, err) != id || f.countLBs(t) != 0 {
		t.Fatalf("wrong id: %v", err)
	}
	// The Service changes: the pending plan is superseded by a new one.
	svc.Spec.Ports[0].Port = 8080
	_, out, err = f.eng.ReconcileLoadBalancer(ctxT(t), svc, nodes, reviewed(manual, id))
	id2 := awaiting(t, err)
	if id2 == id || out.Superseded == nil || out.Superseded.ID != id || f.countLBs(t) != 0 {
		t.Fatalf("changed Service: %+v", out)
	}
	// Its approval applies exactly that plan.
	lb, out, err := f.eng.ReconcileLoadBalancer(ctxT(t), svc, nodes, reviewed(manual, id2))
	if err != nil || out.Applied == nil || out.Applied.ID != id2 || lb == nil || lb.IPv4 == "" || f.countLBs(t) != 1 {
		t.Fatalf("approved: lb=%+v out=%+v err=%v", lb, out, err)
	}
	if len(out.Approval.Approvers) != 1 || out.Approval.Approvers[0] != "alice" {
		t.Fatalf("approvers not reported: %+v", out.Approval)
	}
	// Applied state is stable: the same approval does nothing more.
	if _, out, err = f.eng.ReconcileLoadBalancer(ctxT(t), svc, nodes, reviewed(manual, id2)); err != nil || out.Planned != nil {
		t.Fatalf("after apply: %+v %v", out, err)
	}

	// Plan, then the cloud changes out of band before approval: approving
	// the old plan re-plans and waits again.
	svc.Spec.Ports[0].Port = 9090
	_, _, err = f.eng.ReconcileLoadBalancer(ctxT(t), svc, nodes, reviewed(manual))
	id3 := awaiting(t, err)
	cloud, _ := f.api.ListLoadBalancers(ctxT(t), exampleapi.LoadBalancerFilter{})
	if _, err := f.api.UpdateLoadBalancer(ctxT(t), cloud[0].ID, exampleapi.UpdateLoadBalancerRequest{
		Type: "lb-large", Algorithm: "round_robin", Listeners: cloud[0].Listeners, Targets: cloud[0].Targets, Tags: cloud[0].Tags, HealthCheck: cloud[0].HealthCheck,
	}, 0); err != nil {
		t.Fatal(err)
	}
	_, out, err = f.eng.ReconcileLoadBalancer(ctxT(t), svc, nodes, reviewed(manual, id3))
	id4 := awaiting(t, err)
	if id4 == id3 || out.Superseded == nil || out.Applied != nil {
		t.Fatalf("cloud changed after planning: %+v", out)
	}
	if lb, _ := f.api.GetLoadBalancer(ctxT(t), cloud[0].ID); lb.Listeners[0].Port != 8080 {
		t.Fatalf("the stale plan was applied: %+v", lb.Listeners)
	}

	// Deletion waits for approval of the destroy plan.
	out, err = f.eng.RemoveLoadBalancer(ctxT(t), svc, reviewed(manual))
	did := awaiting(t, err)
	if !out.Awaiting.Destroy || f.countLBs(t) != 1 {
		t.Fatalf("destroy under manual: %+v, %d LBs", out, f.countLBs(t))
	}
	if out, err = f.eng.RemoveLoadBalancer(ctxT(t), svc, reviewed(manual, did)); err != nil || out.Applied == nil || f.countLBs(t) != 0 {
		t.Fatalf("approved destroy: %+v %v, %d LBs", out, err, f.countLBs(t))
	}
}

func TestPlanOnlyNeverApplies(t *testing.T) {
	f := newFixture(t, 2)
	nodes := []*corev1.Node{f.node(t, "node-a")}
	svc := service("dry", 80)
	_, out, err := f.eng.ReconcileLoadBalancer(ctxT(t), svc, nodes, reviewed(annotations.ApplyPlanOnly))
	id := awaiting(t, err)
	// Even an approval does not apply under plan-only.
	if _, _, err = f.eng.ReconcileLoadBalancer(ctxT(t), svc, nodes, reviewed(annotations.ApplyPlanOnly, id)); awaiting(t, err) != id {
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
	_, _, err := f.eng.ReconcileLoadBalancer(ctxT(t), svc, nodes, reviewed(annotations.ApplyManual))
	id := awaiting(t, err)
	other := f.engine(t, 2, engine.Options{})
	_, _, err = other.ReconcileLoadBalancer(ctxT(t), svc, nodes, reviewed(annotations.ApplyManual))
	if again := awaiting(t, err); again != id {
		t.Fatalf("the same plan got another id: %s, then %s", id, again)
	}
}

// A controller restart (a new engine, an empty work directory) finds the
// plan awaiting approval in the plan store: the same id waits, and
// approving it applies it without a new plan. On both engines: the saved
// plan file is restored into a new workspace and applied there.
func TestPendingPlanSurvivesRestart(t *testing.T) { onDistributions(t, testPendingPlanSurvivesRestart) }

func testPendingPlanSurvivesRestart(t *testing.T, tc tftest.Toolchain) {
	store := newMemStore()
	f := newFixtureOn(t, tc, 2, engine.Options{Plans: store})
	nodes := []*corev1.Node{f.node(t, "node-a")}
	svc := service("restart", 80)
	manual := annotations.ApplyManual
	_, out, err := f.eng.ReconcileLoadBalancer(ctxT(t), svc, nodes, reviewed(manual))
	id := awaiting(t, err)
	store.keep(t, string(svc.UID), out)

	next := f.engine(t, 2, engine.Options{Plans: store})
	procs := next.Runner().Processes()
	_, out, err = next.ReconcileLoadBalancer(ctxT(t), svc, nodes, reviewed(manual))
	if awaiting(t, err) != id || !out.Restored || out.Planned != nil {
		t.Fatalf("after restart: %+v", out)
	}
	if p := next.Runner().Processes(); p["plan"] != procs["plan"] {
		t.Fatalf("the restarted controller planned again: %v", p)
	}
	lb, out, err := next.ReconcileLoadBalancer(ctxT(t), svc, nodes, reviewed(manual, id))
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
	_, out, err := f.eng.ReconcileLoadBalancer(ctxT(t), svc, nodes, reviewed(annotations.ApplyManual))
	awaiting(t, err)
	store.keep(t, "an-earlier-uid", out)
	next := f.engine(t, 2, engine.Options{Plans: store})
	if _, _, err := next.ReconcileLoadBalancer(ctxT(t), svc, nodes, auto); err == nil || !errors.Is(err, runner.ErrOwnerMismatch) {
		t.Fatalf("want owner mismatch, got %v", err)
	}
	if f.countLBs(t) != 0 {
		t.Fatal("a load balancer was created for the wrong owner")
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
	if _, out, err := f.eng.ReconcileLoadBalancer(ctxT(t), svc, nodes, rv()); err != nil || out.Applied == nil {
		t.Fatalf("create, no rule flags it: %+v %v", out, err)
	}
	// A new name replaces the load balancer: held for approval.
	svc.Annotations = map[string]string{string(annotations.LBName): "renamed"}
	_, out, err := f.eng.ReconcileLoadBalancer(ctxT(t), svc, nodes, rv())
	id := awaiting(t, err)
	if len(out.Verdicts) != 1 || out.Verdicts[0].Rule != "load-balancer-replace" || out.Awaiting == nil {
		t.Fatalf("replace under auto: %+v", out)
	}
	if _, out, err = f.eng.ReconcileLoadBalancer(ctxT(t), svc, nodes, rv(id)); err != nil || out.Applied == nil || out.Applied.ID != id {
		t.Fatalf("approved replace: %+v %v", out, err)
	}
	// A denied plan is never applied, approved or not, and asking again
	// runs no terraform.
	svc.Annotations[string(annotations.LBType)] = "lb-large"
	_, _, err = f.eng.ReconcileLoadBalancer(ctxT(t), svc, nodes, rv())
	var denied *engine.DeniedError
	if !errors.As(err, &denied) || denied.Verdict.Rule != "no-large" {
		t.Fatalf("want denied, got %v", err)
	}
	procs := total(f.eng.Runner().Processes())
	if _, _, err = f.eng.ReconcileLoadBalancer(ctxT(t), svc, nodes, rv(denied.PlanID)); !errors.As(err, &denied) {
		t.Fatalf("approving a denied plan: %v", err)
	}
	if total(f.eng.Runner().Processes()) != procs {
		t.Fatal("a denied plan was planned again")
	}
	if l, _ := f.api.ListLoadBalancers(ctxT(t), exampleapi.LoadBalancerFilter{}); len(l) != 1 || l[0].Type == "lb-large" {
		t.Fatalf("denied plan applied: %+v", l)
	}
	// The destroy is held too (once the denied annotation is gone: the
	// rule reads the object, so it would deny the destroy as well).
	delete(svc.Annotations, string(annotations.LBType))
	out, err = f.eng.RemoveLoadBalancer(ctxT(t), svc, rv())
	did := awaiting(t, err)
	if len(out.Verdicts) == 0 || out.Verdicts[0].Rule != "load-balancer-destroy" || f.countLBs(t) != 1 {
		t.Fatalf("destroy under auto: %+v", out)
	}
	if _, err = f.eng.RemoveLoadBalancer(ctxT(t), svc, rv(did)); err != nil || f.countLBs(t) != 0 {
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
		if _, _, err := f.eng.ReconcileLoadBalancer(ctxT(t), service("cost", 80), nodes, auto); err != nil {
			t.Fatal(err)
		}
		return total(f.eng.Runner().Processes())
	}
	none, flagged, valued := count(engine.Options{}), count(engine.Options{Rules: defaults}), count(engine.Options{Rules: values})
	if flagged != none || valued != none+1 {
		t.Fatalf("terraform processes for a create: no rules %d, default rules %d, a values rule %d", none, flagged, valued)
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
	lb, out, err := f.eng.ReconcileLoadBalancer(ctxT(t), svc, nodes, auto)
	if err != nil {
		t.Fatal(err)
	}
	store.keep(t, string(svc.UID), out)
	routes := []renderer.Route{{Destination: "10.244.1.0/24", TargetInstanceID: instanceID(t, nodes[0]), NodeName: "node-a"}}
	_, out, err = f.eng.ReconcileRoutes(ctxT(t), routes, auto)
	if err != nil {
		t.Fatal(err)
	}
	store.keep(t, "", out)

	next := f.engine(t, 2, engine.Options{Plans: store})
	again, out, err := next.ReconcileLoadBalancer(ctxT(t), svc, nodes, auto)
	if err != nil || !out.Result.FastPath || again.IPv4 != lb.IPv4 {
		t.Fatalf("unchanged Service after a restart: %+v %+v %v", again, out, err)
	}
	if got, exists, err := next.GetLoadBalancer(ctxT(t), svc); err != nil || !exists || got.IPv4 != lb.IPv4 {
		t.Fatalf("get after a restart: %+v %v %v", got, exists, err)
	}
	if listed, err := next.Routes(ctxT(t)); err != nil || len(listed) != 1 {
		t.Fatalf("routes after a restart: %+v %v", listed, err)
	}
	if _, out, err = next.ReconcileRoutes(ctxT(t), routes, auto); err != nil || !out.Result.FastPath {
		t.Fatalf("unchanged route set after a restart: %+v %v", out, err)
	}
	if p := next.Runner().Processes(); len(p) != 0 {
		t.Fatalf("terraform ran after a restart with nothing changed: %v", p)
	}
	svc.Spec.Ports[0].Port = 81
	if _, out, err = next.ReconcileLoadBalancer(ctxT(t), svc, nodes, auto); err != nil || out.Applied == nil || out.Applied.Summary.Change != 1 {
		t.Fatalf("changed Service after a restart: %+v %v", out, err)
	}
}

// A failed apply names its plan (Outcome.Attempted), so that the audit
// line and the record say which plan failed: an approved plan made in an
// earlier call, or one made and applied in the same call under auto.
func TestFailedApplyNamesThePlan(t *testing.T) {
	f := newFixture(t, 1)
	nodes := []*corev1.Node{f.node(t, "node-a")}
	// Another owner's load balancer holds the name the apply creates.
	takeName := func(svc *corev1.Service) {
		t.Helper()
		if _, err := f.api.CreateLoadBalancer(ctxT(t), exampleapi.LoadBalancerSpec{
			Name: renderer.LoadBalancerName(svc, "test"), Region: region, Type: "lb-small", Algorithm: "round_robin", IPFamily: "ipv4",
			Listeners: []exampleapi.Listener{{Protocol: "tcp", Port: 80, TargetPort: 30080}},
			Tags:      map[string]string{renderer.TagClusterID: "other", renderer.TagServiceUID: "someone-else"},
		}); err != nil {
			t.Fatal(err)
		}
	}

	svc := service("approved", 80)
	_, _, err := f.eng.ReconcileLoadBalancer(ctxT(t), svc, nodes, reviewed(annotations.ApplyManual))
	id := awaiting(t, err)
	takeName(svc)
	_, out, err := f.eng.ReconcileLoadBalancer(ctxT(t), svc, nodes, reviewed(annotations.ApplyManual, id))
	if out == nil {
		t.Fatalf("approved apply over a taken name: no outcome: %v", err)
	}
	if err == nil || out.Attempted == nil || out.Attempted.ID != id || out.Applied != nil || out.Awaiting != nil {
		t.Fatalf("approved apply over a taken name: attempted %v, applied %v, awaiting %v: %v", planIDOf(out.Attempted), planIDOf(out.Applied), planIDOf(out.Awaiting), err)
	}

	svc = service("auto", 80)
	takeName(svc)
	_, out, err = f.eng.ReconcileLoadBalancer(ctxT(t), svc, nodes, reviewed(annotations.ApplyAuto))
	if out == nil {
		t.Fatalf("auto apply over a taken name: no outcome: %v", err)
	}
	if err == nil || out.Attempted == nil || out.Planned != out.Attempted || !out.Attempted.HasChanges || out.Applied != nil {
		t.Fatalf("auto apply over a taken name: attempted %v, planned %v, applied %v: %v", planIDOf(out.Attempted), planIDOf(out.Planned), planIDOf(out.Applied), err)
	}
}

func planIDOf(p *runner.Plan) string {
	if p == nil {
		return "none"
	}
	return p.ID
}
