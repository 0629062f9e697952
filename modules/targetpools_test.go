package modules_test

import (
	"context"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/terraform-exec/tfexec"

	"github.com/example/cloud-provider-example/exampleapi"
	"github.com/example/cloud-provider-example/internal/tftest"
	"github.com/example/cloud-provider-example/modules"
	"github.com/example/cloud-provider-example/simulator/simtest"
)

// poolsRoot is a root module calling the targetpools module with pools
// (key -> instance ids) and, for lbs > 0, that many loadbalancer calls on
// the pool lbPool, as one configuration.
func poolsRoot(sim *simtest.Sim, pools map[string][]string, lbs int, lbPool string) string {
	var b strings.Builder
	b.WriteString(providerHeader(sim) + `
module "pools" {
  source      = "./modules/targetpools"
  name_prefix = "k8s-prod-"
  pools = {
`)
	for _, k := range slices.Sorted(maps.Keys(pools)) {
		q := make([]string, len(pools[k]))
		for i, id := range pools[k] {
			q[i] = fmt.Sprintf("%q", id)
		}
		fmt.Fprintf(&b, "    %q = { targets = [%s], tags = { \"k8s.example.com/cluster-id\" = \"prod\" } }\n", k, strings.Join(q, ", "))
	}
	b.WriteString("  }\n}\n")
	for i := range lbs {
		fmt.Fprintf(&b, `
module "lb_%d" {
  source         = "./modules/loadbalancer"
  name           = "k8s-prod-svc-%d"
  listeners      = [{ protocol = "tcp", port = 80, target_port = 30080 }]
  target_pool_id = module.pools.ids[%q]
  tags = {
    "k8s.example.com/cluster-id"  = "prod"
    "k8s.example.com/service-uid" = "uid-%d"
  }
}
`, i, i, lbPool, i)
	}
	return b.String()
}

// poolsEnv is a simulator with instances n0..n(nodes-1) and a workspace
// with the shipped modules.
type poolsEnv struct {
	sim    *simtest.Sim
	client *exampleapi.Client
	nodes  []string
	dir    string
	tc     tftest.Toolchain
	tf     *tfexec.Terraform
}

func newPoolsEnv(t testing.TB, nodes int) *poolsEnv {
	tc := tftest.Get(t)
	sim := simtest.Start(t, simtest.WithProvisionDelay(0))
	c, err := exampleapi.New(exampleapi.Options{Endpoint: sim.URL, Token: sim.Token})
	if err != nil {
		t.Fatal(err)
	}
	e := &poolsEnv{sim: sim, client: c, dir: t.TempDir(), tc: tc}
	for i := range nodes {
		in, err := c.CreateInstance(context.Background(), exampleapi.CreateInstanceRequest{
			Name: fmt.Sprintf("n%d", i), Type: "standard-2", Zone: "ex-west-1a"})
		if err != nil {
			t.Fatal(err)
		}
		e.nodes = append(e.nodes, in.ID)
	}
	if _, err := modules.WriteTo(filepath.Join(e.dir, "modules")); err != nil {
		t.Fatal(err)
	}
	return e
}

// init writes the first configuration and runs terraform init (which
// installs the module calls it has).
func (e *poolsEnv) init(t testing.TB, src string) {
	t.Helper()
	e.write(t, src)
	e.tf = e.tc.Init(t, e.dir)
}

