data "example_certificates" "shop" {
  name = "shop"
}

# Certificates of that name expiring within 30 days of this plan.
output "expiring_soon" {
  value = [
    for c in data.example_certificates.shop.certificates : c.id
    if timecmp(c.not_after, timeadd(plantimestamp(), "720h")) < 0
  ]
}
