output "ids" {
  description = "Certificate ids (cert-...) by the keys of var.certificates: the loadbalancer module's certificates input."
  value       = { for k, c in example_certificate.this : k => c.id }
}

output "not_after" {
  description = "When each leaf certificate expires (RFC 3339, UTC), by the keys of var.certificates."
  value       = { for k, c in example_certificate.this : k => c.not_after }
}
