# The address that holds an IP, e.g. to attach one another configuration
# reserved (or by id, or by name and region).
data "example_address" "partner_allowlisted" {
  ip = "203.0.113.7"
}

output "attached_to" {
  value = data.example_address.partner_allowlisted.load_balancer_id
}
