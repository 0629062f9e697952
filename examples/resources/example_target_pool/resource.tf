data "example_instances" "workers" {
  tags = { role = "worker" }
}

# One pool for every load balancer that forwards to the workers: a node
# joining or leaving updates the pool once, not every load balancer.
resource "example_target_pool" "workers" {
  name    = "prod-workers"
  targets = data.example_instances.workers.ids
  tags    = { cluster = "prod" }

  # An import (or adoption) of a pool whose cluster tag names another
  # owner is refused.
  owner_tags = ["cluster"]

  # A pool left by an interrupted apply is adopted when its tags match.
  on_name_conflict = "adopt_if_tags_match"

  # Load balancers that use the pool are moved off it before it is
  # destroyed (the API refuses to delete a pool in use).
  lifecycle {
    create_before_destroy = true
  }
}

resource "example_load_balancer" "web" {
  name           = "web"
  listeners      = { "tcp/80" = { protocol = "tcp", port = 80, target_port = 30080 } }
  target_pool_id = example_target_pool.workers.id
}

resource "example_load_balancer" "api" {
  name           = "api"
  listeners      = { "tcp/443" = { protocol = "tcp", port = 443, target_port = 30443 } }
  target_pool_id = example_target_pool.workers.id
}
