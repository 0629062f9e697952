variable "load_balancer_id" {
  description = "Id of the load balancer (lb-...) the rule set is attached to: a Gateway's, as its own workspace applied it. Changing it replaces the rule set."
  type        = string
  nullable    = false

  validation {
    condition     = startswith(var.load_balancer_id, "lb-") && length(var.load_balancer_id) > 3
    error_message = "load_balancer_id must be a load balancer id (lb-...)."
  }
}

variable "name" {
  description = "Name of the rule set on its load balancer (1-128 letters, digits and ._-/:@#*). Changing it replaces the rule set."
  type        = string
  nullable    = false

  validation {
    condition     = can(regex("^[A-Za-z0-9._\\-/:@#*]{1,128}$", var.name))
    error_message = "The name must be 1-128 letters, digits and ._-/:@#*."
  }
}

# The rules are the loadbalancer module's rules, each with an order_key
# and no priority; the provider checks each at plan time, so they are
# typed here only as a list of objects with a name (a shared type would
# be a second copy of the loadbalancer module's).
variable "rules" {
  description = "The rule set's rules on the load balancer's http and https listeners, in the loadbalancer module's form, each with a name unique among them and an order_key (1-512 printable ASCII characters): the cloud orders a listener's keyed rules by key, those of every rule set together. No priority. At most 2000. Empty: the set routes nothing."
  type        = any
  default     = []
  nullable    = false

  validation {
    condition     = can([for r in var.rules : r.name]) && length(var.rules) <= 2000
    error_message = "rules must be a list of at most 2000 objects, each with a name."
  }

  validation {
    condition     = try(length(distinct([for r in var.rules : r.name])) == length(var.rules), false)
    error_message = "Rule names must be unique in the rule set."
  }

  validation {
    condition     = try(alltrue([for r in var.rules : try(r.order_key, null) != null && try(r.priority, null) == null]), false)
    error_message = "Every rule of a rule set has an order_key and no priority."
  }
}
