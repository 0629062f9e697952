# Looked up only when the caller names the network instead of giving its id.
data "example_network" "this" {
  count = var.network_id == null ? 1 : 0

  name   = var.network_name
  region = var.region
}

locals {
  network_id = var.network_id != null ? var.network_id : data.example_network.this[0].id
}

# Keyed by destination: adding or removing one route plans only that route.
resource "example_route" "this" {
  for_each = var.routes

  network_id         = local.network_id
  destination_cidr   = each.key
  target_instance_id = each.value

  # Crash recovery: an apply killed after the cloud created a route but
  # before state recorded it leaves the destination taken, and every later
  # create gets a 409. A route for the destination that already sends
  # traffic to the same instance is adopted; one with another target fails
  # the apply.
  on_destination_conflict = "adopt_if_same_target"
}
