package engine_test

import (
	"maps"
	"testing"

	"github.com/example/cloud-provider-example/engine"
	"github.com/example/cloud-provider-example/exampleapi"
	"github.com/example/cloud-provider-example/internal/testkit"
	"github.com/example/cloud-provider-example/internal/tftest"
	"github.com/example/cloud-provider-example/lbmodel"
)

// A Gateway's load balancer, through real terraform against the
// simulator: its rules route requests as rendered (/api to one backend,
// /web shared 80/20), an unchanged Gateway costs no terraform process, a
// weight change updates the same load balancer in place, and removing
// the Gateway destroys it. On terraform and OpenTofu.
func TestGatewayLifecycle(t *testing.T) { tftest.OnDistributions(t, testGatewayLifecycle) }

func testGatewayLifecycle(t *testing.T, tc tftest.Toolchain) {
	f := newFixtureOn(t, tc, 1, engine.Options{PlanText: true})
	ctx := testkit.Context(t)
	n := f.node(t, "n1")
	pool, err := f.api.CreateTargetPool(ctx, exampleapi.CreateTargetPoolRequest{Name: "nodes", Region: region, Targets: []string{instanceID(t, n)}})
	testkit.Must(t, err)
	web := func(b, c int) lbmodel.Rule {
		return lbmodel.Rule{Name: "shop/web/1.0:80@a.example", ListenerPort: 80, Priority: 2, Hostname: "a.example", PathType: "prefix", Path: "/web",
			Backends: []lbmodel.Backend{{TargetPoolID: pool.ID, Port: 30002, Weight: b}, {TargetPoolID: pool.ID, Port: 30003, Weight: c}}}
	}
	gw := lbmodel.LoadBalancer{Namespace: "infra", Name: "gw", UID: "uid-gw",
		Listeners: []lbmodel.Listener{{Protocol: "http", Port: 80}},
		Rules: []lbmodel.Rule{
			{Name: "shop/web/0.0:80@a.example", ListenerPort: 80, Priority: 1, Hostname: "a.example", PathType: "prefix", Path: "/api",
				Backends: []lbmodel.Backend{{TargetPoolID: pool.ID, Port: 30001, Weight: 1}}},
			web(80, 20),
		}}
	lb, _, err := f.eng.ReconcileGateway(ctx, gw, nil, auto)
	testkit.Must(t, err)
	if lb == nil || lb.ID == "" || lb.IPv4 == "" {
		t.Fatalf("load balancer %+v", lb)
	}
	routes := func(path string, count int, want map[string]int) {
		t.Helper()
		out, err := f.api.SimulateRequests(ctx, lb.ID, exampleapi.SimulatedRequest{ListenerPort: 80, Host: "a.example", Path: path, Count: count})
		testkit.Must(t, err)
		if out.Status != 200 || !maps.Equal(out.Backends, want) {
			t.Errorf("%d requests to %s: %+v, want %v", count, path, out, want)
		}
	}
	at := func(port string) string { return pool.ID + ":" + port }
	routes("/api/v1", 3, map[string]int{at("30001"): 3})
	routes("/web", 100, map[string]int{at("30002"): 80, at("30003"): 20})

	procs := total(f.eng.Runner().Processes())
	again, _, err := f.eng.ReconcileGateway(ctx, gw, nil, auto)
	testkit.Must(t, err)
	if n := total(f.eng.Runner().Processes()); n != procs || again.ID != lb.ID {
		t.Errorf("unchanged Gateway: %d terraform processes, load balancer %s; want none, %s", n-procs, again.ID, lb.ID)
	}

	gw.Rules[1] = web(50, 50)
	moved, _, err := f.eng.ReconcileGateway(ctx, gw, nil, auto)
	testkit.Must(t, err)
	if moved.ID != lb.ID {
		t.Errorf("a weight change replaced the load balancer: %s, was %s", moved.ID, lb.ID)
	}
	routes("/web", 100, map[string]int{at("30002"): 50, at("30003"): 50})

	_, err = f.eng.RemoveGateway(ctx, gw, auto)
	testkit.Must(t, err)
	if n := f.countLBs(t); n != 0 {
		t.Errorf("%d load balancers after the Gateway's removal, want 0", n)
	}
	if _, exists, err := f.eng.GetGatewayLoadBalancer(ctx, gw); err != nil || exists {
		t.Errorf("after removal: exists %v, %v", exists, err)
	}
}

// A Gateway's operations wait for terraform slots in its namespace's fair
// share, not the cluster's (the route set's and the pools'): routes of
// many namespaces change it, and its one workspace runs one at a time.
func TestGatewayFairShare(t *testing.T) {
	f := newFixture(t, 1)
	_, j, err := f.eng.RenderGateway(lbmodel.LoadBalancer{Namespace: "infra", Name: "gw", UID: "uid-gw", Listeners: []lbmodel.Listener{{Protocol: "http", Port: 80}}})
	testkit.Must(t, err)
	if j.Share != "infra" {
		t.Errorf("a Gateway's job shares %q, want its namespace infra", j.Share)
	}
}
