# A route's rules in a workspace of their own: the load balancer, its
# listeners and its own rules are another workspace's (a Gateway's), which
# gives this one the load balancer's id.
variable "load_balancer_id" {
  type        = string
  description = "Id (lb-...) of the load balancer, with an http listener on port 80."
}

variable "target_pool_id" {
  type        = string
  description = "Id (tp-...) of the target pool of the route's backend."
}

# Changing these rules plans and applies this set only, not the load
# balancer and its other sets. Each is placed by order_key among the keyed
# rules of the load balancer and of all its sets (equal keys: by set
# name, the load balancer's own first, then by rule name): a keyed rule
# of the load balancer such as { order_key = "a.example/~",
# hostnames = ["a.example"], fixed_response = { status_code = 404 } }
# comes after both ("~" sorts after the digits).
resource "example_load_balancer_rule_set" "shop" {
  load_balancer_id = var.load_balancer_id
  name             = "default/shop"

  rules = {
    "api" = {
      listener_port = 80, order_key = "a.example/0001/prefix/0004/api", hostnames = ["a.example"]
      path_type     = "prefix", path = "/api"
      backends      = [{ target_pool_id = var.target_pool_id, port = 30001, protocol = "h2c" }]
    }
    "web" = {
      listener_port = 80, order_key = "a.example/0002/prefix/0001/", hostnames = ["a.example"]
      path_type     = "prefix", path = "/"
      backends      = [{ target_pool_id = var.target_pool_id, port = 30002 }]
    }
  }
}
