output "network_id" {
  description = "Id of the network holding the routes."
  value       = local.network_id
}

output "route_ids" {
  description = "Route id by destination CIDR."
  value       = { for dest, r in example_route.this : dest => r.id }
}

output "routes" {
  description = "Routes by destination CIDR: id, target_instance_id and status (active, or blackhole when the target instance is gone)."
  value = { for dest, r in example_route.this : dest => {
    id                 = r.id
    target_instance_id = r.target_instance_id
    status             = r.status
  } }
}
