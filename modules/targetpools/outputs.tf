output "ids" {
  description = "Pool id (tp-...) by key: what a load balancer's target_pool_id takes."
  value       = { for k, p in example_target_pool.this : k => p.id }
}

output "selectors" {
  description = "The node selection each pool stands for, by key (its k8s.example.com/node-selector tag; \"\" when unset): lets a controller that starts know every pool it keeps."
  value       = { for k, p in var.pools : k => lookup(p.tags, "k8s.example.com/node-selector", "") }
}

output "targets" {
  description = "The targets each pool forwards to (instance ids, or IP:port pairs for target_type ip), by key, sorted: a controller deciding which leaving nodes may go next reads what the pools hold."
  value       = { for k, p in example_target_pool.this : k => sort(p.targets) }
}
