resource "example_certificate" "this" {
  for_each = var.certificates

  region                 = var.region
  certificate_pem        = each.value.certificate_pem
  private_key_wo         = var.private_keys[each.key]
  private_key_wo_version = each.value.private_key_version
  tags                   = var.tags

  # Crash recovery: a certificate an apply uploaded and could not record
  # (killed, or its backend down) is taken over by the next apply when its
  # text and tags (the controller's include the cluster id and Service UID)
  # are this one's and no load balancer uses it, instead of leaving a copy
  # of the private key behind. private_key_version only changes with a
  # new certificate_pem here, as the provider's docs ask.
  on_duplicate = "adopt_if_tags_match"

  # The other half: one uploaded by an apply that could not record it,
  # after which the TLS Secret changed (so no create matches it any
  # more), is deleted by the next create. var.tags name one owner.
  delete_leftovers = true

  # A rotation uploads the new certificate and moves the load balancers
  # to it before deleting the old one: the cloud refuses to delete a
  # certificate in use, and the listeners never go without one.
  lifecycle {
    create_before_destroy = true
  }
}
