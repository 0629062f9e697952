package engine_test

import (
	"os"
	"slices"
	"testing"

	corev1 "k8s.io/api/core/v1"

	"github.com/example/cloud-provider-example/exampleapi"
	"github.com/example/cloud-provider-example/renderer"
)

func TestServiceLifecycle(t *testing.T) {
	f := newFixture(t, 2)
	a, b := f.node(t, "node-a"), f.node(t, "node-b")
	svc := service("web", 80, 443)

	lb, res, err := f.eng.EnsureLoadBalancer(ctxT(t), svc, []*corev1.Node{a})
	if err != nil {
		t.Fatal(err)
	}
	if lb.Status != "active" || lb.IPv4 == "" || lb.Hostname == "" || res.Plan.Summary.Add != 1 {
		t.Fatalf("create: %+v %+v", lb, res.Plan.Summary)
	}
	cloud, err := f.api.GetLoadBalancer(ctxT(t), lb.ID)
	if err != nil {
		t.Fatal(err)
	}
	if len(cloud.Listeners) != 2 || !slices.Equal(cloud.Targets, []string{instanceID(t, a)}) || cloud.Name != renderer.LoadBalancerName(svc, "test") {
		t.Fatalf("cloud LB does not match the Service: %+v", cloud)
	}

	procs := total(f.eng.Runner().Processes())
	got, exists, err := f.eng.GetLoadBalancer(ctxT(t), svc)
	if err != nil || !exists || got.IPv4 != lb.IPv4 {
		t.Fatalf("get: %+v %v %v", got, exists, err)
	}
	if total(f.eng.Runner().Processes()) != procs {
		t.Fatal("GetLoadBalancer started terraform although the outputs were recorded")
	}

	// A node joins: the targets follow, in place.
	lb2, res, err := f.eng.EnsureLoadBalancer(ctxT(t), svc, []*corev1.Node{b, a})
	if err != nil {
		t.Fatal(err)
	}
	if lb2.ID != lb.ID || res.Plan.Summary.Change != 1 {
		t.Fatalf("add node: %+v %+v", lb2, res.Plan.Summary)
	}
	cloud, _ = f.api.GetLoadBalancer(ctxT(t), lb.ID)
	if len(cloud.Targets) != 2 {
		t.Fatalf("targets after node join: %v", cloud.Targets)
	}

	// Same Service, nodes in another order: nothing to do, no terraform.
	procs = total(f.eng.Runner().Processes())
	if _, res, err = f.eng.EnsureLoadBalancer(ctxT(t), svc, []*corev1.Node{a, b}); err != nil || !res.FastPath {
		t.Fatalf("reordered nodes: fast=%v err=%v", res != nil && res.FastPath, err)
	}
	if total(f.eng.Runner().Processes()) != procs {
		t.Fatal("an unchanged Service started terraform")
	}

	if _, err := f.eng.DeleteLoadBalancer(ctxT(t), svc); err != nil {
		t.Fatal(err)
	}
	if _, err := f.api.GetLoadBalancer(ctxT(t), lb.ID); !exampleapi.IsNotFound(err) {
		t.Fatalf("LB survived delete: %v", err)
	}
	if entries, _ := os.ReadDir(f.stateDir); len(entries) != 0 {
		t.Fatalf("state left after delete: %v", entries)
	}
	if _, exists, err := f.eng.GetLoadBalancer(ctxT(t), svc); err != nil || exists {
		t.Fatalf("get after delete: exists=%v err=%v", exists, err)
	}
	if _, err := f.eng.DeleteLoadBalancer(ctxT(t), svc); err != nil {
		t.Fatalf("second delete: %v", err)
	}
}

func TestRouteSet(t *testing.T) {
	f := newFixture(t, 2)
	a, b := f.node(t, "node-a"), f.node(t, "node-b")
	want := []renderer.Route{
		{Destination: "10.244.1.0/24", TargetInstanceID: instanceID(t, a), NodeName: "node-a"},
		{Destination: "fd00:244:1::/64", TargetInstanceID: instanceID(t, a), NodeName: "node-a"},
		{Destination: "10.244.2.0/24", TargetInstanceID: instanceID(t, b), NodeName: "node-b"},
	}
	routes, _, err := f.eng.EnsureRoutes(ctxT(t), want)
	if err != nil {
		t.Fatal(err)
	}
	if len(routes) != 3 || routes[0].Destination != "10.244.1.0/24" || routes[0].Status != "active" || routes[0].ID == "" {
		t.Fatalf("routes: %+v", routes)
	}
	nets, _ := f.api.ListNetworks(ctxT(t), region, "default")
	cloud, _ := f.api.ListRoutes(ctxT(t), nets[0].ID)
	if len(cloud) != 3 {
		t.Fatalf("cloud has %d routes", len(cloud))
	}
	// Node b leaves: only its route goes.
	routes, res, err := f.eng.EnsureRoutes(ctxT(t), want[:2])
	if err != nil {
		t.Fatal(err)
	}
	if len(routes) != 2 || res.Plan.Summary.Remove != 1 || res.Plan.Summary.Add != 0 {
		t.Fatalf("after node leaves: %+v %+v", routes, res.Plan.Summary)
	}
	read, err := f.eng.Routes(ctxT(t))
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
