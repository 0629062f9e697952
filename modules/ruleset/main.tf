# One route's rules on a Gateway's load balancer (docs/adr/0028): a rule
# set of the cloud, written on its own, so a route's change is a plan of
# its rules alone. The rules are keyed by name, as the provider takes
# them, so a plan shows a changed rule as that rule updated in place.
#
# A set of this name on the load balancer is taken over: the controller
# alone writes a Gateway's sets, so one there is what an apply it killed
# mid-way created and never recorded.
resource "example_load_balancer_rule_set" "this" {
  load_balancer_id = var.load_balancer_id
  name             = var.name
  rules            = { for r in var.rules : r.name => { for k, v in r : k => v if k != "name" } }
  on_name_conflict = "adopt"
}
