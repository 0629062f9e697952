resource "example_load_balancer" "this" {
  name                 = var.name
  region               = var.region
  type                 = var.type
  internal             = var.internal
  ip_family            = var.ip_family
  algorithm            = var.algorithm
  listeners            = var.listeners
  health_check         = var.health_check
  allowed_source_cidrs = var.allowed_source_cidrs
  targets              = var.targets
  tags                 = var.tags
  timeouts             = var.timeouts

  # Crash recovery: an apply killed after the cloud created the load
  # balancer but before state recorded it leaves the name taken, and every
  # later create gets a 409. The load balancer is adopted when its tags
  # contain all of var.tags with the same values (the controller's tags
  # include the cluster id and the Service UID); otherwise the apply fails.
  on_name_conflict = "adopt_if_tags_match"
}
