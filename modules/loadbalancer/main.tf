locals {
  # The provider keys listeners by "<protocol>/<port>", so a plan shows a
  # changed port as one listener removed and one added, and a changed
  # target_port as one listener updated, instead of shifting every listener
  # after it. var.listeners stays a list (what the controller renders);
  # validation makes the keys unique.
  # certificates (keys) resolve to ids ahead of certificate_ids.
  listeners = { for l in var.listeners : "${l.protocol}/${l.port}" => {
    protocol       = l.protocol
    port           = l.port
    target_port    = l.target_port
    proxy_protocol = l.proxy_protocol
    certificate_ids = l.certificates == null ? l.certificate_ids : concat(
      [for c in l.certificates : var.certificates[c]], coalesce(l.certificate_ids, []),
    )
    redirect_to_https_port = l.redirect_to_https_port
    sticky_sessions        = l.sticky_sessions
  } }

  # Rules are keyed by name, so a plan shows a rule that moves (a new
  # priority, or order key) as that rule changing, not as every rule after
  # it changing. None is null: a load balancer without rules plans exactly as
  # before rules existed.
  rules = length(var.rules) == 0 ? null : { for r in var.rules : r.name => {
    listener_port     = r.listener_port
    listener_protocol = r.listener_protocol
    priority          = r.priority
    order_key         = r.order_key
    hostnames         = r.hostnames
    path_type         = r.path_type
    path              = r.path
    method            = r.method
    headers           = r.headers
    query_params      = r.query_params
    backends          = r.backends
    redirect          = r.redirect
    fixed_response    = r.fixed_response
    request_headers   = r.request_headers
    response_headers  = r.response_headers
    rewrite           = r.rewrite
    timeouts          = r.timeouts
    retry             = r.retry
    cors              = r.cors
    # The cloud's defaults (cookie example-session, no timeout, session
    # lifetime) where unset.
    session_persistence = r.session_persistence
  } }
}

resource "example_load_balancer" "this" {
  name                 = var.name
  region               = var.region
  type                 = var.type
  internal             = var.internal
  ip_family            = var.ip_family
  algorithm            = var.algorithm
  listeners            = local.listeners
  rules                = local.rules
  health_check         = var.health_check
  allowed_source_cidrs = var.allowed_source_cidrs
  targets              = var.targets
  target_pool_id       = var.target_pool_id
  tags                 = var.tags
  timeouts             = var.timeouts

  # Crash recovery: an apply killed after the cloud created the load
  # balancer but before state recorded it leaves the name taken, and every
  # later create gets a 409. The load balancer is adopted when its tags
  # contain all of var.tags with the same values (the controller's tags
  # include the cluster id and the Service UID); otherwise the apply fails.
  on_name_conflict = "adopt_if_tags_match"

  # The tags the controller sets to name the owner. An import (the
  # controller's adopt-id annotation) or an adoption of a load balancer
  # whose cluster id or Service UID tag has another value is refused: it
  # belongs to another cluster or Service.
  owner_tags = ["k8s.example.com/cluster-id", "k8s.example.com/service-uid"]
}
