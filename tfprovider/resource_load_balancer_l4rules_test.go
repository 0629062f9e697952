package tfprovider

import (
	"fmt"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"

	"github.com/example/cloud-provider-example/exampleapi"
)

// l4LBConfig is two target pools (a: instance a, b: instance b) and a
// load balancer "web" forwarding to pool a, with listeners and rules
// (HCL).
func (e *testEnv) l4LBConfig(a, b, listeners, rules string) string {
	return e.config(poolConfig("a", "pool-a", "", a) + poolConfig("b", "pool-b", "", b) + fmt.Sprintf(`
resource "example_load_balancer" "web" {
  name           = "l4"
  listeners      = %s
  target_pool_id = example_target_pool.a.id
  rules          = %s
}
`, listeners, rules))
}

// connectionTo is a want of checkRequests: count connections forwarded
// by the rule of priority to port of pool "a" or "b".
func connectionTo(pool string, port, priority, count int) func(a, b string) exampleapi.RequestOutcome {
	return func(a, b string) exampleapi.RequestOutcome {
		id := map[string]string{"a": a, "b": b}[pool]
		return exampleapi.RequestOutcome{Status: 200, RulePriority: priority, Backends: map[string]int{fmt.Sprintf("%s:%d", id, port): count}}
	}
}

// TestAccLoadBalancerRules_tlsPassthrough: a tls listener with two SNI
// rules, an exact name to pool a and a wildcard to pool b, routes
// connections by their SNI name in the cloud (404 for a name neither
// matches), reads back without drift (listener_protocol null where unset)
// and imports the same. A path on a tls rule fails at plan time.
func TestAccLoadBalancerRules_tlsPassthrough(t *testing.T) {
	e := newTestEnv(t)
	a := e.createInstance(t, "node-a", "ex-west-1a", nil)
	b := e.createInstance(t, "node-b", "ex-west-1b", nil)
	listeners := `{ "tls/443" = { protocol = "tls", port = 443, target_port = 30443, proxy_protocol = true } }`
	rules := func(extra string) string {
		return fmt.Sprintf(`{
    db = {
      listener_port = 443
      priority      = 1
      hostnames     = ["db.example"]
      backends      = [{ target_pool_id = example_target_pool.a.id, port = 30443 }]
      %s
    }
    wild = {
      listener_port     = 443
      listener_protocol = "tls"
      priority          = 2
      hostnames         = ["*.example"]
      backends          = [{ target_pool_id = example_target_pool.b.id, port = 30444 }]
    }
  }`, extra)
	}
	sni := func(host string) exampleapi.SimulatedRequest {
		return exampleapi.SimulatedRequest{ListenerPort: 443, Host: host}
	}
	accTest(t, e.checkPoolsDestroyed, []resource.TestStep{
		{
			// What a tls listener cannot see fails the plan.
			Config:      e.l4LBConfig(a.ID, b.ID, listeners, rules(`path_type = "prefix"`)),
			ExpectError: diagRE("Rule condition not allowed on a tls listener", `Rule "db" routes listener "tls/443", so it takes no path_type`),
		},
		{
			Config:           e.l4LBConfig(a.ID, b.ID, listeners, rules("")),
			ConfigPlanChecks: beforeApply(planCreate(lbAddr)),
			ConfigStateChecks: stateChecks{
				stateIs(lbAddr, "listeners", mapOf{"tls/443": object{"protocol": "tls", "port": 443, "target_port": 30443,
					"proxy_protocol": true, "certificate_ids": nil, "redirect_to_https_port": nil, "sticky_sessions": nil}}),
				stateIs(lbAddr, "rules", mapLen(2)),
				stateIs(lbAddr, "rules.db.listener_protocol", nil),
				stateIs(lbAddr, "rules.wild.listener_protocol", "tls"),
				stateIs(lbAddr, "rules.wild.hostnames", listOf("*.example")),
				stateSame(rulesPoolB, "id", lbAddr, "rules.wild.backends.0.target_pool_id"),
			},
			Check: resource.ComposeAggregateTestCheckFunc(
				e.checkRequests(sni("db.example"), connectionTo("a", 30443, 1, 1)),
				e.checkRequests(sni("shop.example"), connectionTo("b", 30444, 2, 1)),
				e.checkRequests(sni("db.example.org"), func(string, string) exampleapi.RequestOutcome {
					return exampleapi.RequestOutcome{Status: 404}
				}),
			),
		},
		importStep(lbAddr),
	})
}

