package tfprovider

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"testing"

	"github.com/hashicorp/terraform-plugin-framework/resource/schema/planmodifier"
	"github.com/hashicorp/terraform-plugin-framework/tfsdk"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"github.com/hashicorp/terraform-plugin-go/tftypes"
	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/terraform"

	"github.com/example/cloud-provider-example/exampleapi"
)

// Target pools of target type ip: their targets are IP:port pairs (pods)
// that a route of the region reaches.

// podCIDR is the destination of the route ipPoolConfig makes: the pod
// CIDR of its node.
const podCIDR = "10.244.1.0/24"

// ipPoolConfig is the route sending podCIDR to node (routeConfig) and the
// pool "workers" of target type typ with targets, created after the route
// (destroyed before it).
func ipPoolConfig(node, typ string, targets ...string) string {
	return routeConfig(node, podCIDR) + poolConfig("workers", "workers", fmt.Sprintf(`  target_type = %q
  depends_on  = [example_route.pods]`, typ), targets...)
}

// ipPoolLB is the load balancer "web" whose one rule forwards to the pool
// "workers" (of target type ip: backend port 0).
const ipPoolLB = `
resource "example_load_balancer" "web" {
  name      = "web"
  listeners = { "http/80" = { protocol = "http", port = 80, target_port = 8080 } }
  rules = {
    pods = {
      listener_port = 80
      priority      = 1
      backends      = [{ target_pool_id = example_target_pool.workers.id, port = 0 }]
    }
  }
}
`

// checkPoolType checks the target type and targets of the pool in state,
// read through the API.
func (e *testEnv) checkPoolType(typ string, targets ...string) resource.TestCheckFunc {
	return e.checkPool(func(tp *exampleapi.TargetPool) error {
		if tp.TargetType != typ || !slices.Equal(slices.Sorted(slices.Values(tp.Targets)), slices.Sorted(slices.Values(targets))) {
			return fmt.Errorf("pool of type %q with targets %v, want %q with %v", tp.TargetType, tp.Targets, typ, targets)
		}
		return nil
	})
}

// checkHealth checks that the target health of the load balancer in
// state is want (target: health).
func (e *testEnv) checkHealth(want map[string]string) resource.TestCheckFunc {
	return func(s *terraform.State) error {
		ctx, cancel := bg()
		defer cancel()
		hs, err := e.client.TargetHealth(ctx, s.RootModule().Resources[lbAddr].Primary.ID)
		if err != nil {
			return err
		}
		got := map[string]string{}
		for _, h := range hs {
			got[h.ID] = h.Health
		}
		if !maps.Equal(got, want) {
			return fmt.Errorf("target health %v, want %v", got, want)
		}
		return nil
	}
}

