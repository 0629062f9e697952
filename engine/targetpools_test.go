package engine_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/example/cloud-provider-example/annotations"
	"github.com/example/cloud-provider-example/engine"
	"github.com/example/cloud-provider-example/exampleapi"
	"github.com/example/cloud-provider-example/internal/testkit"
	"github.com/example/cloud-provider-example/renderer"
	"github.com/example/cloud-provider-example/runner"
)

// reconcileOnPool is what the controller does for a Service on a pool.
func (f *fixture) reconcileOnPool(t *testing.T, e *engine.Engine, svc *corev1.Service, nodes []*corev1.Node) *engine.LoadBalancer {
	t.Helper()
	sel, _, err := renderer.Selection(annotations.Read(svc))
	if err != nil {
		t.Fatal(err)
	}
	id, _, err := e.ReconcileTargetPools(testkit.Context(t), sel, e.NodesOf(nodes), auto)
	if err != nil {
		t.Fatal(err)
	}
	lb, _, err := e.ReconcileLoadBalancerOnPool(testkit.Context(t), annotations.Read(svc), id, auto)
	if err != nil {
		t.Fatal(err)
	}
	return lb
}

// A node joining a cluster whose load balancers use target pools is one
// apply of the pools, whatever the number of load balancers; a Service of
// another node selection gets a pool of its own.
func TestNodeChurnIsOneApply(t *testing.T) {
	f := newFixture(t, 2)
	a, b := f.node(t, "node-a"), f.node(t, "node-b")
	b.Labels = map[string]string{"role": "ingress"}
	nodes := []*corev1.Node{a, b}
	var svcs []*corev1.Service
	for i := range 4 {
		svc := service(fmt.Sprintf("pooled-%d", i), 80)
		f.reconcileOnPool(t, f.eng, svc, nodes)
		svcs = append(svcs, svc)
	}
	ingress := service("ingress", 443)
	ingress.Annotations = map[string]string{string(annotations.LBNodeSelector): "role=ingress"}
	f.reconcileOnPool(t, f.eng, ingress, nodes)

	c := f.node(t, "node-c")
	nodes = append(nodes, c)
	applies := f.eng.Runner().Processes()["apply"]
	for _, svc := range append(svcs, ingress) {
		f.reconcileOnPool(t, f.eng, svc, nodes)
	}
	if n := f.eng.Runner().Processes()["apply"] - applies; n != 1 {
		t.Fatalf("a node joining took %d applies, want 1", n)
	}
	pools, err := f.api.ListTargetPools(testkit.Context(t), exampleapi.TargetPoolFilter{})
	if err != nil {
		t.Fatal(err)
	}
	byTargets := map[int]bool{}
	for _, p := range pools {
		byTargets[len(p.Targets)] = true
		if len(p.Targets) == 3 && !slices.Contains(p.Targets, instanceID(t, c)) {
			t.Fatalf("pool %s lacks the new node: %v", p.ID, p.Targets)
		}
	}
	if len(pools) != 2 || !byTargets[3] || !byTargets[1] {
		t.Fatalf("pools %+v", pools)
	}
	lbs, err := f.api.ListLoadBalancers(testkit.Context(t), exampleapi.LoadBalancerFilter{})
	if err != nil {
		t.Fatal(err)
	}
	for _, lb := range lbs {
		if lb.TargetPoolID == "" || len(lb.Targets) != 0 {
			t.Fatalf("load balancer %s lists targets %v (pool %q)", lb.ID, lb.Targets, lb.TargetPoolID)
		}
	}

	// A restarted controller keeps both pools in step before it has seen
	// a Service of each selection.
	next := f.engine(t, 2, engine.Options{})
	d := f.node(t, "node-d")
	d.Labels = map[string]string{"role": "ingress"}
	nodes = append(nodes, d)
	f.reconcileOnPool(t, next, svcs[0], nodes)
	pools, _ = f.api.ListTargetPools(testkit.Context(t), exampleapi.TargetPoolFilter{})
	for _, p := range pools {
		if !slices.Contains(p.Targets, instanceID(t, d)) {
			t.Fatalf("pool %s lost track of the new ingress node: %v", p.ID, p.Targets)
		}
	}
}

