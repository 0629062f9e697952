data "example_instances" "workers" {
  tags = { role = "worker" }
}

resource "example_load_balancer" "web" {
  name      = "web"
  type      = "lb-medium"
  algorithm = "least_connections"

  # Keyed "<protocol>/<port>": a changed port plans as one listener
  # removed and one added, the others unchanged.
  listeners = {
    "tcp/80"  = { protocol = "tcp", port = 80, target_port = 30080 }
    "tcp/443" = { protocol = "tcp", port = 443, target_port = 30443, proxy_protocol = true }
  }

  health_check = {
    protocol = "http"
    port     = 30080
    path     = "/healthz"
  }

  allowed_source_cidrs = ["192.0.2.0/24", "2001:db8::/32"]
  targets              = data.example_instances.workers.ids
  tags                 = { service = "default/web", cluster = "prod" }

  # An import (or adoption) of a load balancer whose service or cluster
  # tag names another owner is refused.
  owner_tags = ["cluster", "service"]

  timeouts = {
    create = "15m"
  }
}

output "web_address" {
  value = example_load_balancer.web.ipv4
}
