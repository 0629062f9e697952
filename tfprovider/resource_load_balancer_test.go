package tfprovider

import (
	"context"
	"fmt"
	"regexp"
	"slices"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/compare"
	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/statecheck"
	"github.com/hashicorp/terraform-plugin-testing/terraform"
	"github.com/hashicorp/terraform-plugin-testing/tfjsonpath"

	"github.com/example/cloud-provider-example/exampleapi"
)

const lbAddr = "example_load_balancer.web"

// lbConfig is a load balancer with the given name, extra arguments and
// listeners (map entries, comma separated).
func lbConfig(name, extra, listeners string) string {
	return fmt.Sprintf(`
resource "example_load_balancer" "web" {
  name = %q
%s
  listeners = {%s}
}
`, name, extra, listeners)
}

const (
	listenerHTTP  = `"tcp/80" = { protocol = "tcp", port = 80, target_port = 8080 }`
	listenerHTTPS = `"tcp/443" = { protocol = "tcp", port = 443, target_port = 8443, proxy_protocol = true }`
	listenerDNS   = `"udp/53" = { protocol = "udp", port = 53, target_port = 5353 }`
)

// checkLBsDestroyed verifies through the API that every load balancer in
// the final state is gone.
func (e *testEnv) checkLBsDestroyed(s *terraform.State) error {
	ctx, cancel := bg()
	defer cancel()
	for _, rs := range s.RootModule().Resources {
		if rs.Type != "example_load_balancer" {
			continue
		}
		_, err := e.client.GetLoadBalancer(ctx, rs.Primary.ID)
		if err == nil {
			return fmt.Errorf("load balancer %s still exists", rs.Primary.ID)
		}
		if !exampleapi.IsNotFound(err) {
			return err
		}
	}
	if lbs := e.loadBalancersNoT(); len(lbs) != 0 {
		return fmt.Errorf("%d load balancers left in the cloud", len(lbs))
	}
	return nil
}

func (e *testEnv) loadBalancersNoT() []exampleapi.LoadBalancer {
	ctx, cancel := bg()
	defer cancel()
	lbs, _ := e.client.ListLoadBalancers(ctx, exampleapi.LoadBalancerFilter{})
	return lbs
}

