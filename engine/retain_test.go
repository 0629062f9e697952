package engine_test

import (
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"

	"github.com/example/cloud-provider-example/annotations"
	"github.com/example/cloud-provider-example/engine"
	"github.com/example/cloud-provider-example/internal/testkit"
	"github.com/example/cloud-provider-example/internal/tftest"
	"github.com/example/cloud-provider-example/policy"
)

// A Service with deletion policy retain hands its load balancer over: the
// plan forgets it (held by the default rule load-balancer-forget whatever
// the policy), and once approved the cloud keeps it, same id and address,
// while no state of the controller holds it. On both distributions
// (OpenTofu's removed block takes lifecycle since 1.10).
func TestRetainLoadBalancer(t *testing.T) { tftest.OnDistributions(t, testRetainLoadBalancer) }

func testRetainLoadBalancer(t *testing.T, tc tftest.Toolchain) {
	// And a rule of the plan's forget count, as a platform team writes it.
	rules, err := policy.Compile(append(slices.Clone(policy.Defaults),
		policy.Rule{Name: "forgets-one", When: `plan.forget == 1`, Effect: policy.RequireApproval, Message: "one object handed over"}))
	testkit.Must(t, err)
	f := newFixtureOn(t, tc, 2, engine.Options{Rules: rules})
	nodes := []*corev1.Node{f.node(t, "node-a")}
	svc := service("handed", 80)
	lb := applied(t, f.eng, svc, nodes)

	out, err := f.eng.RetainLoadBalancer(testkit.Context(t), annotations.Read(svc), reviewed(annotations.ApplyAuto))
	id := awaiting(t, err)
	if len(out.Verdicts) != 2 || out.Verdicts[0].Rule != "load-balancer-forget" || out.Verdicts[1].Rule != "forgets-one" {
		t.Fatalf("verdicts %+v, want load-balancer-forget and forgets-one", out.Verdicts)
	}
	var actions []string
	for _, r := range out.Awaiting.Summary.Resources {
		actions = append(actions, r.Address+" "+r.Action)
	}
	if strings.Join(actions, ",") != "module.load_balancer.example_load_balancer.this remove" || out.Awaiting.Summary.Forget != 1 {
		t.Fatalf("the hand-over plans %v (%s)", actions, out.Awaiting.Summary)
	}
	out, err = f.eng.RetainLoadBalancer(testkit.Context(t), annotations.Read(svc), reviewed(annotations.ApplyAuto, id))
	if err != nil || out.Applied == nil || out.Applied.ID != id {
		t.Fatalf("approved hand-over: %+v %v", out, err)
	}
	kept, err := f.api.GetLoadBalancer(testkit.Context(t), lb.ID)
	if err != nil || kept.IPv4 != lb.IPv4 || f.countLBs(t) != 1 {
		t.Fatalf("the cloud's load balancer after the hand-over: %+v %v (%d load balancers)", kept, err, f.countLBs(t))
	}
	testkit.Must(t, filepath.WalkDir(f.stateDir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		if data, err := os.ReadFile(p); err == nil && strings.Contains(string(data), lb.ID) {
			t.Errorf("state %s still holds %s", p, lb.ID)
		}
		return nil
	}))

	// A Service never applied has nothing to hand over.
	if out, err := f.eng.RetainLoadBalancer(testkit.Context(t), annotations.Read(service("never", 80)), auto); err != nil || (out.Applied != nil && out.Applied.HasChanges) {
		t.Fatalf("hand-over of nothing: %+v %v", out, err)
	}
}

// A Service whose type changed away from LoadBalancer still finds its
// workspace: its load balancer is destroyed (found by a hand-over test,
// which changes the type).
func TestRemoveAfterTypeChange(t *testing.T) {
	f := newFixture(t, 2)
	nodes := []*corev1.Node{f.node(t, "node-a")}
	svc := service("retyped", 80)
	applied(t, f.eng, svc, nodes)
	svc.Spec.Type = corev1.ServiceTypeNodePort
	if _, exists, err := f.eng.GetLoadBalancer(testkit.Context(t), annotations.Read(svc)); err != nil || !exists {
		t.Fatalf("GetLoadBalancer after the type change: exists %v, %v", exists, err)
	}
	if out, err := f.eng.RemoveLoadBalancer(testkit.Context(t), annotations.Read(svc), auto); err != nil || out.Applied == nil || f.countLBs(t) != 0 {
		t.Fatalf("RemoveLoadBalancer after the type change: %+v %v, %d load balancers", out, err, f.countLBs(t))
	}
}
