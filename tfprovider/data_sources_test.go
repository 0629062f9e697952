package tfprovider

import (
	"fmt"
	"regexp"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"

	"github.com/example/cloud-provider-example/internal/tftest"
)

// TestAccDataSources reads instances, zones and networks of the seeded
// simulator plus two instances created through the API.
func TestAccDataSources(t *testing.T) {
	e := newTestEnv(t)
	a := e.createInstance(t, "node-a", "ex-west-1a", map[string]string{"cluster": "demo", "role": "worker"})
	b := e.createInstance(t, "node-b", "ex-west-1b", map[string]string{"cluster": "demo"})
	e.createInstance(t, "other", "ex-west-1b", map[string]string{"cluster": "prod"})
	e.createInstance(t, "node-a", "ex-east-1a", nil) // same name, other region

	cfg := e.config(fmt.Sprintf(`
data "example_instance" "by_id" {
  id = %q
}

data "example_instance" "by_name" {
  name = "node-b"
}

data "example_instance" "east" {
  name   = "node-a"
  region = "ex-east-1"
}

data "example_instances" "demo" {
  tags = { cluster = "demo" }
}

data "example_instances" "zone_b" {
  zone = "ex-west-1b"
}

data "example_zones" "west" {}

data "example_zones" "east" {
  region = "ex-east-1"
}

data "example_network" "by_name" {
  name = "default"
}

data "example_network" "by_id" {
  id = data.example_network.by_name.id
}
`, a.ID))
	ds := func(name string) string { return "data." + name }
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: protoV6Factories,
		Steps: []resource.TestStep{
			{
				Config: cfg,
				ConfigStateChecks: stateChecks{
					stateIs(ds("example_instance.by_id"), "name", "node-a"),
					stateIs(ds("example_instance.by_id"), "zone", "ex-west-1a"),
					stateIs(ds("example_instance.by_id"), "state", "running"),
					stateIs(ds("example_instance.by_id"), "private_ipv4", a.PrivateIPv4),
					stateIs(ds("example_instance.by_id"), "tags", mapOf{"cluster": "demo", "role": "worker"}),
					stateIs(ds("example_instance.by_name"), "id", b.ID),
					stateIs(ds("example_instance.by_name"), "region", "ex-west-1"),
					stateIs(ds("example_instance.east"), "zone", "ex-east-1a"),
					stateIs(ds("example_instances.demo"), "ids", setOf(a.ID, b.ID)),
					stateIs(ds("example_instances.demo"), "instances", listLen(2)),
					stateIs(ds("example_instances.zone_b"), "instances", listLen(2)),
					stateIs(ds("example_zones.west"), "names", listOf("ex-west-1a", "ex-west-1b", "ex-west-1c")),
					stateIs(ds("example_zones.east"), "zones", listOf(object{"name": "ex-east-1a", "region": "ex-east-1"})),
					stateIs(ds("example_network.by_name"), "cidr", "10.0.0.0/16"),
					stateIs(ds("example_network.by_name"), "ipv6_cidr", "fd00:10::/48"),
					stateIs(ds("example_network.by_id"), "name", "default"),
					stateIs(ds("example_network.by_id"), "region", "ex-west-1"),
				},
				Check: resource.ComposeAggregateTestCheckFunc(
					resource.TestCheckResourceAttr(ds("example_instances.demo"), "instances.0.tags.cluster", "demo"),
					resource.TestMatchResourceAttr(ds("example_instance.by_id"), "created_at", regexp.MustCompile(`^\d{4}-\d\d-\d\dT`)),
				),
			},
		},
	})
}

// TestAccDataSources_errors: lookups that find nothing, or need
// exactly one of id and name.
func TestAccDataSources_errors(t *testing.T) {
	tftest.RequireAcceptance(t)
	t.Parallel()
	e := newTestEnv(t)
	e.expectErrors(t, []configError{
		{`data "example_instance" "x" { name = "ghost" }`, `Instance not found[\s\S]*No instance named "ghost" exists in region\s+ex-west-1`},
		{"data \"example_instance\" \"x\" {\n  id   = \"i-00\"\n  name = \"ghost\"\n}\n", `Invalid Attribute Combination`},
		{`data "example_network" "x" {}`, `Exactly one of these attributes must be configured: \[id,name\]`},
		{`data "example_network" "x" { id = "net-missing" }`, `Network not found`},
		{`data "example_zones" "x" { region = "ex-nowhere-1" }`, `ex-nowhere-1`},
	})
}
