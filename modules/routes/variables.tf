variable "network_id" {
  description = "Id (net-...) of the network whose route table gets the routes. Set this or network_name."
  type        = string
  default     = null

  validation {
    condition     = var.network_id == null ? true : startswith(var.network_id, "net-")
    error_message = "The network_id must be a network id (net-...)."
  }
}

variable "network_name" {
  description = "Name of the network, looked up in region (or the provider's region). Set this or network_id."
  type        = string
  default     = null

  validation {
    condition     = (var.network_id == null) != (var.network_name == null)
    error_message = "Set exactly one of network_id and network_name."
  }
}

variable "region" {
  description = "Region to look network_name up in; null uses the provider's region. Ignored with network_id."
  type        = string
  default     = null
}

variable "routes" {
  description = "Routes as { \"<destination CIDR>\" = \"<target instance id>\" }. Destinations are IPv4 or IPv6 CIDRs in canonical form; each route is its own resource, so adding or removing one never touches the others."
  type        = map(string)
  default     = {}
  nullable    = false

  validation {
    # cidrsubnet(d, 0, 0) is d without host bits: the API rejects those.
    condition     = alltrue([for d in keys(var.routes) : can(cidrhost(d, 0)) && try(cidrsubnet(d, 0, 0) == d, false)])
    error_message = "Every route destination must be a CIDR in canonical form (no host bits), e.g. 10.244.1.0/24 or fd00:10:244:1::/64."
  }

  validation {
    condition     = alltrue([for t in values(var.routes) : startswith(t, "i-")])
    error_message = "Every route target must be an instance id (i-...)."
  }
}
