package engine_test

import (
	"context"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/wait"

	"github.com/example/cloud-provider-example/annotations"
	"github.com/example/cloud-provider-example/engine"
	"github.com/example/cloud-provider-example/exampleapi"
	"github.com/example/cloud-provider-example/internal/testkit"
	"github.com/example/cloud-provider-example/lbmodel"
	"github.com/example/cloud-provider-example/renderer"
)

// A Service whose load balancer was created by an apply that could not
// record it (the controller killed, the backend down) and that is deleted
// before the next apply adopted it: the deletion imports it and destroys
// it, rather than leaving it behind with a public address.
// orphanFinder finds a load balancer by its name and owner tags, as the
// controller's FindOrphan does.
func orphanFinder(f **fixture) func(context.Context, string, map[string]string) (string, error) {
	return func(ctx context.Context, name string, owner map[string]string) (string, error) {
		l, err := (*f).api.ListLoadBalancers(ctx, exampleapi.LoadBalancerFilter{Name: name})
		for _, lb := range l {
			if lb.Tags[lbmodel.TagServiceUID] == owner[lbmodel.TagServiceUID] && lb.Tags[lbmodel.TagClusterID] == owner[lbmodel.TagClusterID] {
				return lb.ID, err
			}
		}
		return "", err
	}
}

// leaveOrphan creates what a killed first apply leaves behind: a load
// balancer of that name and owner tags that no record knows.
func (f *fixture) leaveOrphan(t *testing.T, name string, tags map[string]string) *exampleapi.LoadBalancer {
	t.Helper()
	lb, err := f.api.CreateLoadBalancer(testkit.Context(t), exampleapi.LoadBalancerSpec{
		Name: name, Region: region, IPFamily: "ipv4",
		LoadBalancerSettings: exampleapi.LoadBalancerSettings{
			Type: "lb-small", Algorithm: "round_robin",
			Listeners: []exampleapi.Listener{{Protocol: "tcp", Port: 80, TargetPort: 30080}},
			Tags:      tags,
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	return lb
}

// serviceOwnerTags are the owner tags of svc's load balancer.
func serviceOwnerTags(svc *corev1.Service) map[string]string {
	return map[string]string{lbmodel.TagClusterID: "test", lbmodel.TagServiceUID: string(svc.UID)}
}

// checkOrphanDestroyed checks that a removal (what) recovered the orphan
// into its state and destroyed it.
func (f *fixture) checkOrphanDestroyed(t *testing.T, what string, out *engine.Outcome, err error) {
	t.Helper()
	if err != nil || out.Recovered == "" || out.Applied == nil || !out.Applied.Destroy {
		t.Fatalf("%s: %+v %v", what, out, err)
	}
	if n := f.countLBs(t); n != 0 {
		t.Fatalf("%d load balancers left", n)
	}
}

func TestDeleteDestroysAnUnrecordedLoadBalancer(t *testing.T) {
	var f *fixture
	f = newFixtureWith(t, 2, engine.Options{FindOrphan: orphanFinder(&f)})
	svc := service("orphaned", 80)
	// What the killed apply created: the Service's name and owner tags.
	f.leaveOrphan(t, renderer.LoadBalancerName(svc, "test"), serviceOwnerTags(svc))
	out, err := f.eng.RemoveLoadBalancer(testkit.Context(t), annotations.Read(svc), auto)
	f.checkOrphanDestroyed(t, "delete", out, err)
}

// The service controller asks GetLoadBalancer before a deletion, and
// drops the finalizer when it says "does not exist": a load balancer an
// interrupted apply left must count as existing.
func TestGetLoadBalancerSeesAnUnrecordedLoadBalancer(t *testing.T) {
	var f *fixture
	f = newFixtureWith(t, 2, engine.Options{FindOrphan: orphanFinder(&f)})
	svc := service("unrecorded", 80)
	if _, exists, err := f.eng.GetLoadBalancer(testkit.Context(t), annotations.Read(svc)); err != nil || exists {
		t.Fatalf("nothing created yet: exists=%v %v", exists, err)
	}
	lb := f.leaveOrphan(t, renderer.LoadBalancerName(svc, "test"), serviceOwnerTags(svc))
	if got, exists, err := f.eng.GetLoadBalancer(testkit.Context(t), annotations.Read(svc)); err != nil || !exists || got.ID != lb.ID {
		t.Fatalf("an unrecorded load balancer: %+v exists=%v %v", got, exists, err)
	}
}

// The same for a group: its last member leaves right after a killed first
// apply of the group, and the destroy takes the group's load balancer
// with it.
func TestRemoveGroupDestroysAnUnrecordedLoadBalancer(t *testing.T) {
	var f *fixture
	f = newFixtureWith(t, 2, engine.Options{FindOrphan: orphanFinder(&f)})
	g := lbmodel.Group{Namespace: "default", Name: "shop", Members: []*corev1.Service{service("a", 80)}}
	f.leaveOrphan(t, renderer.GroupLoadBalancerName("test", "default", "shop"), renderer.GroupOwnerTags("default", "shop", "test"))
	out, err := f.eng.RemoveGroup(testkit.Context(t), g, auto)
	f.checkOrphanDestroyed(t, "remove", out, err)
}

// An apply interrupted while the load balancer provisions leaves it in
// the state (tainted) and no output names it. Deleting the Service then
// destroys it from the state: the cloud's load balancer of that name and
// owner is the state's own, not one to import a second time ("Resource
// already managed by Terraform", on every retry).
func TestDeleteAfterAnInterruptedApply(t *testing.T) {
	var f *fixture
	f = newFixtureWith(t, 2, engine.Options{FindOrphan: orphanFinder(&f)})
	node := f.node(t, "node-a")
	svc := service("interrupted", 80)
	f.sim.SetFaults(t, exampleapi.Faults{ProvisionDelayMs: 60_000})
	ctx, cancel := context.WithCancel(testkit.Context(t))
	defer cancel()
	go func() { // once the cloud holds it, the provider waits for it
		defer cancel()
		_ = wait.PollUntilContextCancel(ctx, 20*time.Millisecond, true, func(ctx context.Context) (bool, error) {
			l, err := f.api.ListLoadBalancers(ctx, exampleapi.LoadBalancerFilter{})
			return err == nil && len(l) > 0, nil
		})
	}()
	if _, _, err := f.eng.ReconcileLoadBalancer(ctx, annotations.Read(svc), []*corev1.Node{node}, auto); err == nil {
		t.Fatal("want the interrupted apply's error")
	}
	f.sim.SetFaults(t, exampleapi.Faults{})
	out, err := f.eng.RemoveLoadBalancer(testkit.Context(t), annotations.Read(svc), auto)
	if err != nil || out.Recovered != "" || out.Applied == nil || !out.Applied.Destroy {
		t.Fatalf("delete: %+v %v", out, err)
	}
	if n := f.countLBs(t); n != 0 {
		t.Fatalf("%d load balancers left", n)
	}
}
