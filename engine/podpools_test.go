package engine_test

import (
	"errors"
	"maps"
	"slices"
	"testing"

	corev1 "k8s.io/api/core/v1"

	"github.com/example/cloud-provider-example/engine"
	"github.com/example/cloud-provider-example/exampleapi"
	"github.com/example/cloud-provider-example/internal/testkit"
	"github.com/example/cloud-provider-example/lbmodel"
)

// A pod pool in a workspace of its own: applied as a pool of target type
// ip the Gateway's rules forward to with port 0; its targets follow in
// place without touching the load balancer; unchanged it costs no
// terraform process; while a load balancer forwards to it the cloud
// refuses its destroy, which succeeds once nothing does.
func TestPodPool(t *testing.T) {
	f := newFixture(t, 1)
	ctx := testkit.Context(t)
	n := f.node(t, "n1")
	nets, err := f.api.ListNetworks(ctx, region, "")
	testkit.Must(t, err)
	_, err = f.api.CreateRoute(ctx, nets[0].ID, exampleapi.CreateRouteRequest{DestinationCIDR: "10.244.1.0/24", TargetInstanceID: instanceID(t, n)})
	testkit.Must(t, err)

	web := lbmodel.PodPool{ServicePort: lbmodel.ServicePort{Namespace: "shop", Service: "web", Port: 80, Protocol: corev1.ProtocolTCP},
		Targets: []string{"10.244.1.5:8080", "10.244.1.6:8080"}}
	id, _, err := f.eng.ReconcilePodPool(ctx, web, auto)
	testkit.Must(t, err)
	pool, err := f.api.GetTargetPool(ctx, id)
	testkit.Must(t, err)
	if pool.TargetType != exampleapi.TargetTypeIP || !slices.Equal(pool.Targets, web.Targets) {
		t.Fatalf("cloud pool %+v", pool)
	}

	gw := lbmodel.LoadBalancer{Namespace: "infra", Name: "gw", UID: "uid-gw",
		Listeners: []lbmodel.Listener{{Protocol: "http", Port: 80}},
		Rules: []lbmodel.Rule{{Name: "shop/web/0.0:80", ListenerPort: 80, Priority: 1,
			Backends: []lbmodel.Backend{{TargetPoolID: id, Port: 0, Weight: 1}}}}}
	lb, _, err := f.eng.ReconcileGateway(ctx, gw, nil, auto)
	testkit.Must(t, err)
	out, err := f.api.SimulateRequests(ctx, lb.ID, exampleapi.SimulatedRequest{ListenerPort: 80, Host: "a.example", Path: "/", Count: 4})
	testkit.Must(t, err)
	if out.Status != 200 || !maps.Equal(out.Backends, map[string]int{id + ":0": 4}) {
		t.Fatalf("requests: %+v", out)
	}

	// A rollout: the pool changes in place, the load balancer does not.
	web.Targets = []string{"10.244.1.6:8080", "10.244.1.7:8080"}
	lbVersion := f.cloudLB(t, lb.ID).Version
	again, res, err := f.eng.ReconcilePodPool(ctx, web, auto)
	testkit.Must(t, err)
	if s := res.Applied.Summary; again != id || s.Add != 0 || s.Change != 1 || s.Remove != 0 {
		t.Fatalf("rollout: pool %s (was %s), plan %s; want one in-place change", again, id, s)
	}
	if v := f.cloudLB(t, lb.ID).Version; v != lbVersion {
		t.Errorf("the load balancer moved from version %d to %d", lbVersion, v)
	}
	if got, err := f.eng.PodPoolID(ctx, web.Ref()); err != nil || got != id {
		t.Errorf("PodPoolID = %q, %v; want %s", got, err, id)
	}
	procs := total(f.eng.Runner().Processes())
	if _, _, err := f.eng.ReconcilePodPool(ctx, web, auto); err != nil || total(f.eng.Runner().Processes()) != procs {
		t.Errorf("unchanged pod pool: %v, %d terraform processes", err, total(f.eng.Runner().Processes())-procs)
	}

	// A target the cloud cannot route is refused by the cloud, naming it.
	bad := web
	bad.Targets = []string{"10.244.9.5:8080"}
	if _, _, err := f.eng.ReconcilePodPool(ctx, bad, auto); err == nil {
		t.Fatal("a pod outside the routed pod CIDRs was applied")
	}

	if _, err := f.eng.DestroyPodPool(ctx, web.Ref(), auto); !errors.Is(err, engine.ErrInUse) {
		t.Fatalf("destroy while the Gateway forwards to it: %v, want ErrInUse", err)
	}
	_, err = f.eng.RemoveGateway(ctx, gw, auto)
	testkit.Must(t, err)
	_, err = f.eng.DestroyPodPool(ctx, web.Ref(), auto)
	testkit.Must(t, err)
	if _, err := f.api.GetTargetPool(ctx, id); !exampleapi.IsNotFound(err) {
		t.Fatalf("destroyed pod pool: %v", err)
	}
	if got, err := f.eng.PodPoolID(ctx, web.Ref()); err != nil || got != "" {
		t.Errorf("PodPoolID after the destroy = %q, %v; want none", got, err)
	}
}
