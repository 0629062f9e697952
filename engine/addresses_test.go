package engine_test

import (
	"testing"

	corev1 "k8s.io/api/core/v1"

	"github.com/example/cloud-provider-example/annotations"
	"github.com/example/cloud-provider-example/engine"
	"github.com/example/cloud-provider-example/exampleapi"
	"github.com/example/cloud-provider-example/internal/testkit"
	"github.com/example/cloud-provider-example/lbmodel"
	"github.com/example/cloud-provider-example/objectref"
	"github.com/example/cloud-provider-example/renderer"
)

// A reserved address in its own workspace: attached, its IP is the load
// balancer's; a move to another load balancer is one reviewed plan of one
// in-place change; the load balancer holding it destroyed, it stays
// reserved with its IP; a release withdrawn leaves it; released, it is
// gone.
func TestAddressOutlivesLoadBalancers(t *testing.T) {
	f := newFixture(t, 2)
	ctx := testkit.Context(t)
	nodes := []*corev1.Node{f.node(t, "node-a")}
	www := lbmodel.Address{Namespace: "default", Name: "default-www"}

	reserved, _, err := f.eng.ReconcileAddress(ctx, www, auto)
	testkit.Must(t, err)
	if c := f.cloudAddress(t, reserved.ID); c.IP != reserved.IP || c.LoadBalancerID != "" || c.Tags[renderer.TagAddressNamespace] != "default" {
		t.Fatalf("reserved: cloud %+v, outputs %+v", c, reserved)
	}

	lb := func(name string) *engine.LoadBalancer {
		t.Helper()
		got, _, err := f.eng.ReconcileLoadBalancer(ctx, annotations.Read(service(name, 80)), nodes, auto)
		testkit.Must(t, err)
		return got
	}
	blue, green := lb("blue"), lb("green")
	www.LoadBalancerID, www.Holder = blue.ID, "Service default/blue"
	held, _, err := f.eng.ReconcileAddress(ctx, www, auto)
	testkit.Must(t, err)
	if held.IP != reserved.IP || f.cloudLB(t, blue.ID).IPv4 != reserved.IP {
		t.Fatalf("attached to blue: address %+v, blue's ipv4 %s, want %s", held, f.cloudLB(t, blue.ID).IPv4, reserved.IP)
	}

	// Blue to green: one plan, one in-place change, approved once.
	www.LoadBalancerID, www.Holder = green.ID, "Service default/green"
	_, out, err := f.eng.ReconcileAddress(ctx, www, reviewed(annotations.ApplyManual))
	id := awaiting(t, err)
	if s := out.Awaiting.Summary; s.Add != 0 || s.Change != 1 || s.Remove != 0 {
		t.Fatalf("the move plans %s, want one change", s)
	}
	moved, _, err := f.eng.ReconcileAddress(ctx, www, reviewed(annotations.ApplyManual, id))
	testkit.Must(t, err)
	if moved.IP != reserved.IP || f.cloudLB(t, green.ID).IPv4 != reserved.IP || f.cloudLB(t, blue.ID).IPv4 == reserved.IP {
		t.Fatalf("moved: address %+v, green %s, blue %s", moved, f.cloudLB(t, green.ID).IPv4, f.cloudLB(t, blue.ID).IPv4)
	}
	if moved.LoadBalancerID != green.ID || moved.Holder != "Service default/green" {
		t.Fatalf("moved: outputs say held by %q (%q), want green's %s", moved.LoadBalancerID, moved.Holder, green.ID)
	}

	// Green's load balancer destroyed: the address stays reserved.
	_, err = f.eng.RemoveLoadBalancer(ctx, annotations.Read(service("green", 80)), auto)
	testkit.Must(t, err)
	if c := f.cloudAddress(t, reserved.ID); c.IP != reserved.IP || c.LoadBalancerID != "" {
		t.Fatalf("after green's load balancer went: %+v", c)
	}
	if got, ok, err := f.eng.GetAddress(ctx, www.Namespace, www.Name); err != nil || !ok || got.IP != reserved.IP {
		t.Fatalf("GetAddress = %+v %v %v", got, ok, err)
	}

	// A release waiting for approval, withdrawn: superseded, the address
	// kept; withdrawn again, nothing waits.
	out, err = f.eng.ReleaseAddress(ctx, www.Namespace, www.Name, reviewed(annotations.ApplyManual))
	release := awaiting(t, err)
	if !out.Awaiting.Destroy {
		t.Fatalf("the release plans %+v, want a destroy", out.Awaiting)
	}
	out, err = f.eng.WithdrawRelease(ctx, www.Namespace, www.Name)
	if err != nil || out.Superseded == nil || out.Superseded.ID != release || f.eng.Pending(objectref.Address(www.Namespace, www.Name)) != nil {
		t.Fatalf("WithdrawRelease = %+v, %v; want %s superseded, nothing pending", out, err, release)
	}
	if out, err = f.eng.WithdrawRelease(ctx, www.Namespace, www.Name); err != nil || out.Superseded != nil {
		t.Fatalf("WithdrawRelease again = %+v, %v; want nothing superseded", out, err)
	}
	if c := f.cloudAddress(t, reserved.ID); c.IP != reserved.IP {
		t.Fatalf("after the release was withdrawn: %+v", c)
	}

	// Released on request: back to the region.
	_, err = f.eng.ReleaseAddress(ctx, www.Namespace, www.Name, auto)
	testkit.Must(t, err)
	if _, err := f.api.GetAddress(ctx, reserved.ID); !exampleapi.IsNotFound(err) {
		t.Fatalf("released address: %v, want not found", err)
	}
	if _, ok, err := f.eng.GetAddress(ctx, www.Namespace, www.Name); err != nil || ok {
		t.Fatalf("GetAddress after the release: %v %v", ok, err)
	}
}

