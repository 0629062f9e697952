# terraform test, offline: the provider is mocked, so these runs check the
# module's own logic (network lookup, keys, outputs, validation).

mock_provider "example" {
  mock_data "example_network" {
    defaults = {
      id = "net-looked-up"
    }
  }
}

variables {
  routes = {
    "10.244.1.0/24"      = "i-1"
    "fd00:10:244:1::/64" = "i-2"
  }
}

run "network_by_name" {
  command = plan

  variables {
    network_name = "cluster-net"
  }

  assert {
    condition     = output.network_id == "net-looked-up"
    error_message = "network_name must be looked up with the example_network data source."
  }

  assert {
    condition     = example_route.this["fd00:10:244:1::/64"].target_instance_id == "i-2"
    error_message = "Routes must be keyed by destination."
  }
}

run "network_by_id" {
  variables {
    network_id = "net-given"
  }

  assert {
    condition     = length(data.example_network.this) == 0
    error_message = "No lookup with network_id."
  }

  assert {
    condition     = alltrue([for r in example_route.this : r.network_id == "net-given"])
    error_message = "Every route must go into the given network."
  }

  assert {
    condition     = alltrue([for r in example_route.this : r.on_destination_conflict == "adopt_if_same_target"])
    error_message = "A route left by an interrupted apply must be adopted when it has the same target."
  }

  assert {
    condition     = keys(output.route_ids) == ["10.244.1.0/24", "fd00:10:244:1::/64"]
    error_message = "route_ids must be keyed by destination."
  }

  assert {
    condition     = output.routes["10.244.1.0/24"].target_instance_id == "i-1" && output.routes["10.244.1.0/24"].id == output.route_ids["10.244.1.0/24"]
    error_message = "routes must carry id and target_instance_id by destination."
  }
}

run "network_neither" {
  command = plan

  expect_failures = [var.network_name]
}

run "network_both" {
  command = plan

  variables {
    network_id   = "net-1"
    network_name = "cluster-net"
  }

  expect_failures = [var.network_name]
}
