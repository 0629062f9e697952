package engine_test

import (
	"testing"

	corev1 "k8s.io/api/core/v1"

	"github.com/example/cloud-provider-example/annotations"
	"github.com/example/cloud-provider-example/exampleapi"
	"github.com/example/cloud-provider-example/internal/testkit"
	"github.com/example/cloud-provider-example/lbmodel"
	"github.com/example/cloud-provider-example/renderer"
	"github.com/example/cloud-provider-example/runner"
)

// A failed apply names its plan (Outcome.Attempted), so that the audit
// line and the record say which plan failed: an approved plan made in an
// earlier call, or one made and applied in the same call under auto.
func TestFailedApplyNamesThePlan(t *testing.T) {
	f := newFixture(t, 1)
	nodes := []*corev1.Node{f.node(t, "node-a")}
	// Another owner's load balancer holds the name the apply creates.
	takeName := func(svc *corev1.Service) {
		t.Helper()
		if _, err := f.api.CreateLoadBalancer(testkit.Context(t), exampleapi.LoadBalancerSpec{
			Name: renderer.LoadBalancerName(svc, "test"), Region: region, IPFamily: "ipv4",
			LoadBalancerSettings: exampleapi.LoadBalancerSettings{
				Type: "lb-small", Algorithm: "round_robin",
				Listeners: []exampleapi.Listener{{Protocol: "tcp", Port: 80, TargetPort: 30080}},
				Tags:      map[string]string{lbmodel.TagClusterID: "other", lbmodel.TagServiceUID: "someone-else"},
			},
		}); err != nil {
			t.Fatal(err)
		}
	}

	svc := service("approved", 80)
	id, _ := planned(t, f.eng, svc, nodes)
	takeName(svc)
	_, out, err := f.eng.ReconcileLoadBalancer(testkit.Context(t), annotations.Read(svc), nodes, reviewed(annotations.ApplyManual, id))
	if out == nil {
		t.Fatalf("approved apply over a taken name: no outcome: %v", err)
	}
	if err == nil || out.Attempted == nil || out.Attempted.ID != id || out.Applied != nil || out.Awaiting != nil {
		t.Fatalf("approved apply over a taken name: attempted %v, applied %v, awaiting %v: %v", planIDOf(out.Attempted), planIDOf(out.Applied), planIDOf(out.Awaiting), err)
	}

	svc = service("auto", 80)
	takeName(svc)
	_, out, err = f.eng.ReconcileLoadBalancer(testkit.Context(t), annotations.Read(svc), nodes, reviewed(annotations.ApplyAuto))
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
