package engine_test

import (
	"errors"
	"slices"
	"testing"

	corev1 "k8s.io/api/core/v1"

	"github.com/example/cloud-provider-example/annotations"
	"github.com/example/cloud-provider-example/engine"
	"github.com/example/cloud-provider-example/exampleapi"
	"github.com/example/cloud-provider-example/internal/testkit"
	"github.com/example/cloud-provider-example/runner"
)

func knownOf(t *testing.T, e *engine.Engine, key string) engine.Known {
	t.Helper()
	for _, k := range e.Known() {
		if k.Ref.Key() == key {
			return k
		}
	}
	t.Fatalf("%s is not known", key)
	return engine.Known{}
}

// A drift sweep lists the objects, then checks them one by one. A Service
// deleted after the listing must not get its load balancer back.
func TestDriftCheckAfterDeleteDoesNotResurrect(t *testing.T) {
	f := newFixture(t, 2)
	nodes := []*corev1.Node{f.node(t, "node-a")}
	svc := service("gone", 80)
	applied(t, f.eng, svc, nodes)
	snapshot := knownOf(t, f.eng, "default/gone") // the sweep lists it...
	if _, err := f.eng.RemoveLoadBalancer(testkit.Context(t), annotations.Read(svc), auto); err != nil {
		t.Fatal(err) // ...the Service is deleted...
	}
	_, err := f.eng.CheckDrift(testkit.Context(t), snapshot, nil) // ...and the sweep reaches it
	if !errors.Is(err, engine.ErrSkipped) && !errors.Is(err, runner.ErrGone) {
		t.Fatalf("drift check of a deleted Service: %v", err)
	}
	if n := f.countLBs(t); n != 0 {
		t.Fatalf("the drift check re-created the load balancer: %d LBs", n)
	}
}

// A newer change (tightened source ranges) applied after the listing is
// not reverted by the sweep's older snapshot.
func TestDriftCheckDoesNotRevertNewerChange(t *testing.T) {
	f := newFixture(t, 2)
	nodes := []*corev1.Node{f.node(t, "node-a")}
	svc := service("ranges", 80)
	svc.Spec.LoadBalancerSourceRanges = []string{"0.0.0.0/0"}
	applied(t, f.eng, svc, nodes)
	snapshot := knownOf(t, f.eng, "default/ranges")
	tight := svc.DeepCopy()
	tight.Spec.LoadBalancerSourceRanges = []string{"203.0.113.0/24"}
	lb := applied(t, f.eng, tight, nodes)
	if _, err := f.eng.CheckDrift(testkit.Context(t), snapshot, nil); !errors.Is(err, engine.ErrSkipped) {
		t.Fatalf("drift check of an outdated snapshot: %v", err)
	}
	got, err := f.api.GetLoadBalancer(testkit.Context(t), lb.ID)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(got.AllowedSourceCIDRs, []string{"203.0.113.0/24"}) {
		t.Fatalf("source ranges reverted to %v", got.AllowedSourceCIDRs)
	}
}

// Drift of the object as it is now is detected and, under auto, corrected.
func TestDriftCorrected(t *testing.T) {
	f := newFixture(t, 2)
	nodes := []*corev1.Node{f.node(t, "node-a")}
	svc := service("drifty", 80)
	lb := applied(t, f.eng, svc, nodes)
	cloud, _ := f.api.GetLoadBalancer(testkit.Context(t), lb.ID)
	if _, err := f.api.UpdateLoadBalancer(testkit.Context(t), lb.ID, exampleapi.UpdateLoadBalancerRequest{
		Type: "lb-large", Algorithm: cloud.Algorithm, Listeners: cloud.Listeners, Targets: cloud.Targets, Tags: cloud.Tags, HealthCheck: cloud.HealthCheck,
	}, 0); err != nil {
		t.Fatal(err)
	}
	out, err := f.eng.CheckDrift(testkit.Context(t), knownOf(t, f.eng, "default/drifty"), nil)
	if err != nil || out.Planned == nil || len(out.Planned.Summary.Drift) == 0 || out.Applied == nil {
		t.Fatalf("drift: %+v %v", out, err)
	}
	if got, _ := f.api.GetLoadBalancer(testkit.Context(t), lb.ID); got.Type != "lb-small" {
		t.Fatalf("drift not corrected: %s", got.Type)
	}
}
