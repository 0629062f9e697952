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
}
