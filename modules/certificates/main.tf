resource "example_certificate" "this" {
  for_each = var.certificates

  region                 = var.region
  certificate_pem        = each.value.certificate_pem
  private_key_wo         = var.private_keys[each.key]
  private_key_wo_version = each.value.private_key_version
  tags                   = var.tags

  # A rotation uploads the new certificate and moves the load balancers
  # to it before deleting the old one: the cloud refuses to delete a
  # certificate in use, and the listeners never go without one.
  lifecycle {
    create_before_destroy = true
  }
}