func (f *fixture) cloudAddress(t *testing.T, id string) *exampleapi.Address {
	t.Helper()
	a, err := f.api.GetAddress(testkit.Context(t), id)
	testkit.Must(t, err)
	return a
}

func (f *fixture) cloudLB(t *testing.T, id string) *exampleapi.LoadBalancer {
	t.Helper()
	lb, err := f.api.GetLoadBalancer(testkit.Context(t), id)
	testkit.Must(t, err)
	return lb
}

// A release left waiting by an earlier controller (its plan in the plan
// store only) is withdrawn by a restarted one: superseded, the address
// kept; withdrawn again, nothing waits.
func TestReleaseWithdrawnAfterRestart(t *testing.T) {
	store := newMemStore()
	f := newFixtureWith(t, 2, engine.Options{Plans: store})
	ctx := testkit.Context(t)
	www := lbmodel.Address{Namespace: "default", Name: "default-www"}
	reserved, out, err := f.eng.ReconcileAddress(ctx, www, auto)
	testkit.Must(t, err)
	store.keep(t, "", out)
	out, err = f.eng.ReleaseAddress(ctx, www.Namespace, www.Name, reviewed(annotations.ApplyManual))
	release := awaiting(t, err)
	store.keep(t, "", out)

	next := f.engine(t, 2, engine.Options{Plans: store})
	out, err = next.WithdrawRelease(ctx, www.Namespace, www.Name)
	if err != nil || out.Superseded == nil || out.Superseded.ID != release || next.Pending(objectref.Address(www.Namespace, www.Name)) != nil {
		t.Fatalf("WithdrawRelease after a restart = %+v, %v; want %s superseded, nothing pending", out, err, release)
	}
	if out, err = next.WithdrawRelease(ctx, www.Namespace, www.Name); err != nil || out.Superseded != nil {
		t.Fatalf("WithdrawRelease again = %+v, %v; want nothing superseded", out, err)
	}
	if c := f.cloudAddress(t, reserved.ID); c.IP != reserved.IP {
		t.Fatalf("after the release was withdrawn: %+v", c)
	}
}