// TestAccLoadBalancer_lifecycle: create, in-place update of listeners,
// targets and type, import, replacement on name and on internal, destroy.
func TestAccLoadBalancer_lifecycle(t *testing.T) {
	e := newTestEnv(t)
	a := e.createInstance(t, "node-a", "ex-west-1a", nil)
	b := e.createInstance(t, "node-b", "ex-west-1b", nil)
	updated := fmt.Sprintf(`
  type      = "lb-medium"
  algorithm = "least_connections"
  targets   = [%q, %q]
  tags      = { team = "web", env = "test" }
  allowed_source_cidrs = ["2001:db8::/32", "192.0.2.0/24"]
  health_check = {
    protocol = "http"
    port     = 8080
    path     = "/healthz"
  }`, b.ID, a.ID)
	allListeners := listenerHTTP + ", " + listenerHTTPS + ", " + listenerDNS
	var version int64
	sameID := statecheck.CompareValue(compare.ValuesSame())
	newID := statecheck.CompareValue(compare.ValuesDiffer())

	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: protoV6Factories,
		CheckDestroy:             e.checkLBsDestroyed,
		Steps: []resource.TestStep{
			{
				Config: e.config(lbConfig("web", fmt.Sprintf(`
  targets = [%q]
  tags    = { team = "web" }
  allowed_source_cidrs = ["192.0.2.0/24", "2001:db8::/32"]`, a.ID), listenerHTTP)),
				ConfigPlanChecks: resource.ConfigPlanChecks{
					PreApply: []plancheck.PlanCheck{
						plancheck.ExpectKnownValue(lbAddr, tfjsonpath.New("region"), knownvalue.StringExact("ex-west-1")),
						plancheck.ExpectKnownValue(lbAddr, tfjsonpath.New("ipv6"), knownvalue.Null()),
						plancheck.ExpectUnknownValue(lbAddr, tfjsonpath.New("ipv4")),
					},
				},
				ConfigStateChecks: []statecheck.StateCheck{
					sameID.AddStateValue(lbAddr, tfjsonpath.New("id")),
					newID.AddStateValue(lbAddr, tfjsonpath.New("id")),
					statecheck.ExpectKnownValue(lbAddr, tfjsonpath.New("status"), knownvalue.StringExact("active")),
					statecheck.ExpectKnownValue(lbAddr, tfjsonpath.New("region"), knownvalue.StringExact("ex-west-1")),
					statecheck.ExpectKnownValue(lbAddr, tfjsonpath.New("type"), knownvalue.StringExact("lb-small")),
					statecheck.ExpectKnownValue(lbAddr, tfjsonpath.New("algorithm"), knownvalue.StringExact("round_robin")),
					statecheck.ExpectKnownValue(lbAddr, tfjsonpath.New("ip_family"), knownvalue.StringExact("ipv4")),
					statecheck.ExpectKnownValue(lbAddr, tfjsonpath.New("internal"), knownvalue.Bool(false)),
					statecheck.ExpectKnownValue(lbAddr, tfjsonpath.New("ipv6"), knownvalue.Null()),
					statecheck.ExpectKnownValue(lbAddr, tfjsonpath.New("listeners").AtMapKey("tcp/80").AtMapKey("proxy_protocol"), knownvalue.Bool(false)),
					statecheck.ExpectKnownValue(lbAddr, tfjsonpath.New("health_check"), knownvalue.Null()),
				},
				Check: resource.ComposeAggregateTestCheckFunc(
					resource.TestMatchResourceAttr(lbAddr, "id", regexp.MustCompile(`^lb-`)),
					resource.TestMatchResourceAttr(lbAddr, "ipv4", regexp.MustCompile(`^203\.0\.113\.`)),
					resource.TestMatchResourceAttr(lbAddr, "hostname", regexp.MustCompile(`\.lb\.example\.com$`)),
					resource.TestCheckResourceAttrSet(lbAddr, "created_at"),
					resource.TestCheckResourceAttr(lbAddr, "targets.#", "1"),
					resource.TestCheckResourceAttr(lbAddr, "tags.team", "web"),
				),
			},
			{
				// In place: listeners, targets, type, health check, tags.
				Config: e.config(lbConfig("web", updated, allListeners)),
				ConfigPlanChecks: resource.ConfigPlanChecks{
					PreApply: []plancheck.PlanCheck{
						plancheck.ExpectResourceAction(lbAddr, plancheck.ResourceActionUpdate),
						plancheck.ExpectKnownValue(lbAddr, tfjsonpath.New("status"), knownvalue.StringExact("active")),
						plancheck.ExpectKnownValue(lbAddr, tfjsonpath.New("ipv4"), knownvalue.NotNull()),
					},
				},
				ConfigStateChecks: []statecheck.StateCheck{
					sameID.AddStateValue(lbAddr, tfjsonpath.New("id")),
					statecheck.ExpectKnownValue(lbAddr, tfjsonpath.New("type"), knownvalue.StringExact("lb-medium")),
					statecheck.ExpectKnownValue(lbAddr, tfjsonpath.New("listeners"), knownvalue.MapSizeExact(3)),
					statecheck.ExpectKnownValue(lbAddr, tfjsonpath.New("targets"), knownvalue.SetExact([]knownvalue.Check{
						knownvalue.StringExact(a.ID), knownvalue.StringExact(b.ID)})),
					statecheck.ExpectKnownValue(lbAddr, tfjsonpath.New("health_check"), knownvalue.ObjectExact(map[string]knownvalue.Check{
						"protocol": knownvalue.StringExact("http"), "port": knownvalue.Int64Exact(8080),
						"path": knownvalue.StringExact("/healthz"), "interval_seconds": knownvalue.Int64Exact(10),
						"timeout_seconds": knownvalue.Int64Exact(5), "healthy_threshold": knownvalue.Int64Exact(3),
						"unhealthy_threshold": knownvalue.Int64Exact(3),
					})),
				},
				Check: e.checkAPI(func(lb *exampleapi.LoadBalancer) error {
					// Sent sorted by protocol and port: tcp/80, tcp/443, udp/53.
					if lb.Type != "lb-medium" || len(lb.Listeners) != 3 || len(lb.Targets) != 2 || !lb.Listeners[1].ProxyProtocol {
						return fmt.Errorf("API object not updated: %+v", lb.LoadBalancerSpec)
					}
					version = lb.Version
					return nil
				}),
			},
			{
				// Only timeouts change: state is updated, the API is not called.
				Config: e.config(lbConfig("web", updated+`
  timeouts = { update = "1m" }`, allListeners)),
				ConfigPlanChecks: resource.ConfigPlanChecks{
					PreApply: []plancheck.PlanCheck{plancheck.ExpectResourceAction(lbAddr, plancheck.ResourceActionUpdate)},
				},
				Check: e.checkAPI(func(lb *exampleapi.LoadBalancer) error {
					if lb.Version != version {
						return fmt.Errorf("a timeouts-only change updated the API object (version %d -> %d)", version, lb.Version)
					}
					return nil
				}),
			},
			{
				ResourceName:            lbAddr,
				ImportState:             true,
				ImportStateVerify:       true,
				ImportStateVerifyIgnore: []string{"timeouts"},
			},
			{
				// Renaming replaces.
				Config: e.config(lbConfig("web-2", "", listenerHTTP)),
				ConfigPlanChecks: resource.ConfigPlanChecks{
					PreApply: []plancheck.PlanCheck{plancheck.ExpectResourceAction(lbAddr, plancheck.ResourceActionDestroyBeforeCreate)},
				},
				ConfigStateChecks: []statecheck.StateCheck{
					newID.AddStateValue(lbAddr, tfjsonpath.New("id")),
					statecheck.ExpectKnownValue(lbAddr, tfjsonpath.New("name"), knownvalue.StringExact("web-2")),
				},
				Check: func(*terraform.State) error { return e.expectLBCount(1) },
			},
			{
				// internal replaces too, and gets an internal address.
				Config: e.config(lbConfig("web-2", `  internal = true
  ip_family = "dualstack"`, listenerHTTP)),
				ConfigPlanChecks: resource.ConfigPlanChecks{
					PreApply: []plancheck.PlanCheck{
						plancheck.ExpectResourceAction(lbAddr, plancheck.ResourceActionDestroyBeforeCreate),
						plancheck.ExpectUnknownValue(lbAddr, tfjsonpath.New("ipv6")),
					},
				},
				ConfigStateChecks: []statecheck.StateCheck{
					newID.AddStateValue(lbAddr, tfjsonpath.New("id")),
					statecheck.ExpectKnownValue(lbAddr, tfjsonpath.New("ipv6"), knownvalue.NotNull()),
				},
				Check: resource.ComposeAggregateTestCheckFunc(
					resource.TestMatchResourceAttr(lbAddr, "ipv4", regexp.MustCompile(`^10\.255\.`)),
					func(*terraform.State) error { return e.expectLBCount(1) },
				),
			},
		},
	})
}

// checkAPI runs fn on the load balancer in state, read through the API.
func (e *testEnv) checkAPI(fn func(*exampleapi.LoadBalancer) error) resource.TestCheckFunc {
	return checkInCloud(lbAddr, e.client.GetLoadBalancer, fn)
}

// checkInCloud runs fn on the object at state address addr, read through
// the API with get.
func checkInCloud[T any](addr string, get func(context.Context, string) (*T, error), fn func(*T) error) resource.TestCheckFunc {
	return func(s *terraform.State) error {
		var id string
		if err := stateID(addr, &id)(s); err != nil {
			return err
		}
		ctx, cancel := bg()
		defer cancel()
		obj, err := get(ctx, id)
		if err != nil {
			return err
		}
		return fn(obj)
	}
}

func (e *testEnv) expectLBCount(n int) error {
	lbs := e.loadBalancersNoT()
	if len(lbs) != n {
		ids := make([]string, 0, len(lbs))
		for _, lb := range lbs {
			ids = append(ids, lb.ID)
		}
		slices.Sort(ids)
		return fmt.Errorf("want %d load balancers in the cloud, have %d: %v", n, len(lbs), ids)
	}
	return nil
}
