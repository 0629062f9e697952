# A rule set is imported by "<load_balancer_id>/<name>" (the name may
# hold "/": the first one ends the load balancer's id).
terraform import example_load_balancer_rule_set.shop lb-0123456789abcdef/default/shop
