package tfprovider

import (
	"fmt"
	"regexp"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"github.com/hashicorp/terraform-plugin-testing/statecheck"
	"github.com/hashicorp/terraform-plugin-testing/tfjsonpath"
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
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue(ds("example_instance.by_id"), tfjsonpath.New("name"), knownvalue.StringExact("node-a")),
					statecheck.ExpectKnownValue(ds("example_instance.by_id"), tfjsonpath.New("zone"), knownvalue.StringExact("ex-west-1a")),
					statecheck.ExpectKnownValue(ds("example_instance.by_id"), tfjsonpath.New("state"), knownvalue.StringExact("running")),
					statecheck.ExpectKnownValue(ds("example_instance.by_id"), tfjsonpath.New("private_ipv4"), knownvalue.StringExact(a.PrivateIPv4)),
					statecheck.ExpectKnownValue(ds("example_instance.by_id"), tfjsonpath.New("tags"), knownvalue.MapExact(map[string]knownvalue.Check{
						"cluster": knownvalue.StringExact("demo"), "role": knownvalue.StringExact("worker")})),
					statecheck.ExpectKnownValue(ds("example_instance.by_name"), tfjsonpath.New("id"), knownvalue.StringExact(b.ID)),
					statecheck.ExpectKnownValue(ds("example_instance.by_name"), tfjsonpath.New("region"), knownvalue.StringExact("ex-west-1")),
					statecheck.ExpectKnownValue(ds("example_instance.east"), tfjsonpath.New("zone"), knownvalue.StringExact("ex-east-1a")),
					statecheck.ExpectKnownValue(ds("example_instances.demo"), tfjsonpath.New("ids"), knownvalue.SetExact([]knownvalue.Check{
						knownvalue.StringExact(a.ID), knownvalue.StringExact(b.ID)})),
					statecheck.ExpectKnownValue(ds("example_instances.demo"), tfjsonpath.New("instances"), knownvalue.ListSizeExact(2)),
					statecheck.ExpectKnownValue(ds("example_instances.zone_b"), tfjsonpath.New("instances"), knownvalue.ListSizeExact(2)),
					statecheck.ExpectKnownValue(ds("example_zones.west"), tfjsonpath.New("names"), knownvalue.ListExact([]knownvalue.Check{
						knownvalue.StringExact("ex-west-1a"), knownvalue.StringExact("ex-west-1b"), knownvalue.StringExact("ex-west-1c")})),
					statecheck.ExpectKnownValue(ds("example_zones.east"), tfjsonpath.New("zones"), knownvalue.ListExact([]knownvalue.Check{
						knownvalue.ObjectExact(map[string]knownvalue.Check{"name": knownvalue.StringExact("ex-east-1a"), "region": knownvalue.StringExact("ex-east-1")})})),
					statecheck.ExpectKnownValue(ds("example_network.by_name"), tfjsonpath.New("cidr"), knownvalue.StringExact("10.0.0.0/16")),
					statecheck.ExpectKnownValue(ds("example_network.by_name"), tfjsonpath.New("ipv6_cidr"), knownvalue.StringExact("fd00:10::/48")),
					statecheck.ExpectKnownValue(ds("example_network.by_id"), tfjsonpath.New("name"), knownvalue.StringExact("default")),
					statecheck.ExpectKnownValue(ds("example_network.by_id"), tfjsonpath.New("region"), knownvalue.StringExact("ex-west-1")),
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
	e := newTestEnv(t)
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: protoV6Factories,
		Steps: []resource.TestStep{
			{
				Config:      e.config(`data "example_instance" "x" { name = "ghost" }`),
				ExpectError: regexp.MustCompile(`Instance not found[\s\S]*No instance named "ghost" exists in region\s+ex-west-1`),
			},
			{
				Config:      e.config("data \"example_instance\" \"x\" {\n  id   = \"i-00\"\n  name = \"ghost\"\n}\n"),
				ExpectError: regexp.MustCompile(`Invalid Attribute Combination`),
			},
			{
				Config:      e.config(`data "example_network" "x" {}`),
				ExpectError: regexp.MustCompile(`Exactly one of these attributes must be configured: \[id,name\]`),
			},
			{
				Config:      e.config(`data "example_network" "x" { id = "net-missing" }`),
				ExpectError: regexp.MustCompile(`Network not found`),
			},
			{
				Config:      e.config(`data "example_zones" "x" { region = "ex-nowhere-1" }`),
				ExpectError: regexp.MustCompile(`ex-nowhere-1`),
			},
		},
	})
}
