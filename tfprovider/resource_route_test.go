package tfprovider

import (
	"context"
	"fmt"
	"regexp"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/terraform"

	"github.com/example/cloud-provider-example/exampleapi"
)

const routeAddr = "example_route.pods"

func routeConfig(target, cidr string) string {
	return fmt.Sprintf(`
data "example_network" "default" {
  name = "default"
}

resource "example_route" "pods" {
  network_id         = data.example_network.default.id
  destination_cidr   = %q
  target_instance_id = %q
}
`, cidr, target)
}

// defaultNetwork is the id of the seeded network "default" of ex-west-1,
// the one routeConfig puts routes in.
func (e *testEnv) defaultNetwork(t *testing.T) string {
	t.Helper()
	ctx, cancel := bg()
	defer cancel()
	nets, err := e.client.ListNetworks(ctx, "ex-west-1", "default")
	if err != nil || len(nets) != 1 {
		t.Fatalf("default network: %v %v", nets, err)
	}
	return nets[0].ID
}

// TestAccRoute: create, import, replace on a new destination, blackhole
// once the target instance is deleted, destroy.
func TestAccRoute(t *testing.T) {
	e := newTestEnv(t)
	node := e.createInstance(t, "node-a", "ex-west-1a", nil)
	netID := e.defaultNetwork(t)

	checkRoutesGone := func(*terraform.State) error {
		return noneLeft("routes", func(ctx context.Context) ([]exampleapi.Route, error) {
			return e.client.ListRoutes(ctx, netID)
		})
	}

	accTest(t, checkRoutesGone, []resource.TestStep{
		{
			Config: e.config(routeConfig(node.ID, "10.244.1.0/24")),
			ConfigStateChecks: stateChecks{
				stateIs(routeAddr, "status", "active"),
				stateIs(routeAddr, "network_id", netID),
			},
			Check: resource.TestMatchResourceAttr(routeAddr, "id", regexp.MustCompile(`^rt-`)),
		},
		{
			ResourceName:      routeAddr,
			ImportState:       true,
			ImportStateVerify: true,
			ImportStateIdFunc: func(s *terraform.State) (string, error) {
				return netID + "/" + s.RootModule().Resources[routeAddr].Primary.ID, nil
			},
		},
		{
			Config:           e.config(routeConfig(node.ID, "fd00:10:1::/64")),
			ConfigPlanChecks: beforeApply(planReplace(routeAddr, false)),
		},
		{
			// The target disappears: the route stays, as a blackhole.
			PreConfig: func() {
				ctx, cancel := bg()
				defer cancel()
				if err := e.client.DeleteInstance(ctx, node.ID); err != nil {
					t.Fatalf("deleting instance: %v", err)
				}
			},
			Config: e.config(routeConfig(node.ID, "fd00:10:1::/64")),
			ConfigStateChecks: stateChecks{
				stateIs(routeAddr, "status", "blackhole"),
			},
		},
	})
}

// TestAccRoute_errors: plan-time validation, API conflicts on the
// attribute, and malformed import ids.
func TestAccRoute_errors(t *testing.T) {
	e := newTestEnv(t)
	node := e.createInstance(t, "node-a", "ex-west-1a", nil)
	dup := routeConfig(node.ID, "10.244.2.0/24") + fmt.Sprintf(`
resource "example_route" "dup" {
  network_id         = data.example_network.default.id
  destination_cidr   = "10.244.2.0/24"
  target_instance_id = %q
  depends_on         = [example_route.pods]
}
`, node.ID)
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: protoV6Factories,
		Steps: []resource.TestStep{
			{
				Config:      e.config(routeConfig(node.ID, "10.244.1.1/24")),
				ExpectError: regexp.MustCompile(`Invalid CIDR[\s\S]*did you mean\s+"10\.244\.1\.0/24"`),
			},
			{
				Config:      e.config(routeConfig("node-a", "10.244.1.0/24")),
				ExpectError: regexp.MustCompile(`must be an id starting with "i-"`),
			},
			{
				Config:      e.config(dup),
				ExpectError: regexp.MustCompile(`Route already exists[\s\S]*already has a route\s+for\s+10\.244\.2\.0/24[\s\S]*terraform import`),
			},
			{
				Config:        e.config(routeConfig(node.ID, "10.244.2.0/24")),
				ResourceName:  routeAddr,
				ImportState:   true,
				ImportStateId: "rt-123",
				ExpectError:   regexp.MustCompile(`want <network_id>/<route_id>`),
			},
		},
	})
}