// Pools no Service selects any more are destroyed by a prune, in one
// apply, and a restarted controller knows it; one a load balancer still
// uses is kept, as the engine's PoolUsers says, or else refused by the
// cloud.
func TestPruneTargetPools(t *testing.T) {
	f := newFixture(t, 2)
	a, b := f.node(t, "node-a"), f.node(t, "node-b")
	b.Labels = map[string]string{"role": "ingress"}
	nodes := []*corev1.Node{a, b}
	web := service("web", 80)
	f.reconcileOnPool(t, f.eng, web, nodes)
	for _, sel := range []string{"role=ingress", "role=old"} {
		if _, _, err := f.eng.ReconcileTargetPools(testkit.Context(t), sel, f.eng.NodesOf(nodes), auto); err != nil {
			t.Fatal(err)
		}
	}
	pools := func() int {
		l, err := f.api.ListTargetPools(testkit.Context(t), exampleapi.TargetPoolFilter{})
		if err != nil {
			t.Fatal(err)
		}
		return len(l)
	}
	if n := pools(); n != 3 {
		t.Fatalf("%d pools; want 3", n)
	}

	pr, _, err := f.eng.PruneTargetPools(testkit.Context(t), []string{"", "role=ingress"}, f.eng.NodesOf(nodes), auto)
	if err != nil || !slices.Equal(pr.Destroyed, []string{"role=old"}) || pr.Kept != nil {
		t.Fatalf("prune: %+v, %v; want role=old pruned", pr, err)
	}
	if n := pools(); n != 2 {
		t.Fatalf("%d pools after the prune; want 2", n)
	}
	if has, _ := f.eng.HasTargetPool(testkit.Context(t), "role=old"); has {
		t.Error("the pruned selection is still known")
	}
	if pr, out, err := f.eng.PruneTargetPools(testkit.Context(t), []string{"", "role=ingress"}, f.eng.NodesOf(nodes), auto); err != nil || pr.Destroyed != nil || out != nil {
		t.Fatalf("a prune with nothing idle: %+v %+v %v; want nothing done", pr, out, err)
	}

	// A restarted controller knows what was pruned.
	next := f.engine(t, 2, engine.Options{})
	for sel, want := range map[string]bool{"": true, "role=ingress": true, "role=old": false} {
		if has, err := next.HasTargetPool(testkit.Context(t), sel); err != nil || has != want {
			t.Errorf("restarted: HasTargetPool(%q) = %v, %v; want %v", sel, has, err, want)
		}
	}

	// Asked which load balancers use a pool (the cloud's listing, as the
	// ccm asks), a prune keeps that pool and runs nothing: a load
	// balancer handed over keeps the pool it was applied with.
	users := f.engine(t, 2, engine.Options{PoolUsers: func(ctx context.Context, pools map[string]map[string]string) (map[string][]string, error) {
		return f.api.PoolUsers(ctx, "", pools)
	}})
	pr, out, err := users.PruneTargetPools(testkit.Context(t), []string{"role=ingress"}, users.NodesOf(nodes), auto)
	if err != nil || out != nil || pr.Destroyed != nil || len(pr.Kept[""]) != 1 || !strings.HasPrefix(pr.Kept[""][0], "lb-") {
		t.Fatalf("prune of a pool a load balancer uses: %+v, %+v, %v; want it kept for that load balancer, nothing run", pr, out, err)
	}
	if has, _ := users.HasTargetPool(testkit.Context(t), ""); !has || pools() != 2 {
		t.Fatalf("after a prune that kept it: known %v, %d pools", has, pools())
	}

	// web's load balancer still uses every node's pool: the cloud refuses
	// to destroy it, and it stays known.
	if _, _, err := f.eng.PruneTargetPools(testkit.Context(t), []string{"role=ingress"}, f.eng.NodesOf(nodes), auto); !errors.Is(err, runner.ErrInUse) {
		t.Fatalf("pruning a pool a load balancer uses: %v; want the cloud's refusal (runner.ErrInUse)", err)
	}
	if has, _ := f.eng.HasTargetPool(testkit.Context(t), ""); !has || pools() != 2 {
		t.Fatalf("after a refused prune: known %v, %d pools; want every node's pool kept", has, pools())
	}
}

// A node leaving the pools drains: the pools' apply removes it from the
// targets and the cloud keeps its connections for the configured delay.
func TestNodeLeavingDrains(t *testing.T) {
	f := newFixture(t, 2)
	f.configure = func(c *renderer.Config) { c.DeregistrationDelay = time.Minute }
	e := f.engine(t, 2, engine.Options{})
	a, b := f.node(t, "node-a"), f.node(t, "node-b")
	id, _, err := e.ReconcileTargetPools(testkit.Context(t), "", e.NodesOf([]*corev1.Node{a, b}), auto)
	if err != nil {
		t.Fatal(err)
	}
	left := time.Now()
	if _, _, err := e.ReconcileTargetPools(testkit.Context(t), "", e.NodesOf([]*corev1.Node{a}), auto); err != nil {
		t.Fatal(err)
	}
	tp, err := f.api.GetTargetPool(testkit.Context(t), id)
	if err != nil {
		t.Fatal(err)
	}
	if tp.DeregistrationDelaySeconds != 60 || len(tp.Targets) != 1 || len(tp.Draining) != 1 ||
		slices.Contains(tp.Targets, tp.Draining[0].ID) || tp.Draining[0].Until.Before(left.Add(59*time.Second)) {
		t.Fatalf("pool after node-b left: %+v; want node-b draining for a minute", tp)
	}
}
