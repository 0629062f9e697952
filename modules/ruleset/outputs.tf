output "id" {
  description = "Id of the rule set: \"<load balancer id>/<name>\"."
  value       = example_load_balancer_rule_set.this.id
}
