package tfprovider

import (
	"fmt"
	"testing"
	"time"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/statecheck"
	"github.com/hashicorp/terraform-plugin-testing/terraform"
	"github.com/hashicorp/terraform-plugin-testing/tfjsonpath"

	"github.com/example/cloud-provider-example/exampleapi"
	"github.com/example/cloud-provider-example/simulator/simtest"
)

// TestAccLoadBalancer_drift changes and then deletes the load balancer
// through the API: plan shows the drift, apply corrects it.
func TestAccLoadBalancer_drift(t *testing.T) {
	e := newTestEnv(t)
	a := e.createInstance(t, "node-a", "ex-west-1a", nil)
	cfg := e.config(lbConfig("drift", fmt.Sprintf(`
  targets = [%q]
  allowed_source_cidrs = []
  tags = {}`, a.ID), listenerHTTP+", "+listenerHTTPS))
	var lbID string

	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: protoV6Factories,
		CheckDestroy:             e.checkLBsDestroyed,
		Steps: []resource.TestStep{
			{
				Config: cfg,
				// Empty collections in configuration must not read back as null.
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue(lbAddr, tfjsonpath.New("allowed_source_cidrs"), knownvalue.SetSizeExact(0)),
					statecheck.ExpectKnownValue(lbAddr, tfjsonpath.New("tags"), knownvalue.MapSizeExact(0)),
				},
				Check: e.checkAPI(func(lb *exampleapi.LoadBalancer) error { lbID = lb.ID; return nil }),
			},
			// Out of band: listeners, targets and type changed.
			driftStep(cfg, func() {
				ctx, cancel := bg()
				defer cancel()
				_, err := e.client.UpdateLoadBalancer(ctx, lbID, exampleapi.UpdateLoadBalancerRequest{
					Type: "lb-large", Listeners: []exampleapi.Listener{{Protocol: "udp", Port: 9999, TargetPort: 9999}},
				}, 0)
				if err != nil {
					t.Fatalf("changing load balancer out of band: %v", err)
				}
			}),
			updateStep(cfg, lbAddr, "listeners", knownvalue.MapSizeExact(2), e.checkAPI(func(lb *exampleapi.LoadBalancer) error {
				if lb.Type != "lb-small" || len(lb.Listeners) != 2 || len(lb.Targets) != 1 {
					return fmt.Errorf("drift not corrected: %+v", lb.LoadBalancerSpec)
				}
				return nil
			})),
			// Out of band: deleted. Refresh drops it; apply creates it again.
			recreateStep(cfg, lbAddr, &lbID, func() {
				ctx, cancel := bg()
				defer cancel()
				if err := e.client.DeleteLoadBalancer(ctx, lbID); err != nil {
					t.Fatalf("deleting load balancer out of band: %v", err)
				}
			}, func(*terraform.State) error { return e.expectLBCount(1) }),
		},
	})
}

// driftStep changes the object outside Terraform (change) and expects the
// plan of cfg to show it.
func driftStep(cfg string, change func()) resource.TestStep {
	return resource.TestStep{PreConfig: change, Config: cfg, PlanOnly: true, ExpectNonEmptyPlan: true}
}

// updateStep applies cfg, planned as an update in place of addr with attr
// as want, then runs check.
func updateStep(cfg, addr, attr string, want knownvalue.Check, check resource.TestCheckFunc) resource.TestStep {
	return resource.TestStep{
		Config: cfg,
		ConfigPlanChecks: resource.ConfigPlanChecks{
			PreApply: []plancheck.PlanCheck{
				plancheck.ExpectResourceAction(addr, plancheck.ResourceActionUpdate),
				plancheck.ExpectKnownValue(addr, tfjsonpath.New(attr), want),
			},
		},
		Check: check,
	}
}

// recreateStep deletes the object at addr (id *id) outside Terraform
// (del): the apply of cfg creates it again, under another id; then check
// runs.
func recreateStep(cfg, addr string, id *string, del func(), check resource.TestCheckFunc) resource.TestStep {
	return resource.TestStep{
		PreConfig: del,
		Config:    cfg,
		ConfigPlanChecks: resource.ConfigPlanChecks{
			PreApply: []plancheck.PlanCheck{plancheck.ExpectResourceAction(addr, plancheck.ResourceActionCreate)},
		},
		Check: func(s *terraform.State) error {
			if s.RootModule().Resources[addr].Primary.ID == *id {
				return fmt.Errorf("state still has the deleted id %s", *id)
			}
			return check(s)
		},
	}
}

// TestAccLoadBalancer_faults applies (load balancer, route, data source)
// through 25% injected 5xx answers,
// dropped connections and rate limiting: retries, idempotent creates and
// tolerant waits must still converge, with exactly one load balancer.
func TestAccLoadBalancer_faults(t *testing.T) {
	e := newTestEnv(t, simtest.WithProvisionDelay(300*time.Millisecond))
	a := e.createInstance(t, "node-a", "ex-west-1a", nil)
	b := e.createInstance(t, "node-b", "ex-west-1b", nil)
	e.sim.SetFaults(t, exampleapi.Faults{ErrorRate: 0.25, DropRate: 0.05, RateLimit: 20, RateBurst: 5, ProvisionDelayMs: 300})
	fast := `
provider "example" {
  endpoint    = %q
  token       = %q
  region      = "ex-west-1"
  max_retries = 10
}
`
	prov := fmt.Sprintf(fast, e.sim.URL, e.sim.Token)

	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: protoV6Factories,
		CheckDestroy:             e.checkLBsDestroyed,
		Steps: []resource.TestStep{
			{
				Config: prov + lbConfig("flaky", fmt.Sprintf(`  targets = [%q]`, a.ID), listenerHTTP),
				Check: resource.ComposeAggregateTestCheckFunc(
					resource.TestCheckResourceAttr(lbAddr, "status", "active"),
					func(*terraform.State) error { return e.expectLBCount(1) },
				),
			},
			{
				Config: prov + lbConfig("flaky", fmt.Sprintf(`  targets = [%q, %q]`, a.ID, b.ID), listenerHTTP+", "+listenerDNS) +
					routeConfig(a.ID, "10.244.0.0/24"),
				Check: resource.ComposeAggregateTestCheckFunc(
					resource.TestCheckResourceAttr(lbAddr, "listeners.%", "2"),
					resource.TestCheckResourceAttr(lbAddr, "targets.#", "2"),
					resource.TestCheckResourceAttr(routeAddr, "status", "active"),
					func(*terraform.State) error { return e.expectLBCount(1) },
				),
			},
		},
	})
}
