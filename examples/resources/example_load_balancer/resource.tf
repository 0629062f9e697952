data "example_instances" "workers" {
  tags = { role = "worker" }
}

resource "example_load_balancer" "web" {
  name      = "web"
  type      = "lb-medium"
  algorithm = "least_connections"

  listeners = [
    { protocol = "tcp", port = 80, target_port = 30080 },
    { protocol = "tcp", port = 443, target_port = 30443, proxy_protocol = true },
  ]

  health_check = {
    protocol = "http"
    port     = 30080
    path     = "/healthz"
  }

  allowed_source_cidrs = ["192.0.2.0/24", "2001:db8::/32"]
  targets              = data.example_instances.workers.ids
  tags                 = { service = "default/web" }

  timeouts = {
    create = "15m"
  }
}

output "web_address" {
  value = example_load_balancer.web.ipv4
}
