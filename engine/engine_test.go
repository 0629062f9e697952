package engine_test

import (
	"os"
	"slices"
	"testing"

	corev1 "k8s.io/api/core/v1"

	"github.com/example/cloud-provider-example/annotations"
	"github.com/example/cloud-provider-example/engine"
	"github.com/example/cloud-provider-example/exampleapi"
	"github.com/example/cloud-provider-example/internal/testkit"
	"github.com/example/cloud-provider-example/internal/tftest"
	"github.com/example/cloud-provider-example/lbmodel"
	"github.com/example/cloud-provider-example/renderer"
)

// On both engines (terraform and tofu).
func TestServiceLifecycle(t *testing.T) { tftest.OnDistributions(t, testServiceLifecycle) }

func testServiceLifecycle(t *testing.T, tc tftest.Toolchain) {
	f := newFixtureOn(t, tc, 2, engine.Options{PlanText: true})
	a, b := f.node(t, "node-a"), f.node(t, "node-b")
	svc := service("web", 80, 443)

	lb, out, err := f.eng.ReconcileLoadBalancer(testkit.Context(t), annotations.Read(svc), []*corev1.Node{a}, auto)
	if err != nil {
		t.Fatal(err)
	}
	if lb.Status != "active" || lb.IPv4 == "" || lb.Hostname == "" || out.Applied.Summary.Add != 1 {
		t.Fatalf("create: %+v %+v", lb, out)
	}
	cloud, err := f.api.GetLoadBalancer(testkit.Context(t), lb.ID)
	if err != nil {
		t.Fatal(err)
	}
	if len(cloud.Listeners) != 2 || !slices.Equal(cloud.Targets, []string{instanceID(t, a)}) || cloud.Name != renderer.LoadBalancerName(svc, "test") {
		t.Fatalf("cloud LB does not match the Service: %+v", cloud)
	}

	procs := total(f.eng.Runner().Processes())
	got, exists, err := f.eng.GetLoadBalancer(testkit.Context(t), annotations.Read(svc))
	if err != nil || !exists || got.IPv4 != lb.IPv4 {
		t.Fatalf("get: %+v %v %v", got, exists, err)
	}
	if total(f.eng.Runner().Processes()) != procs {
		t.Fatal("GetLoadBalancer started terraform although the outputs were recorded")
	}

	// A node joins: the targets follow, in place.
	lb2, out, err := f.eng.ReconcileLoadBalancer(testkit.Context(t), annotations.Read(svc), []*corev1.Node{b, a}, auto)
	if err != nil {
		t.Fatal(err)
	}
	if lb2.ID != lb.ID || out.Applied.Summary.Change != 1 {
		t.Fatalf("add node: %+v %+v", lb2, out)
	}
	cloud, _ = f.api.GetLoadBalancer(testkit.Context(t), lb.ID)
	if len(cloud.Targets) != 2 {
		t.Fatalf("targets after node join: %v", cloud.Targets)
	}

	// Same Service, nodes in another order: nothing to do, no terraform.
	procs = total(f.eng.Runner().Processes())
	if _, out, err = f.eng.ReconcileLoadBalancer(testkit.Context(t), annotations.Read(svc), []*corev1.Node{a, b}, auto); err != nil || !out.Result.FastPath {
		t.Fatalf("reordered nodes: %+v err=%v", out, err)
	}
	if total(f.eng.Runner().Processes()) != procs {
		t.Fatal("an unchanged Service started terraform")
	}

	if _, err := f.eng.RemoveLoadBalancer(testkit.Context(t), annotations.Read(svc), auto); err != nil {
		t.Fatal(err)
	}
	if _, err := f.api.GetLoadBalancer(testkit.Context(t), lb.ID); !exampleapi.IsNotFound(err) {
		t.Fatalf("LB survived delete: %v", err)
	}
	if entries, _ := os.ReadDir(f.stateDir); len(entries) != 0 {
		t.Fatalf("state left after delete: %v", entries)
	}
	if _, exists, err := f.eng.GetLoadBalancer(testkit.Context(t), annotations.Read(svc)); err != nil || exists {
		t.Fatalf("get after delete: exists=%v err=%v", exists, err)
	}
	if _, err := f.eng.RemoveLoadBalancer(testkit.Context(t), annotations.Read(svc), auto); err != nil {
		t.Fatalf("second delete: %v", err)
	}
}

func TestRouteSet(t *testing.T) {
	f := newFixture(t, 2)
	a, b := f.node(t, "node-a"), f.node(t, "node-b")
	want := []lbmodel.Route{
		{Destination: "10.244.1.0/24", TargetInstanceID: instanceID(t, a), NodeName: "node-a"},
		{Destination: "fd00:244:1::/64", TargetInstanceID: instanceID(t, a), NodeName: "node-a"},
		{Destination: "10.244.2.0/24", TargetInstanceID: instanceID(t, b), NodeName: "node-b"},
	}
	routes, _, err := f.eng.ReconcileRoutes(testkit.Context(t), want, auto)
	if err != nil {
		t.Fatal(err)
	}
	if len(routes) != 3 || routes[0].Destination != "10.244.1.0/24" || routes[0].Status != "active" || routes[0].ID == "" {
		t.Fatalf("routes: %+v", routes)
	}
	nets, _ := f.api.ListNetworks(testkit.Context(t), region, "default")
	cloud, _ := f.api.ListRoutes(testkit.Context(t), nets[0].ID)
	if len(cloud) != 3 {
		t.Fatalf("cloud has %d routes", len(cloud))
	}
	// Node b leaves: only its route goes.
	routes, out, err := f.eng.ReconcileRoutes(testkit.Context(t), want[:2], auto)
	if err != nil {
		t.Fatal(err)
	}
	if len(routes) != 2 || out.Applied.Summary.Remove != 1 || out.Applied.Summary.Add != 0 {
		t.Fatalf("after node leaves: %+v %+v", routes, out)
	}
	read, err := f.eng.Routes(testkit.Context(t))
	if err != nil || len(read) != 2 {
		t.Fatalf("read routes: %+v %v", read, err)
	}
}

func total(m map[string]int64) (n int64) {
	for _, v := range m {
		n += v
	}
	return n
}

// An object whose state was never stored costs no terraform process to
// read or delete (and, on pg, creates no workspace just to read it).
func TestNeverAppliedCostsNothing(t *testing.T) {
	f := newFixture(t, 2)
	svc := service("never", 80)
	if _, exists, err := f.eng.GetLoadBalancer(testkit.Context(t), annotations.Read(svc)); err != nil || exists {
		t.Fatalf("get: exists=%v %v", exists, err)
	}
	if routes, err := f.eng.Routes(testkit.Context(t)); err != nil || len(routes) != 0 {
		t.Fatalf("routes: %v %v", routes, err)
	}
	if _, err := f.eng.RemoveLoadBalancer(testkit.Context(t), annotations.Read(svc), auto); err != nil {
		t.Fatal(err)
	}
	if p := f.eng.Runner().Processes(); len(p) != 0 {
		t.Fatalf("terraform ran for an object without state: %v", p)
	}
}