// TestAccTargetPool_ipTargets: a pool of target type ip behind a route,
// a rule's backend (port 0) on it, whose target health lists its
// targets; its targets updated in place; imported with its type; a
// target no route reaches refused at apply with the cloud's message
// naming the IP; changing target_type replaces the pool.
func TestAccTargetPool_ipTargets(t *testing.T) {
	e := newTestEnv(t)
	node := e.createInstance(t, "node-a", "ex-west-1a", nil)
	netID := e.defaultNetwork(t)
	pods := []string{"10.244.1.10:8080", "10.244.1.11:9090"}
	moved := []string{"10.244.1.10:8080", "10.244.1.12:8080"}
	samePool := sameInEachStep()
	var poolID string

	accTest(t, func(s *terraform.State) error {
		if err := e.checkPoolsDestroyed(s); err != nil {
			return err
		}
		return noneLeft("routes", func(ctx context.Context) ([]exampleapi.Route, error) { return e.client.ListRoutes(ctx, netID) })
	}, []resource.TestStep{
		{
			Config:           e.config(ipPoolConfig(node.ID, "ip", pods...) + ipPoolLB),
			ConfigPlanChecks: beforeApply(planIs(poolAddr, "target_type", "ip")),
			ConfigStateChecks: stateChecks{
				samePool(poolAddr, "id"),
				stateIs(poolAddr, "target_type", "ip"),
				stateIs(poolAddr, "targets", setOf(pods[0], pods[1])),
				stateIs(lbAddr, "rules.pods.backends.0.port", 0),
				stateSame(poolAddr, "id", lbAddr, "rules.pods.backends.0.target_pool_id"),
			},
			Check: resource.ComposeAggregateTestCheckFunc(
				e.checkPoolType(exampleapi.TargetTypeIP, pods...),
				// The load balancer's health lists the pool's IP targets.
				e.checkHealth(map[string]string{pods[0]: exampleapi.TargetHealthy, pods[1]: exampleapi.TargetHealthy}),
				func(s *terraform.State) error { poolID = s.RootModule().Resources[poolAddr].Primary.ID; return nil },
			),
		},
		{
			// A pod replaced: the pool is updated in place, the load
			// balancer not.
			Config:            e.config(ipPoolConfig(node.ID, "ip", moved...) + ipPoolLB),
			ConfigPlanChecks:  beforeApply(planUpdate(poolAddr), planNoop(lbAddr)),
			ConfigStateChecks: stateChecks{samePool(poolAddr, "id"), stateIs(poolAddr, "targets", setOf(moved[0], moved[1]))},
			Check:             e.checkPoolType(exampleapi.TargetTypeIP, moved...),
		},
		// The import reads the type back: the imported state is the
		// applied one, target_type "ip" included.
		importStep(poolAddr),
		{
			// Outside every route: the cloud refuses it, naming the IP,
			// and the pool keeps its targets.
			Config: e.config(ipPoolConfig(node.ID, "ip", moved[0], "10.245.0.5:8080") + ipPoolLB),
			ExpectError: diagRE("Cannot update target pool", "10.245.0.5 is outside every route of region ex-west-1's networks",
				"routes: "+podCIDR),
		},
		{
			Config:           e.config(ipPoolConfig(node.ID, "ip", moved...) + ipPoolLB),
			ConfigPlanChecks: beforeApply(planNoop(poolAddr)),
			Check:            e.checkPoolType(exampleapi.TargetTypeIP, moved...),
		},
		{
			// Another target type is another pool (the load balancer,
			// whose port 0 only an ip pool takes, goes first).
			Config:            e.config(ipPoolConfig(node.ID, "instance", node.ID)),
			ConfigPlanChecks:  beforeApply(planReplace(poolAddr, false), planDestroy(lbAddr), planIs(poolAddr, "target_type", "instance")),
			ConfigStateChecks: stateChecks{stateIs(poolAddr, "target_type", "instance")},
			Check: resource.ComposeAggregateTestCheckFunc(
				e.checkPoolType(exampleapi.TargetTypeInstance, node.ID),
				func(s *terraform.State) error {
					if id := s.RootModule().Resources[poolAddr].Primary.ID; id == poolID {
						return fmt.Errorf("pool %s not replaced", id)
					}
					return nil
				},
			),
		},
		{
			// Unset is instance: no change.
			Config:           e.config(poolConfig("workers", "workers", "", node.ID) + routeConfig(node.ID, podCIDR)),
			ConfigPlanChecks: beforeApply(planNoop(poolAddr)),
		},
	})
}