// TestAccRoute_adoptOnDestinationConflict: a route left by an interrupted
// apply is adopted when it has the configured target, and refused (as is
// any conflict by default) when it has another.
func TestAccRoute_adoptOnDestinationConflict(t *testing.T) {
	e := newTestEnv(t)
	nodeA := e.createInstance(t, "node-a", "ex-west-1a", nil)
	nodeB := e.createInstance(t, "node-b", "ex-west-1b", nil)
	netID := e.defaultNetwork(t)
	ctx, cancel := bg()
	defer cancel()
	mine, err := e.client.CreateRoute(ctx, netID, exampleapi.CreateRouteRequest{DestinationCIDR: "10.244.5.0/24", TargetInstanceID: nodeA.ID})
	if err != nil {
		t.Fatal(err)
	}
	theirs, err := e.client.CreateRoute(ctx, netID, exampleapi.CreateRouteRequest{DestinationCIDR: "10.244.6.0/24", TargetInstanceID: nodeB.ID})
	if err != nil {
		t.Fatal(err)
	}
	rec := &warningRecorder{}
	adopted := routeConfig(nodeA.ID, "10.244.5.0/24")
	adopted = strings.Replace(adopted, "target_instance_id", `on_destination_conflict = "adopt_if_same_target"
  target_instance_id`, 1)
	other := func(mode string) string {
		return adopted + fmt.Sprintf(`
resource "example_route" "other" {
  network_id              = data.example_network.default.id
  destination_cidr        = "10.244.6.0/24"
  target_instance_id      = %q
  on_destination_conflict = %q
}
`, nodeA.ID, mode)
	}

	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: rec.factories(),
		CheckDestroy: func(*terraform.State) error {
			// Terraform destroyed the adopted route; the foreign one stays.
			ctx, cancel := bg()
			defer cancel()
			routes, err := e.client.ListRoutes(ctx, netID)
			if err != nil {
				return err
			}
			if len(routes) != 1 || routes[0].ID != theirs.ID {
				return fmt.Errorf("want only %s left, have %+v", theirs.ID, routes)
			}
			return nil
		},
		Steps: []resource.TestStep{
			{
				Config: e.config(adopted),
				ConfigStateChecks: stateChecks{
					stateIs(routeAddr, "id", mine.ID),
					stateIs(routeAddr, "status", "active"),
					stateIs(routeAddr, "on_destination_conflict", onDestinationConflictAdopt),
				},
				Check: rec.expect(regexp.MustCompile(`^Adopted existing route ` + mine.ID + `: Adopted existing route ` + mine.ID +
					` \(10\.244\.5\.0/24 to ` + nodeA.ID + ` in ` + netID + `\) whose target matches; it was probably created by an interrupted apply`)),
			},
			{
				Config: e.config(other(onDestinationConflictAdopt)),
				ExpectError: diagRE("Route already exists", fmt.Sprintf("It is %s and sends traffic to %s, not to %s", theirs.ID, nodeB.ID, nodeA.ID),
					"terraform import <address> "+netID+"/"+theirs.ID),
			},
			{
				Config:      e.config(other(onConflictError)),
				ExpectError: diagRE("Route already exists", `set on_destination_conflict = "adopt_if_same_target"`),
			},
		},
	})
}
