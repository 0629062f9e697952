variable "name" {
  description = "Name of the address, unique per region. Changing it replaces the address, which releases its IP and reserves another."
  type        = string
  nullable    = false

  validation {
    condition     = length(var.name) <= 253 && can(regex("^[A-Za-z0-9][A-Za-z0-9._-]*$", var.name))
    error_message = "The name must be 1-253 characters of letters, digits, '.', '_' and '-', starting with a letter or digit."
  }
}

variable "region" {
  description = "Region of the address; null uses the provider's region. Only load balancers of the same region take it. Changing it replaces the address (a new IP)."
  type        = string
  default     = null
}

variable "family" {
  description = "ipv4, or ipv6 (which attaches to dualstack load balancers only). Changing it replaces the address (a new IP)."
  type        = string
  default     = "ipv4"
  nullable    = false

  validation {
    condition     = contains(["ipv4", "ipv6"], var.family)
    error_message = "The family must be one of: ipv4, ipv6."
  }
}

variable "load_balancer_id" {
  description = "Id of the load balancer (lb-...) the address is attached to; null for none. Changes in place: attaching, moving from one load balancer to another in one request, detaching (the address keeps its IP)."
  type        = string
  default     = null

  validation {
    condition     = var.load_balancer_id == null ? true : startswith(var.load_balancer_id, "lb-") && length(var.load_balancer_id) > 3
    error_message = "load_balancer_id must be a load balancer id (lb-...) or null."
  }
}

variable "tags" {
  description = "Tags of the address (at most 50; keys 1-128 characters without '=', values at most 256 characters). Change in place."
  type        = map(string)
  default     = {}
  nullable    = false

  validation {
    condition = length(var.tags) <= 50 && alltrue([
      for k, v in var.tags : length(k) >= 1 && length(k) <= 128 && !strcontains(k, "=") && length(v) <= 256
    ])
    error_message = "At most 50 tags; keys 1-128 characters without '=', values at most 256 characters."
  }
}
