output "id" {
  description = "Id of the load balancer (lb-...)."
  value       = example_load_balancer.this.id
}

output "ipv4" {
  description = "IPv4 address of the load balancer (public, or internal when internal = true)."
  value       = example_load_balancer.this.ipv4
}

output "ipv6" {
  description = "IPv6 address of the load balancer; null unless ip_family = \"dualstack\"."
  value       = example_load_balancer.this.ipv6
}

output "hostname" {
  description = "DNS name of the load balancer."
  value       = example_load_balancer.this.hostname
}

output "status" {
  description = "provisioning, active or error."
  value       = example_load_balancer.this.status
}
