package tfprovider

import (
	"fmt"
	"maps"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/statecheck"
	"github.com/hashicorp/terraform-plugin-testing/terraform"
	"github.com/hashicorp/terraform-plugin-testing/tfjsonpath"

	"github.com/example/cloud-provider-example/exampleapi"
)

// ownedLB is a load balancer resource that names its owner the way the
// controller does (a cluster and a Service uid), optionally imported by id.
func ownedLB(res, name, uid, importID string) string {
	s := fmt.Sprintf(`
resource "example_load_balancer" %q {
  name       = %q
  listeners  = { %s }
  owner_tags = ["cluster", "service-uid"]
  tags       = { cluster = "c1", "service-uid" = %q, team = "web" }
}
`, res, name, listenerHTTP, uid)
	if importID != "" {
		s += fmt.Sprintf(`
import {
  to = example_load_balancer.%s
  id = %q
}
`, res, importID)
	}
	return s
}

// TestAccLoadBalancer_importOwnership: an import (import block or
// terraform import) of a load balancer whose owner tags name another owner
// is refused at plan time, whatever name the configuration gives it; an
// untagged one, or one with this configuration's owner tags, is imported,
// and once applied it is managed like any other.
func TestAccLoadBalancer_importOwnership(t *testing.T) {
	e := newTestEnv(t)
	victim := e.createLB(t, exampleapi.LoadBalancerSpec{Name: "victim", IPFamily: exampleapi.IPFamilyIPv4,
		Tags: map[string]string{"cluster": "c1", "service-uid": "u-victim"}})
	untagged := e.createLB(t, exampleapi.LoadBalancerSpec{Name: "untagged", IPFamily: exampleapi.IPFamilyIPv4})
	mine := e.createLB(t, exampleapi.LoadBalancerSpec{Name: "mine", IPFamily: exampleapi.IPFamilyIPv4,
		Tags: map[string]string{"cluster": "c1", "service-uid": "u-1", "team": "old"}})
	refused := diagRE("Cannot import a load balancer of another owner", victim.ID, `(name "victim", region ex-west-1)`,
		`was imported, but its tags show another owner:`, `tag "service-uid" is "u-victim", not this configuration's "u-1"`)

	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: protoV6Factories,
		CheckDestroy: func(*terraform.State) error {
			// The imported ones were destroyed with the configuration;
			// the victim is untouched.
			if err := e.expectLBCount(1); err != nil {
				return err
			}
			ctx, cancel := bg()
			defer cancel()
			got, err := e.client.GetLoadBalancer(ctx, victim.ID)
			if err != nil || got.Version != victim.Version || !maps.Equal(got.Tags, victim.Tags) {
				return fmt.Errorf("victim %s changed: %+v (%v)", victim.ID, got, err)
			}
			return nil
		},
		Steps: []resource.TestStep{
			{
				Config:      e.config(ownedLB("web", "web", "u-1", "lb-0000000000000000")),
				ExpectError: diagRE("Cannot import load balancer lb-0000000000000000", `"lb-0000000000000000" does not exist`),
			},
			{
				// Import block, the victim's own name.
				Config:      e.config(ownedLB("web", "victim", "u-1", victim.ID)),
				ExpectError: refused,
			},
			{
				// Another name: the plan would replace (delete) the victim.
				Config:      e.config(ownedLB("web", "mine-now", "u-1", victim.ID)),
				ExpectError: refused,
			},
			{
				// terraform import itself succeeds (no configuration to
				// check against yet)...
				Config:             e.config(ownedLB("web", "victim", "u-1", "")),
				ResourceName:       "example_load_balancer.web",
				ImportState:        true,
				ImportStateId:      victim.ID,
				ImportStatePersist: true,
			},
			{
				// ...and every plan after it is refused.
				Config:      e.config(ownedLB("web", "victim", "u-1", "")),
				ExpectError: refused,
			},
			{
				// The way out: forget it without deleting it.
				Config: e.config(`
removed {
  from = example_load_balancer.web
  lifecycle {
    destroy = false
  }
}
`),
			},
			{
				// Untagged, or tagged for this configuration: imported
				// and updated to the configuration.
				Config: e.config(ownedLB("a", "untagged", "u-1", untagged.ID) + ownedLB("b", "mine", "u-1", mine.ID)),
				ConfigPlanChecks: resource.ConfigPlanChecks{
					PreApply: []plancheck.PlanCheck{
						plancheck.ExpectResourceAction("example_load_balancer.a", plancheck.ResourceActionUpdate),
						plancheck.ExpectResourceAction("example_load_balancer.b", plancheck.ResourceActionUpdate),
					},
				},
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue("example_load_balancer.a", tfjsonpath.New("id"), knownvalue.StringExact(untagged.ID)),
					statecheck.ExpectKnownValue("example_load_balancer.b", tfjsonpath.New("id"), knownvalue.StringExact(mine.ID)),
					statecheck.ExpectKnownValue("example_load_balancer.b", tfjsonpath.New("tags").AtMapKey("team"), knownvalue.StringExact("web")),
				},
				Check: func(*terraform.State) error { return e.expectLBCount(3) },
			},
			{
				// Applied, the import is checked no more: its owner tags
				// may change like any argument.
				Config: e.config(ownedLB("a", "untagged", "u-1", untagged.ID) + ownedLB("b", "mine", "u-2", mine.ID)),
				ConfigPlanChecks: resource.ConfigPlanChecks{
					PreApply: []plancheck.PlanCheck{plancheck.ExpectResourceAction("example_load_balancer.b", plancheck.ResourceActionUpdate)},
				},
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue("example_load_balancer.b", tfjsonpath.New("tags").AtMapKey("service-uid"), knownvalue.StringExact("u-2")),
				},
			},
		},
	})
}