func (e *poolsEnv) write(t testing.TB, src string) {
	t.Helper()
	if err := os.WriteFile(filepath.Join(e.dir, "main.tf"), []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
}

// planAndApply plans into a file and applies it, as the controller's
// runner does, and returns the plan's changed resource addresses and how
// long plan and apply took.
func (e *poolsEnv) planAndApply(t testing.TB, src string) (changed []string, plan, apply time.Duration) {
	t.Helper()
	ctx := context.Background()
	e.write(t, src)
	planFile := filepath.Join(e.dir, "change.tfplan")
	start := time.Now()
	if _, err := e.tf.Plan(ctx, tfexec.Out(planFile)); err != nil {
		t.Fatalf("plan: %v", err)
	}
	plan = time.Since(start)
	p, err := e.tf.ShowPlanFile(ctx, planFile)
	if err != nil {
		t.Fatal(err)
	}
	for _, rc := range p.ResourceChanges {
		if !rc.Change.Actions.NoOp() && !rc.Change.Actions.Read() {
			changed = append(changed, fmt.Sprintf("%s %v", rc.Address, rc.Change.Actions))
		}
	}
	start = time.Now()
	if err := e.tf.Apply(ctx, tfexec.DirOrPlan(planFile)); err != nil {
		t.Fatalf("apply: %v", err)
	}
	return changed, plan, time.Since(start)
}

func (e *poolsEnv) lbs(t testing.TB) []exampleapi.LoadBalancer {
	t.Helper()
	lbs, err := e.client.ListLoadBalancers(context.Background(), exampleapi.LoadBalancerFilter{})
	if err != nil {
		t.Fatal(err)
	}
	return lbs
}

func (e *poolsEnv) pools(t testing.TB) map[string]exampleapi.TargetPool {
	t.Helper()
	list, err := e.client.ListTargetPools(context.Background(), exampleapi.TargetPoolFilter{})
	if err != nil {
		t.Fatal(err)
	}
	byName := map[string]exampleapi.TargetPool{}
	for _, tp := range list {
		byName[tp.Name] = tp
	}
	return byName
}

// TestTargetPoolsModule applies the targetpools module and ten
// loadbalancer calls on one of its pools with real terraform against the
// simulator: a node joining is one in-place update of that pool and no
// change of any load balancer; moving every load balancer to another pool
// and dropping the old one is one apply (create_before_destroy orders it);
// destroy removes everything. The time of the node-join apply is logged
// (issue 11 asks for <= 2 applies in <= 5 s).
func TestTargetPoolsModule(t *testing.T) {
	e := newPoolsEnv(t, 4)
	n := e.nodes
	const lbCount = 10
	e.init(t, poolsRoot(e.sim, nil, lbCount, "all"))

	changed, _, _ := e.planAndApply(t, poolsRoot(e.sim, map[string][]string{"all": n[:2], "zone-a": n[:1]}, lbCount, "all"))
	if len(changed) != 2+lbCount {
		t.Fatalf("first apply changed %d resources, want %d: %v", len(changed), 2+lbCount, changed)
	}
	pools := e.pools(t)
	all, zoneA := pools["k8s-prod-all"], pools["k8s-prod-zone-a"]
	before := map[string]int64{}
	for _, lb := range e.lbs(t) {
		if lb.TargetPoolID != all.ID || len(lb.Targets) != 0 {
			t.Fatalf("load balancer %s not on pool %s: %+v", lb.Name, all.ID, lb.LoadBalancerSpec)
		}
		before[lb.ID] = lb.Version
	}
	if len(before) != lbCount {
		t.Fatalf("%d load balancers, want %d", len(before), lbCount)
	}

	// A node joins: only the pool changes.
	changed, plan, apply := e.planAndApply(t, poolsRoot(e.sim, map[string][]string{"all": n[:3], "zone-a": n[:1]}, lbCount, "all"))
	want := []string{`module.pools.example_target_pool.this["all"] [update]`}
	if !slices.Equal(changed, want) {
		t.Errorf("node join planned %v, want %v", changed, want)
	}
	t.Logf("node join, pool + %d load balancers in one workspace: plan %v, apply %v", lbCount, plan.Round(time.Millisecond), apply.Round(time.Millisecond))
	if got := e.pools(t)["k8s-prod-all"]; len(got.Targets) != 3 || got.Version != all.Version+1 {
		t.Errorf("pool after the join: %+v", got)
	}
	for _, lb := range e.lbs(t) {
		if lb.Version != before[lb.ID] || lb.TargetPoolID != all.ID {
			t.Errorf("load balancer %s changed by the join: version %d -> %d", lb.Name, before[lb.ID], lb.Version)
		}
	}

	// The selection of every Service changes to zone-a, and "all" is no
	// longer needed: one apply, load balancers moved before the delete.
	changed, _, _ = e.planAndApply(t, poolsRoot(e.sim, map[string][]string{"zone-a": n[:1]}, lbCount, "zone-a"))
	if len(changed) != 1+lbCount {
		t.Errorf("move planned %d changes, want %d: %v", len(changed), 1+lbCount, changed)
	}
	if _, ok := e.pools(t)["k8s-prod-all"]; ok {
		t.Errorf("pool all not deleted")
	}
	for _, lb := range e.lbs(t) {
		if lb.TargetPoolID != zoneA.ID {
			t.Errorf("load balancer %s on %q, want %s", lb.Name, lb.TargetPoolID, zoneA.ID)
		}
	}

	if err := e.tf.Destroy(context.Background()); err != nil {
		t.Fatalf("destroy: %v", err)
	}
	if p, l := e.pools(t), e.lbs(t); len(p) != 0 || len(l) != 0 {
		t.Errorf("after destroy: %d pools, %d load balancers", len(p), len(l))
	}
}

// TestTargetPoolsWorkspace is the controller's shape: the pools alone in
// their workspace, ten load balancers elsewhere (made through the API)
// referencing one pool. A node joining is one apply of this workspace
// (its time is logged); dropping the pool while they use it fails with
// the API's 409 and keeps the pool, and succeeds once they moved.
func TestTargetPoolsWorkspace(t *testing.T) {
	e := newPoolsEnv(t, 3)
	n := e.nodes
	e.init(t, poolsRoot(e.sim, nil, 0, ""))
	e.planAndApply(t, poolsRoot(e.sim, map[string][]string{"all": n[:1], "spare": nil}, 0, ""))
	pools := e.pools(t)
	all, spare := pools["k8s-prod-all"], pools["k8s-prod-spare"]
	for i := range 10 {
		if _, err := e.client.CreateLoadBalancer(context.Background(), exampleapi.LoadBalancerSpec{
			Name: fmt.Sprintf("svc-%d", i), Region: "ex-west-1",
			LoadBalancerSettings: exampleapi.LoadBalancerSettings{
				TargetPoolID: all.ID,
				Listeners:    []exampleapi.Listener{{Protocol: "tcp", Port: 80, TargetPort: 30080}},
			},
		}); err != nil {
			t.Fatal(err)
		}
	}

	changed, plan, apply := e.planAndApply(t, poolsRoot(e.sim, map[string][]string{"all": n[:2], "spare": nil}, 0, ""))
	if want := []string{`module.pools.example_target_pool.this["all"] [update]`}; !slices.Equal(changed, want) {
		t.Errorf("node join planned %v, want %v", changed, want)
	}
	t.Logf("node join, pools-only workspace, pool used by 10 load balancers: plan %v, apply %v, total %v",
		plan.Round(time.Millisecond), apply.Round(time.Millisecond), (plan + apply).Round(time.Millisecond))

	// Dropping a pool still in use fails, naming the users, and keeps it.
	e.write(t, poolsRoot(e.sim, map[string][]string{"spare": nil}, 0, ""))
	err := e.tf.Apply(context.Background())
	if err == nil || !strings.Contains(err.Error(), "Cannot delete target pool "+all.ID+": it is in use") ||
		!strings.Contains(strings.Join(strings.Fields(err.Error()), " "), "still referenced by 10 load balancers") {
		t.Fatalf("dropping a pool in use: %v", err)
	}
	if _, ok := e.pools(t)["k8s-prod-all"]; !ok {
		t.Fatal("the pool in use was deleted")
	}
	for _, lb := range e.lbs(t) {
		if _, err := e.client.UpdateLoadBalancer(context.Background(), lb.ID, exampleapi.UpdateLoadBalancerRequest{
			Listeners: lb.Listeners, TargetPoolID: spare.ID}, 0); err != nil {
			t.Fatal(err)
		}
	}
	if err := e.tf.Apply(context.Background()); err != nil {
		t.Fatalf("dropping the pool once unused: %v", err)
	}
	if _, ok := e.pools(t)["k8s-prod-all"]; ok {
		t.Error("the unused pool was not deleted")
	}
}

// BenchmarkTargetPoolsNodeJoin: one plan + apply of a pools-only workspace
// whose pool of 100 nodes gains or loses one (what a node joining or
// leaving costs the controller, whatever the number of load balancers).
func BenchmarkTargetPoolsNodeJoin(b *testing.B) {
	e := newPoolsEnv(b, 101)
	root := func(nodes []string) string { return poolsRoot(e.sim, map[string][]string{"all": nodes}, 0, "") }
	e.init(b, root(e.nodes[:100]))
	e.planAndApply(b, root(e.nodes[:100]))
	b.ResetTimer()
	for i := 0; b.Loop(); i++ {
		nodes := e.nodes[:100]
		if i%2 == 0 {
			nodes = e.nodes[:101]
		}
		if changed, _, _ := e.planAndApply(b, root(nodes)); len(changed) != 1 {
			b.Fatalf("planned %v, want one pool update", changed)
		}
	}
}
