package tfprovider

import (
	"fmt"
	"net/http"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"

	"github.com/example/cloud-provider-example/exampleapi"
)

// fixedResponseRules are what a Gateway with a listener for shop.example
// and a wildcard one on the same port renders to: shop.example's /cart to
// pool a, and its rule "web" (cart, or web's own action: HCL) for /web;
// then shop.example's catch-all answering 404; then the wildcard's rule
// to pool b.
func fixedResponseRules(web string) string {
	return fmt.Sprintf(`{
    cart      = %s
    web       = %s
    catch-all = %s
    wildcard  = %s
  }`, httpRule(10, "shop.example", "/cart", `backends = [{ target_pool_id = example_target_pool.a.id, port = 30001 }]`),
		httpRule(20, "shop.example", "/web", web),
		httpRule(30, "shop.example", "", `fixed_response = { status_code = 404 }`),
		httpRule(40, "*.example", "", `backends = [{ target_pool_id = example_target_pool.b.id, port = 30002 }]`))
}

// answers is a want of checkRequests: status from the rule of priority,
// nothing forwarded.
func answers(status, priority int) func(a, b string) exampleapi.RequestOutcome {
	return func(string, string) exampleapi.RequestOutcome {
		return exampleapi.RequestOutcome{Status: status, RulePriority: priority}
	}
}

// TestAccLoadBalancerRules_fixedResponse: a rule with a fixed_response
// answers in the cloud with its status code, forwarding nothing: a
// request for shop.example that none of its routes matches gets the
// catch-all's 404, not the wildcard rule after it, while another host
// still reaches the wildcard's pool. It reads back without drift and
// imports the same. A rule's action changes in place from backends to a
// fixed_response (backends null, the request answered 503) and back. A
// 3xx fixed response fails at plan time. Each step ends with an empty
// plan.
func TestAccLoadBalancerRules_fixedResponse(t *testing.T) {
	e := newTestEnv(t)
	a := e.createInstance(t, "node-a", "ex-west-1a", nil)
	b := e.createInstance(t, "node-b", "ex-west-1b", nil)
	sameID := sameInEachStep()
	forward := `backends = [{ target_pool_id = example_target_pool.a.id, port = 30003 }]`
	web := exampleapi.SimulatedRequest{Host: "shop.example", Path: "/web/index.html", Count: 2}
	toWeb := connectionTo("a", 30003, 20, 2)

	accTest(t, e.checkPoolsDestroyed, []resource.TestStep{
		{
			// A 3xx is a redirect's: the plan fails.
			Config:      e.rulesLBConfig(a.ID, b.ID, fixedResponseRules(`fixed_response = { status_code = 301 }`)),
			ExpectError: diagRE("Invalid fixed response status code", `301 is not a fixed response code: it must be in 200-299 or 400-599`),
		},
		{
			Config:           e.rulesLBConfig(a.ID, b.ID, fixedResponseRules(forward)),
			ConfigPlanChecks: beforeApply(planCreate(lbAddr), planIs(lbAddr, "rules.catch-all.fixed_response.status_code", 404)),
			ConfigStateChecks: stateChecks{
				sameID(lbAddr, "id"),
				stateIs(lbAddr, "rules", mapLen(4)),
				stateIs(lbAddr, "rules.catch-all.fixed_response", object{"status_code": 404}),
				stateIs(lbAddr, "rules.catch-all.backends", nil),
				stateIs(lbAddr, "rules.catch-all.redirect", nil),
				stateIs(lbAddr, "rules.catch-all.request_headers", nil),
				stateIs(lbAddr, "rules.cart.fixed_response", nil),
			},
			Check: resource.ComposeAggregateTestCheckFunc(
				e.checkAPI(func(lb *exampleapi.LoadBalancer) error {
					for _, r := range lb.Rules {
						want := r.Name == "catch-all"
						if fr := r.FixedResponse; (fr != nil) != want || want && (fr.StatusCode != http.StatusNotFound || r.Backends != nil) {
							return fmt.Errorf("API rule %s: %+v", r.Name, r)
						}
					}
					return nil
				}),
				e.checkRequests(exampleapi.SimulatedRequest{Host: "shop.example", Path: "/cart/1"}, connectionTo("a", 30001, 10, 1)),
				e.checkRequests(web, toWeb),
				e.checkRequests(exampleapi.SimulatedRequest{Host: "shop.example", Path: "/admin", Count: 3}, answers(404, 30)),
				e.checkRequests(exampleapi.SimulatedRequest{Host: "api.example", Path: "/admin"}, connectionTo("b", 30002, 40, 1)),
			),
		},
		importStep(lbAddr),
		{
			// From forwarding to answering: the rule changes in place.
			Config: e.rulesLBConfig(a.ID, b.ID, fixedResponseRules(`fixed_response = { status_code = 503 }`)),
			ConfigPlanChecks: beforeApply(
				planUpdate(lbAddr),
				planIs(lbAddr, "rules.web.fixed_response", object{"status_code": 503}),
				planIs(lbAddr, "rules.web.backends", nil),
			),
			ConfigStateChecks: stateChecks{
				sameID(lbAddr, "id"),
				stateIs(lbAddr, "rules.web.fixed_response", object{"status_code": 503}),
				stateIs(lbAddr, "rules.web.backends", nil),
			},
			Check: resource.ComposeAggregateTestCheckFunc(
				e.checkRequests(web, answers(503, 20)),
				e.checkRequests(exampleapi.SimulatedRequest{Host: "shop.example", Path: "/admin"}, answers(404, 30)),
			),
		},
		{
			// And back: fixed_response null, the requests forwarded again.
			Config:           e.rulesLBConfig(a.ID, b.ID, fixedResponseRules(forward)),
			ConfigPlanChecks: beforeApply(planUpdate(lbAddr), planIs(lbAddr, "rules.web.fixed_response", nil)),
			ConfigStateChecks: stateChecks{
				sameID(lbAddr, "id"),
				stateIs(lbAddr, "rules.web.fixed_response", nil),
				stateIs(lbAddr, "rules.web.backends.0.port", 30003),
			},
			Check: e.checkRequests(web, toWeb),
		},
	})
}
