output "ids" {
  description = "Pool id (tp-...) by key: what a load balancer's target_pool_id takes."
  value       = { for k, p in example_target_pool.this : k => p.id }
}
