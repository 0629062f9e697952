package engine_test

import (
	"errors"
	"maps"
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"

	"github.com/example/cloud-provider-example/annotations"
	"github.com/example/cloud-provider-example/engine"
	"github.com/example/cloud-provider-example/exampleapi"
	"github.com/example/cloud-provider-example/internal/testkit"
	"github.com/example/cloud-provider-example/lbmodel"
)

// podFixture is a fixture with node n1, whose pod CIDR 10.244.1.0/24 the
// cloud routes (as the route controller would): pods there may be
// targets.
func podFixture(t *testing.T) (*fixture, *corev1.Node) {
	f := newFixture(t, 1)
	n := f.node(t, "n1")
	nets, err := f.api.ListNetworks(testkit.Context(t), region, "")
	testkit.Must(t, err)
	_, err = f.api.CreateRoute(testkit.Context(t), nets[0].ID, exampleapi.CreateRouteRequest{DestinationCIDR: "10.244.1.0/24", TargetInstanceID: instanceID(t, n)})
	testkit.Must(t, err)
	return f, n
}

// A pod pool in a workspace of its own: applied as a pool of target type
// ip the Gateway's rules forward to with port 0; its targets follow in
// place without touching the load balancer; unchanged it costs no
// terraform process; while a load balancer forwards to it the cloud
// refuses its destroy, which succeeds once nothing does.
func TestPodPool(t *testing.T) {
	f, _ := podFixture(t)
	ctx := testkit.Context(t)

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
	lb, gwOut, err := f.eng.ReconcileGateway(ctx, gw, nil, auto)
	testkit.Must(t, err)
	out, err := f.api.SimulateRequests(ctx, lb.ID, exampleapi.SimulatedRequest{ListenerPort: 80, Host: "a.example", Path: "/", Count: 4})
	testkit.Must(t, err)
	if out.Status != 200 || !maps.Equal(out.Backends, map[string]int{id + ":0": 4}) {
		t.Fatalf("requests: %+v", out)
	}

	// A rollout: the pool changes in place, the load balancer does not;
	// its plan, applied under the policy, costs a plan and an apply, no
	// show for its text (the Gateway's plan has its text).
	web.Targets = []string{"10.244.1.6:8080", "10.244.1.7:8080"}
	lbVersion := f.cloudLB(t, lb.ID).Version
	before := f.eng.Runner().Processes()
	again, res, err := f.eng.ReconcilePodPool(ctx, web, auto)
	testkit.Must(t, err)
	if s := res.Applied.Summary; again != id || s.Add != 0 || s.Change != 1 || s.Remove != 0 {
		t.Fatalf("rollout: pool %s (was %s), plan %s; want one in-place change", again, id, s)
	}
	after := f.eng.Runner().Processes()
	if res.Applied.Text != "" || after["show"] != before["show"] || after["plan"] != before["plan"]+1 || after["apply"] != before["apply"]+1 {
		t.Errorf("rollout: plan text %q, terraform processes %v then %v; want one plan and one apply", res.Applied.Text, before, after)
	}
	if !strings.Contains(gwOut.Applied.Text, "will be created") {
		t.Errorf("the Gateway's applied plan has no text: %q", gwOut.Applied.Text)
	}
	// Held for approval, a pool's plan is rendered for the approver.
	held := web
	held.Targets = []string{"10.244.1.8:8080"}
	_, _, err = f.eng.ReconcilePodPool(ctx, held, reviewed(annotations.ApplyPlanOnly))
	pend := f.eng.Pending(web.Ref())
	if awaiting(t, err) == "" || pend == nil || !strings.Contains(pend.Text, "10.244.1.8:8080") {
		t.Fatalf("held pool plan %+v: %v", pend, err)
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

// A Service of target type ip: its load balancer forwards each port to
// that port's pod pool by a rule, with no targets of its own and no node
// port; the pool rolls without touching it; it is destroyed (read for
// its workspace alone) without its pools' ids.
func TestServiceOnPodPools(t *testing.T) {
	f, n := podFixture(t)
	ctx := testkit.Context(t)

	svc := service("web", 80)
	svc.Spec.Ports[0].NodePort = 0
	svc.Annotations = map[string]string{string(annotations.LBTargetType): annotations.TargetTypeIP}
	in := annotations.Read(svc)
	ports, err := engine.PodPorts(in)
	testkit.Must(t, err)
	want := lbmodel.ServicePort{Namespace: svc.Namespace, Service: "web", Port: 80, Protocol: corev1.ProtocolTCP}
	if !slices.Equal(ports, []lbmodel.ServicePort{want}) {
		t.Fatalf("PodPorts = %v, want %v", ports, want)
	}
	pool := lbmodel.PodPool{ServicePort: want, Targets: []string{"10.244.1.5:8080"}}
	id, _, err := f.eng.ReconcilePodPool(ctx, pool, auto)
	testkit.Must(t, err)

	if _, _, err := f.eng.ReconcileLoadBalancer(ctx, in, []*corev1.Node{n}, auto); err == nil {
		t.Fatal("a Service of target type ip was reconciled without its pod pools")
	}
	lb, _, err := f.eng.ReconcileLoadBalancerOnPods(ctx, in, map[lbmodel.ServicePort]string{want: id}, auto)
	testkit.Must(t, err)
	cloud := f.cloudLB(t, lb.ID)
	if len(cloud.Targets) != 0 || cloud.TargetPoolID != "" || len(cloud.Rules) != 1 ||
		cloud.Rules[0].Backends[0].TargetPoolID != id || cloud.Rules[0].Backends[0].Port != 0 {
		t.Fatalf("cloud load balancer: targets %v, pool %q, rules %+v; want one rule to pod pool %s", cloud.Targets, cloud.TargetPoolID, cloud.Rules, id)
	}
	out, err := f.api.SimulateRequests(ctx, lb.ID, exampleapi.SimulatedRequest{ListenerPort: 80, Count: 2})
	testkit.Must(t, err)
	if !maps.Equal(out.Backends, map[string]int{id + ":0": 2}) {
		t.Fatalf("requests: %+v", out)
	}

	pool.Targets = []string{"10.244.1.6:8080"}
	version := cloud.Version
	_, _, err = f.eng.ReconcilePodPool(ctx, pool, auto)
	testkit.Must(t, err)
	if v := f.cloudLB(t, lb.ID).Version; v != version {
		t.Errorf("a rollout moved the load balancer from version %d to %d", version, v)
	}

	_, err = f.eng.RemoveLoadBalancer(ctx, in, auto)
	testkit.Must(t, err)
	if _, err := f.api.GetLoadBalancer(ctx, lb.ID); !exampleapi.IsNotFound(err) {
		t.Fatalf("load balancer after the Service's removal: %v", err)
	}
	_, err = f.eng.DestroyPodPool(ctx, pool.Ref(), auto)
	testkit.Must(t, err)
}
