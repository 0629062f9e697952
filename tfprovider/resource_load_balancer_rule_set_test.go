package tfprovider

import (
	"context"
	"fmt"
	"maps"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/terraform"

	"github.com/example/cloud-provider-example/exampleapi"
)

const ruleSetAddr = "example_load_balancer_rule_set.routes"

// ruleSetLBConfig is target pool a (instance a) and load balancer "web"
// (an http listener on 80, a tcp one on 81) with a keyed rule of its own,
// "own": a.example's requests no earlier rule takes answer 404 ("~" sorts
// after the sets' keys below). sets are more resources (HCL).
func (e *testEnv) ruleSetLBConfig(a, sets string) string {
	return e.config(poolConfig("a", "pool-a", "", a) + `
resource "example_load_balancer" "web" {
  name = "gateway"
  listeners = {
    "http/80" = { protocol = "http", port = 80, target_port = 8080 }
    "tcp/81"  = { protocol = "tcp", port = 81, target_port = 8081 }
  }
  target_pool_id = example_target_pool.a.id
  rules = {
    own = { listener_port = 80, order_key = "a.example/~", hostnames = ["a.example"], fixed_response = { status_code = 404 } }
    l4  = { listener_port = 81, priority = 1, backends = [{ target_pool_id = example_target_pool.a.id, port = 30081 }] }
  }
}
` + sets)
}

// ruleSetBlock is rule set name (resource res) of the load balancer, with
// rules (HCL).
func ruleSetBlock(res, name, rules string) string {
	return fmt.Sprintf(`
resource "example_load_balancer_rule_set" %q {
  load_balancer_id = example_load_balancer.web.id
  name             = %q
  rules            = %s
}
`, res, name, rules)
}

// routesRules are two keyed rules of a.example: /api to pool a on port
// 30001, /web to it on webPort with a request header set.
func routesRules(webPort int) string {
	return fmt.Sprintf(`{
    api = {
      listener_port = 80, order_key = "a.example/0001", hostnames = ["a.example"], path_type = "prefix", path = "/api"
      backends      = [{ target_pool_id = example_target_pool.a.id, port = 30001 }]
    }
    web = {
      listener_port   = 80, order_key = "a.example/0002", hostnames = ["a.example"], path_type = "prefix", path = "/web"
      backends        = [{ target_pool_id = example_target_pool.a.id, port = %d }]
      request_headers = { set = { "X-Route" = "web" } }
    }
  }`, webPort)
}

// checkRouted sends a request for host and path to the load balancer in
// state (port 80) and expects it served by rule of set ("" for the load
// balancer's own) with status, forwarded to pool a on port (0: not
// forwarded).
func (e *testEnv) checkRouted(host, path, rule, set string, status, port int) resource.TestCheckFunc {
	return func(s *terraform.State) error {
		var lbID, poolID string
		if err := stateID(lbAddr, &lbID)(s); err != nil {
			return err
		}
		if err := stateID(rulesPoolA, &poolID)(s); err != nil {
			return err
		}
		ctx, cancel := bg()
		defer cancel()
		got, err := e.client.SimulateRequests(ctx, lbID, exampleapi.SimulatedRequest{ListenerPort: 80, Host: host, Path: path})
		if err != nil {
			return fmt.Errorf("simulating %s%s: %w", host, path, err)
		}
		want := map[string]int{}
		if port != 0 {
			want[fmt.Sprintf("%s:%d", poolID, port)] = 1
		}
		if got.Status != status || got.Rule != rule || got.RuleSet != set || got.RulePriority != 0 || !maps.Equal(got.Backends, want) {
			return fmt.Errorf("%s%s answered %+v; want %d by rule %q of set %q, backends %v", host, path, *got, status, rule, set, want)
		}
		return nil
	}
}

// checkRuleSet runs fn on the rule set in state, read through the API.
func (e *testEnv) checkRuleSet(fn func(*exampleapi.RuleSet) error) resource.TestCheckFunc {
	return checkInCloud(ruleSetAddr, func(ctx context.Context, id string) (*exampleapi.RuleSet, error) {
		return getRuleSet(e.client, ctx, id)
	}, fn)
}

