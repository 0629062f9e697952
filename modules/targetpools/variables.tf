variable "name_prefix" {
  description = "Prefix of every pool's name: a pool is named name_prefix + its key, unique per region (e.g. \"k8s-prod-\" for the key \"workers\" gives \"k8s-prod-workers\"). Changing it replaces every pool."
  type        = string
  nullable    = false
}

variable "region" {
  description = "Region of the pools; null uses the provider's region. Only load balancers of the same region can use a pool. Changing it replaces every pool."
  type        = string
  default     = null
}

variable "pools" {
  description = "Target pools by a stable key: { \"<key>\" = { target_type = \"instance\", targets = [instance ids], tags = {...}, deregistration_delay_seconds = 60 } }. A pool is named name_prefix + key; target_type is instance (the default: targets are instance ids i-...) or ip (targets are IP:port pairs such as pods', 10.244.1.5:8080 or [fd00::5]:8080, each inside a route of the region; such a pool is only a rule backend's, of port 0) and replaces the pool on change; targets (at most 5000, possibly none), tags (at most 50) and the pool's own deregistration delay (0-3600 seconds; unset: deregistration_delay_seconds) change in place. Each pool is its own resource, so adding, changing or removing one never touches the others."
  type = map(object({
    target_type                  = optional(string, "instance")
    targets                      = set(string)
    tags                         = optional(map(string), {})
    deregistration_delay_seconds = optional(number)
  }))
  default  = {}
  nullable = false

  # Names must satisfy the API's rule. Refers to name_prefix: Terraform 1.9.
  validation {
    condition = alltrue([for k in keys(var.pools) :
      length("${var.name_prefix}${k}") <= 253 && can(regex("^[A-Za-z0-9][A-Za-z0-9._-]*$", "${var.name_prefix}${k}"))
    ])
    error_message = "Every pool name (name_prefix + key) must be 1-253 characters of letters, digits, '.', '_' and '-', starting with a letter or digit; invalid: ${join(", ", [for k in keys(var.pools) : "\"${var.name_prefix}${k}\"" if !(length("${var.name_prefix}${k}") <= 253 && can(regex("^[A-Za-z0-9][A-Za-z0-9._-]*$", "${var.name_prefix}${k}")))])}."
  }

  validation {
    condition     = alltrue([for p in values(var.pools) : p.targets != null])
    error_message = "Every pool needs targets (a set of instance ids, [] for none)."
  }

  validation {
    condition     = alltrue([for p in values(var.pools) : try(length(p.targets) <= 5000, true)])
    error_message = "At most 5000 targets per pool are allowed (the Example cloud's limit); too many in: ${join(", ", [for k, p in var.pools : k if try(length(p.targets) > 5000, false)])}."
  }

  validation {
    condition     = alltrue([for p in values(var.pools) : contains(["instance", "ip"], p.target_type)])
    error_message = "A pool's target_type must be one of: instance, ip; invalid in: ${join(", ", [for k, p in var.pools : k if !contains(["instance", "ip"], p.target_type)])}."
  }

  # By target type: an instance id, or IP:port (IPv6 in brackets, port
  # 1-65535). The provider checks the canonical form, the cloud the routes.
  validation {
    condition = alltrue([for p in values(var.pools) : try(alltrue([for t in p.targets : p.target_type == "ip" ? (
      can(regex("^(?:[0-9]{1,3}(?:\\.[0-9]{1,3}){3}|\\[[0-9A-Fa-f:.]+\\]):[1-9][0-9]{0,4}$", t)) && try(tonumber(regex("[0-9]+$", t)) <= 65535, false)
    ) : startswith(t, "i-")]), true)])
    error_message = "Every target must be an instance id (i-...) in a pool of target_type instance, and an IP:port pair (10.244.1.5:8080, [fd00::5]:8080) in one of target_type ip; invalid in: ${join(", ", [for k, p in var.pools : k if !try(alltrue([for t in p.targets : p.target_type == "ip" ? (can(regex("^(?:[0-9]{1,3}(?:\\.[0-9]{1,3}){3}|\\[[0-9A-Fa-f:.]+\\]):[1-9][0-9]{0,4}$", t)) && try(tonumber(regex("[0-9]+$", t)) <= 65535, false)) : startswith(t, "i-")]), true)])}."
  }

  validation {
    condition     = alltrue([for p in values(var.pools) : p.deregistration_delay_seconds == null ? true : p.deregistration_delay_seconds >= 0 && p.deregistration_delay_seconds <= 3600 && floor(p.deregistration_delay_seconds) == p.deregistration_delay_seconds])
    error_message = "A pool's deregistration_delay_seconds must be a whole number of seconds from 0 to 3600."
  }

  validation {
    condition = alltrue([for p in values(var.pools) : p.tags == null ? true : length(p.tags) <= 50 && alltrue([
      for k, v in p.tags : length(k) >= 1 && length(k) <= 128 && !strcontains(k, "=") && length(v) <= 256
    ])])
    error_message = "At most 50 tags per pool; keys 1-128 characters without '=', values at most 256 characters."
  }
}

variable "deregistration_delay_seconds" {
  description = "How long (0-3600 seconds) a target removed from a pool keeps the connections it has, getting no new ones (the cloud lists it as draining); 0 removes it at once. Changes every pool in place, for the targets removed from then on."
  type        = number
  default     = 0
  nullable    = false

  validation {
    condition     = var.deregistration_delay_seconds >= 0 && var.deregistration_delay_seconds <= 3600 && floor(var.deregistration_delay_seconds) == var.deregistration_delay_seconds
    error_message = "deregistration_delay_seconds must be a whole number of seconds from 0 to 3600."
  }
}
