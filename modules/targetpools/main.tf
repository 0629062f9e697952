# One pool per key: adding or removing a node selection plans only its
# pool, and a node joining or leaving updates each pool it belongs to in
# place (load balancers that reference a pool follow it without a change).
resource "example_target_pool" "this" {
  for_each = var.pools

  name    = "${var.name_prefix}${each.key}"
  region  = var.region
  targets = each.value.targets
  tags    = each.value.tags

  # What targets are: instance ids, or IP:port pairs (pods) a route of the
  # region reaches. Fixed at creation: a change replaces the pool.
  target_type = each.value.target_type

  # A node leaving keeps its open connections this long, with no new ones
  # (the cloud lists it as draining); null (0) removes it at once. A pool's
  # own delay (the longest its Services ask for) wins over the module's.
  deregistration_delay_seconds = coalesce(each.value.deregistration_delay_seconds, var.deregistration_delay_seconds) > 0 ? coalesce(each.value.deregistration_delay_seconds, var.deregistration_delay_seconds) : null

  # Crash recovery: an apply killed after the cloud created a pool but
  # before state recorded it leaves the name taken, and every later create
  # gets a 409. The pool is adopted when its tags contain all of the
  # configured tags with the same values; otherwise the apply fails.
  on_name_conflict = "adopt_if_tags_match"

  # The tag the controller sets to name the owning cluster: an import or an
  # adoption of a pool of another cluster is refused.
  owner_tags = ["k8s.example.com/cluster-id"]

  lifecycle {
    # The API refuses to delete a pool a load balancer still uses. Load
    # balancers of the same configuration are then moved to their new pool
    # before the old one is destroyed (Terraform destroys first otherwise).
    create_before_destroy = true
  }
}