// TestAccLoadBalancerRuleSet_lifecycle: a load balancer with a keyed rule
// and a rule set of two keyed rules; the cloud orders them together by
// key (a.example/api and /web by the set's rules, the rest of a.example
// by the load balancer's); each apply ends with an empty plan. A changed
// rule updates the set in place, the load balancer untouched; import
// gives the same set, and a malformed or unknown id is refused; destroy
// deletes the set before its load balancer.
func TestAccLoadBalancerRuleSet_lifecycle(t *testing.T) {
	e := newTestEnv(t)
	a := e.createInstance(t, "node-a", "ex-west-1a", nil)
	sameID := sameInEachStep()
	accTest(t, e.checkPoolsDestroyed, []resource.TestStep{
		{
			Config:           e.ruleSetLBConfig(a.ID, ruleSetBlock("routes", "routes", routesRules(30002))),
			ConfigPlanChecks: beforeApply(planCreate(lbAddr), planCreate(ruleSetAddr)),
			ConfigStateChecks: stateChecks{
				sameID(ruleSetAddr, "id"),
				stateIs(ruleSetAddr, "id", matching(`^lb-[0-9a-f]+/routes$`)),
				stateIs(ruleSetAddr, "name", "routes"),
				stateSame(lbAddr, "id", ruleSetAddr, "load_balancer_id"),
				stateIs(ruleSetAddr, "rules", mapLen(2)),
				stateIs(ruleSetAddr, "rules.api.order_key", "a.example/0001"),
				stateIs(ruleSetAddr, "rules.web.backends.0.weight", 1),
				stateIs(ruleSetAddr, "rules.web.request_headers", object{"set": mapOf{"X-Route": "web"}, "add": nil, "remove": nil}),
				stateIs(lbAddr, "rules.own.priority", nil),
				stateIs(lbAddr, "rules.own.order_key", "a.example/~"),
				stateIs(lbAddr, "rules.l4.order_key", nil),
			},
			Check: resource.ComposeAggregateTestCheckFunc(
				e.checkRuleSet(func(rs *exampleapi.RuleSet) error {
					if len(rs.Rules) != 2 || rs.Rules[0].Name != "api" || rs.Rules[0].OrderKey != "a.example/0001" ||
						rs.Rules[0].Priority != 0 || rs.Rules[1].Backends[0].Port != 30002 {
						return fmt.Errorf("API rule set %+v", rs)
					}
					return nil
				}),
				e.checkAPI(func(lb *exampleapi.LoadBalancer) error {
					if len(lb.Rules) != 2 {
						return fmt.Errorf("the load balancer has rules %+v, want its own two", lb.Rules)
					}
					return nil
				}),
				e.checkRouted("a.example", "/api/v1", "api", "routes", 200, 30001),
				e.checkRouted("a.example", "/web", "web", "routes", 200, 30002),
				e.checkRouted("a.example", "/other", "own", "", 404, 0),
			),
		},
		{
			// One rule's port: the set updates in place, alone.
			Config:           e.ruleSetLBConfig(a.ID, ruleSetBlock("routes", "routes", routesRules(30003))),
			ConfigPlanChecks: beforeApply(planUpdate(ruleSetAddr), planNoop(lbAddr), planIs(ruleSetAddr, "rules.web.backends.0.port", 30003)),
			ConfigStateChecks: stateChecks{
				sameID(ruleSetAddr, "id"),
				stateIs(ruleSetAddr, "rules.web.backends.0.port", 30003),
			},
			Check: e.checkRouted("a.example", "/web", "web", "routes", 200, 30003),
		},
		importStep(ruleSetAddr),
		{
			ResourceName:  ruleSetAddr,
			ImportState:   true,
			ImportStateId: "routes",
			ExpectError:   diagRE("Invalid import id", `"routes" is not a rule set id: want <load_balancer_id>/<name>`),
		},
		{
			ResourceName:  ruleSetAddr,
			ImportState:   true,
			ImportStateId: "lb-0000000000000000/routes",
			ExpectError:   diagRE("Cannot import rule set lb-0000000000000000/routes", "does not exist"),
		},
	})
}

