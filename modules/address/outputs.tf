output "id" {
  description = "Id of the address (addr-...)."
  value       = example_address.this.id
}

output "ip" {
  description = "The reserved IP: the attached load balancer's ipv4 (or ipv6 for family = \"ipv6\")."
  value       = example_address.this.ip
}

output "load_balancer_id" {
  description = "The load balancer holding the address (lb-...); null when detached."
  value       = example_address.this.load_balancer_id
}