// TestAccTargetPool_ipValidation: targets that do not fit the pool's
// target type fail the plan, naming the target; what only the cloud
// knows (routes, which pool a backend or a load balancer may use) fails
// the apply with its message; a pool of another target type is not
// adopted (and left untouched).
func TestAccTargetPool_ipValidation(t *testing.T) {
	e := newTestEnv(t)
	ctx, cancel := bg()
	orphan, err := e.client.CreateTargetPool(ctx, exampleapi.CreateTargetPoolRequest{Name: "orphan", Region: "ex-west-1",
		Targets: []string{}, Tags: map[string]string{"cluster": "c1"}})
	cancel()
	if err != nil {
		t.Fatal(err)
	}
	pool := func(res, typ, targets string) string {
		return fmt.Sprintf(`
resource "example_target_pool" %q {
  name        = %[1]q
  target_type = %q
  targets     = %s
}
`, res, typ, targets)
	}
	rule := func(lb, pool string, port int) string {
		return fmt.Sprintf(`
resource "example_load_balancer" %q {
  name      = %[1]q
  listeners = { "http/80" = { protocol = "http", port = 80, target_port = 8080 } }
  rules = {
    all = {
      listener_port = 80
      priority      = 1
      backends      = [{ target_pool_id = example_target_pool.%s.id, port = %d }]
    }
  }
}
`, lb, pool, port)
	}
	re := func(texts ...string) string { return diagRE(texts...).String() }
	cases := []configError{
		// Plan time.
		{pool("p", "ip", `["10.244.1.5"]`), re("Invalid target", `"10.244.1.5" is not an IP:port target`, `target_type is "ip"`)},
		{pool("p", "ip", `["10.244.01.5:80"]`), re("Invalid target", `"10.244.01.5:80" is not an IP:port target`)},
		{pool("p", "ip", `["[fd00:0::5]:80"]`), re("Invalid target", `"[fd00:0::5]:80" is not in canonical form ([fd00::5]:80)`)},
		{pool("p", "ip", `["10.244.1.5:0"]`), re("Invalid target", "the port must be 1-65535")},
		{pool("p", "ip", `["i-0123456789abcdef"]`), re("Invalid target", `"i-0123456789abcdef" is not an IP:port target`,
			`instances go in a pool of target_type "instance"`)},
		{pool("p", "instance", `["10.244.1.5:80"]`), re("Invalid target", `"10.244.1.5:80" must be an id starting with "i-"`,
			`IP:port targets go in a pool of target_type "ip"`)},
		{pool("p", "pod", `[]`), re(`target_type value must be one of: ["instance" "ip"]`)},
		{pool("p", "ip", `[]`) + rule("lb", "p", -1), re("port value must be between 0 and 65535, got: -1")},
		// Apply time: the cloud's.
		{pool("unrouted", "ip", `["10.244.9.5:8080"]`),
			re("Cannot create target pool", "10.244.9.5 is outside every route of region ex-west-1's networks", "routes: none")},
		{pool("instances", "instance", `[]`) + rule("zero", "instances", 0),
			re("Cannot create load balancer", "must be 1-65535: target pool") + `\s+tp-[0-9a-f]+\s+holds\s+instances`},
		{pool("ips", "ip", `[]`) + rule("eighty", "ips", 80),
			re("Cannot create load balancer", "must be 0: target pool") + `\s+tp-[0-9a-f]+\s+is\s+of\s+target\s+type\s+ip`},
		{pool("own", "ip", `[]`) + `
resource "example_load_balancer" "own" {
  name           = "own"
  listeners      = { "tcp/80" = { protocol = "tcp", port = 80, target_port = 8080 } }
  target_pool_id = example_target_pool.own.id
}
`, re("Cannot create load balancer", "is of target type ip: reference it from a rule's backends")},
		{`
resource "example_target_pool" "orphan" {
  name             = "orphan"
  target_type      = "ip"
  targets          = []
  tags             = { cluster = "c1" }
  on_name_conflict = "adopt_if_tags_match"
}
`, re("Cannot adopt target pool "+orphan.ID, `its target_type is "instance", the configuration wants "ip"`)},
	}
	e.expectErrors(t, cases)
	ctx, cancel = bg()
	defer cancel()
	pools, err := e.client.ListTargetPools(ctx, exampleapi.TargetPoolFilter{})
	if err != nil || len(pools) != 1 || pools[0].ID != orphan.ID || pools[0].Version != orphan.Version {
		t.Errorf("want only the untouched %s left, have %+v (%v)", orphan.ID, pools, err)
	}
	if lbs := e.loadBalancers(t); len(lbs) != 0 {
		t.Errorf("%d load balancers left: %+v", len(lbs), lbs)
	}
}

// TestTargetPoolTypeBeforeTypes: a pool the API answers without a type
// (stored before there were types) is an instance pool, and a state
// written before target_type existed (null) plans "instance" as no
// replacement; any other change of type replaces the pool.
func TestTargetPoolTypeBeforeTypes(t *testing.T) {
	m, diags := targetPoolFromAPI(&exampleapi.TargetPool{ObjectMeta: exampleapi.ObjectMeta{ID: "tp-1"}}, targetPoolModel{})
	if diags.HasError() || m.TargetType.ValueString() != exampleapi.TargetTypeInstance {
		t.Errorf("target_type of a pool without one: %v (%v)", m.TargetType, diags)
	}
	a := replacedChoice(exampleapi.TargetTypeInstance, exampleapi.TargetTypes, "")
	object := tftypes.NewValue(tftypes.Object{}, map[string]tftypes.Value{})
	for _, c := range []struct {
		state, plan types.String
		replace     bool
	}{
		{types.StringNull(), types.StringValue("instance"), false},
		{types.StringNull(), types.StringValue("ip"), true},
		{types.StringValue("instance"), types.StringValue("ip"), true},
		{types.StringValue("ip"), types.StringValue("instance"), true},
		{types.StringValue("ip"), types.StringUnknown(), true},
	} {
		req := planmodifier.StringRequest{State: tfsdk.State{Raw: object}, Plan: tfsdk.Plan{Raw: object},
			StateValue: c.state, PlanValue: c.plan}
		var resp planmodifier.StringResponse
		for _, pm := range a.PlanModifiers {
			pm.PlanModifyString(context.Background(), req, &resp)
		}
		if resp.RequiresReplace != c.replace {
			t.Errorf("%v -> %v: replace %t, want %t", c.state, c.plan, resp.RequiresReplace, c.replace)
		}
	}
}
