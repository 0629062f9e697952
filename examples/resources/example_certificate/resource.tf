variable "certificate_pem" {
  description = "The certificate, then its intermediates (e.g. file(\"shop.crt\"))."
  type        = string
}

# Ephemeral (Terraform 1.10+): the key is in no plan file either, and it
# goes to a write-only argument, so it is in no state.
variable "private_key_pem" {
  type      = string
  sensitive = true
  ephemeral = true
}

resource "example_certificate" "shop" {
  certificate_pem = var.certificate_pem
  private_key_wo  = var.private_key_pem
  # Terraform cannot compare write-only values: bump this with every new
  # key (a renewal brings a new certificate_pem too).
  private_key_wo_version = 2
  tags                   = { service = "shop" }

  # Rotation: the new certificate is uploaded and the load balancers
  # moved to it (in place) before the old one is deleted; the cloud
  # refuses to delete a certificate in use.
  lifecycle {
    create_before_destroy = true
  }
}

data "example_instances" "workers" {
  tags = { role = "worker" }
}

resource "example_load_balancer" "shop" {
  name = "shop"
  listeners = {
    # Plain HTTP only redirects to the https listener.
    "http/80" = { protocol = "http", port = 80, target_port = 30080, redirect_to_https_port = 443 }
    # TLS ends at the load balancer; requests go to the targets in HTTP.
    "https/443" = {
      protocol        = "https"
      port            = 443
      target_port     = 30080
      certificate_ids = [example_certificate.shop.id]
      sticky_sessions = { cookie_name = "SHOP", ttl_seconds = 3600 }
    }
  }
  health_check = {
    protocol = "http"
    port     = 30080
    path     = "/healthz"
  }
  targets = data.example_instances.workers.ids
}

output "certificate_expires" {
  value = example_certificate.shop.not_after
}
