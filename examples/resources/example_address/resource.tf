resource "example_load_balancer" "blue" {
  name      = "web-blue"
  listeners = { "tcp/443" = { protocol = "tcp", port = 443, target_port = 30443 } }
}

resource "example_load_balancer" "green" {
  name      = "web-green"
  listeners = { "tcp/443" = { protocol = "tcp", port = 443, target_port = 30443 } }
}

# The IP that DNS records point at: reserved until the address is
# destroyed, whatever happens to the load balancers.
resource "example_address" "web" {
  name = "web"
  tags = { team = "web" }

  # Blue/green: pointing this at the green load balancer moves the IP in
  # one in-place update, never on both and never free in between. Unset,
  # the address is detached and keeps its IP.
  load_balancer_id = example_load_balancer.blue.id
}

# An IPv6 address goes to a dualstack load balancer only.
resource "example_address" "web_v6" {
  name             = "web-v6"
  family           = "ipv6"
  load_balancer_id = example_load_balancer.dualstack.id
}

resource "example_load_balancer" "dualstack" {
  name      = "web-dualstack"
  ip_family = "dualstack"
  listeners = { "tcp/443" = { protocol = "tcp", port = 443, target_port = 30443 } }
}

output "web_ip" {
  value = example_address.web.ip
}
