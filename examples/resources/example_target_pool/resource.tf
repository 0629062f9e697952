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

# Pods as targets: a pool of target type ip holds IP:port pairs, reached
# there (no node port). The cloud takes only IPs a route of the region
# reaches (an example_route to a node's pod CIDR, here 10.244.1.0/24): in
# one configuration, create the pool after that route (depends_on).
resource "example_target_pool" "echo_pods" {
  name        = "prod-echo-8080"
  target_type = "ip"
  targets     = ["10.244.1.10:8080", "10.244.1.11:8080"]
  tags        = { cluster = "prod" }
}

# A pool of target type ip is a rule's backend, of port 0: its targets
# carry their ports.
resource "example_load_balancer" "echo" {
  name      = "echo"
  listeners = { "http/80" = { protocol = "http", port = 80, target_port = 8080 } }

  rules = {
    "echo" = {
      listener_port = 80, priority = 1
      backends      = [{ target_pool_id = example_target_pool.echo_pods.id, port = 0 }]
    }
  }
}