// TestAccLoadBalancerRuleSet_errors: a set of a load balancer that does
// not exist fails on load_balancer_id; the cloud's refusal of a set's rule
// (one forwarding to a pool that does not exist) lands on that rule; creating a set whose name
// the load balancer already has fails with the way to import it, and the
// import block it names then takes it over with no change; a load
// balancer holding a set made elsewhere is not deleted, and the error
// says why.
func TestAccLoadBalancerRuleSet_errors(t *testing.T) {
	e := newTestEnv(t)
	a := e.createInstance(t, "node-a", "ex-west-1a", nil)
	taken := `{
    api = { listener_port = 80, order_key = "b.example", hostnames = ["b.example"], fixed_response = { status_code = 200 } }
  }`
	takenAddr := "example_load_balancer_rule_set.taken"
	accTest(t, e.checkPoolsDestroyed, []resource.TestStep{
		{
			Config: e.config(`
resource "example_load_balancer_rule_set" "routes" {
  load_balancer_id = "lb-0000000000000000"
  name             = "routes"
}
`),
			ExpectError: diagRE("Cannot create rule set lb-0000000000000000/routes", `load_balancer_id = "lb-0000000000000000"`,
				"Load balancer lb-0000000000000000 does not exist"),
		},
		{
			Config: e.ruleSetLBConfig(a.ID, ruleSetBlock("routes", "routes", `{
    ok  = { listener_port = 80, order_key = "a", fixed_response = { status_code = 200 } }
    bad = { listener_port = 81, order_key = "b", backends = [{ target_pool_id = "tp-0000000000000000", port = 30001 }] }
  }`)),
			// bad is rules[1] of the request (by listener port, then key).
			ExpectError: diagRE("Cannot create rule set", `bad = {`,
				`rules[1].backends[0].target_pool_id: target pool "tp-0000000000000000" does not exist`),
		},
		{
			// A set made behind Terraform's back holds the name.
			PreConfig: func() { e.putBehindTheBack(t, "taken") },
			Config:    e.ruleSetLBConfig(a.ID, ruleSetBlock("taken", "taken", taken)),
			ExpectError: diagRE("Rule set already exists", `already has a rule set named "taken"`,
				"import it: terraform import <resource address> lb-", `/taken`),
		},
		{
			Config: e.ruleSetLBConfig(a.ID, ruleSetBlock("taken", "taken", taken)+`
import {
  to = example_load_balancer_rule_set.taken
  id = "${example_load_balancer.web.id}/taken"
}
`),
			ConfigPlanChecks: beforeApply(planNoop(takenAddr)),
			ConfigStateChecks: stateChecks{
				stateIs(takenAddr, "rules.api.fixed_response", object{"status_code": 200}),
			},
		},
		{
			// One left by an interrupted apply: on_name_conflict = "adopt"
			// takes it over, its rules the configuration's.
			PreConfig: func() { e.putBehindTheBack(t, "left") },
			Config: e.ruleSetLBConfig(a.ID, ruleSetBlock("taken", "taken", taken)+`
resource "example_load_balancer_rule_set" "left" {
  load_balancer_id = example_load_balancer.web.id
  name             = "left"
  on_name_conflict = "adopt"
  rules = {
    web = { listener_port = 80, order_key = "c.example", hostnames = ["c.example"], fixed_response = { status_code = 201 } }
  }
}
`),
			ConfigStateChecks: stateChecks{
				stateIs("example_load_balancer_rule_set.left", "rules.web.fixed_response", object{"status_code": 201}),
				stateIs("example_load_balancer_rule_set.left", "on_name_conflict", "adopt"),
			},
			Check: func(*terraform.State) error {
				ctx, cancel := bg()
				defer cancel()
				rs, err := e.client.GetRuleSet(ctx, e.loadBalancers(t)[0].ID, "left")
				if err != nil {
					return err
				}
				if len(rs.Rules) != 1 || rs.Rules[0].Name != "web" {
					return fmt.Errorf("the adopted set holds %+v, want the configuration's rule web alone", rs.Rules)
				}
				return nil
			},
		},
		{
			// Another one holds the load balancer: its delete is refused,
			// saying why and what to do; taken went first.
			PreConfig: func() { e.putBehindTheBack(t, "stray") },
			Config:    e.config(poolConfig("a", "pool-a", "", a.ID)),
			ExpectError: diagRE("Cannot delete load balancer", "it is in use", `still has 1 rule sets (stray)`,
				"destroy its example_load_balancer_rule_set resources first"),
		},
		{
			PreConfig: func() {
				ctx, cancel := bg()
				defer cancel()
				if err := e.client.DeleteRuleSet(ctx, e.loadBalancers(t)[0].ID, "stray"); err != nil {
					t.Fatal(err)
				}
			},
			Config:           e.config(poolConfig("a", "pool-a", "", a.ID)),
			ConfigPlanChecks: beforeApply(planDestroy(lbAddr)),
		},
	})
}

// putBehindTheBack makes rule set name of the only load balancer, as
// another workspace would: one rule for b.example answering 200.
func (e *testEnv) putBehindTheBack(t *testing.T, name string) {
	t.Helper()
	ctx, cancel := bg()
	defer cancel()
	lbs := e.loadBalancers(t)
	if len(lbs) != 1 {
		t.Fatalf("load balancers %+v, want one", lbs)
	}
	if _, err := e.client.PutRuleSet(ctx, lbs[0].ID, name, exampleapi.PutRuleSetRequest{Rules: []exampleapi.Rule{{
		Name: "api", ListenerPort: 80, OrderKey: "b.example", Hostnames: []string{"b.example"},
		FixedResponse: &exampleapi.FixedResponse{StatusCode: 200}}}}, 0); err != nil {
		t.Fatal(err)
	}
}