// TestAccLoadBalancerRules_tcpAndUDP: tcp/53 and udp/53 with one rule
// each, both of priority 1 (the udp one named by listener_protocol), send
// each protocol's connections to its own pool; removing the rules makes
// both listeners forward to the load balancer's targets again.
func TestAccLoadBalancerRules_tcpAndUDP(t *testing.T) {
	e := newTestEnv(t)
	a := e.createInstance(t, "node-a", "ex-west-1a", nil)
	b := e.createInstance(t, "node-b", "ex-west-1b", nil)
	listeners := `{
    "tcp/53" = { protocol = "tcp", port = 53, target_port = 30053 }
    "udp/53" = { protocol = "udp", port = 53, target_port = 30053 }
  }`
	rules := `{
    dns-tcp = {
      listener_port = 53
      priority      = 1
      backends      = [{ target_pool_id = example_target_pool.a.id, port = 30053 }]
    }
    dns-udp = {
      listener_port     = 53
      listener_protocol = "udp"
      priority          = 1
      backends          = [{ target_pool_id = example_target_pool.b.id, port = 30054 }]
    }
  }`
	tcp := exampleapi.SimulatedRequest{ListenerPort: 53, Count: 3}
	udp := exampleapi.SimulatedRequest{ListenerPort: 53, Protocol: "udp", Count: 2}
	sameID := sameInEachStep()
	accTest(t, e.checkPoolsDestroyed, []resource.TestStep{
		{
			Config: e.l4LBConfig(a.ID, b.ID, listeners, rules),
			ConfigStateChecks: stateChecks{
				sameID(lbAddr, "id"),
				stateIs(lbAddr, "rules.dns-tcp", object{"listener_port": 53, "listener_protocol": nil, "priority": 1, "order_key": nil,
					"hostnames": nil, "path_type": nil, "path": nil, "method": nil, "headers": nil, "query_params": nil, "redirect": nil,
					"fixed_response": nil, "request_headers": nil, "response_headers": nil, "rewrite": nil, "timeouts": nil, "retry": nil, "cors": nil,
					"session_persistence": nil, "backends": listOf(object{"target_pool_id": matching(`^tp-`), "port": 30053, "weight": 1, "protocol": nil, "tls": nil})}),
				stateIs(lbAddr, "rules.dns-udp.listener_protocol", "udp"),
			},
			Check: resource.ComposeAggregateTestCheckFunc(
				e.checkAPI(func(lb *exampleapi.LoadBalancer) error {
					if len(lb.Rules) != 2 || lb.Rules[0].Name != "dns-tcp" || lb.Rules[1].ListenerProtocol != "udp" {
						return fmt.Errorf("API rules %+v", lb.Rules)
					}
					return nil
				}),
				e.checkRequests(tcp, connectionTo("a", 30053, 1, 3)),
				e.checkRequests(udp, connectionTo("b", 30054, 1, 2)),
			),
		},
		importStep(lbAddr),
		{
			// No rules: both listeners forward to the pool again.
			Config:           e.l4LBConfig(a.ID, b.ID, listeners, "null"),
			ConfigPlanChecks: beforeApply(planUpdate(lbAddr), planIs(lbAddr, "rules", nil)),
			ConfigStateChecks: stateChecks{
				sameID(lbAddr, "id"),
				stateIs(lbAddr, "rules", nil),
			},
			Check: resource.ComposeAggregateTestCheckFunc(
				e.checkRequests(tcp, func(string, string) exampleapi.RequestOutcome {
					return exampleapi.RequestOutcome{Status: 200, Backends: map[string]int{"targets": 3}}
				}),
				e.checkRequests(udp, func(string, string) exampleapi.RequestOutcome {
					return exampleapi.RequestOutcome{Status: 200, Backends: map[string]int{"targets": 2}}
				}),
			),
		},
	})
}
