# EXAMPLE_PRIVATE_KEYS='{"web-tls":"-----BEGIN PRIVATE KEY-----\n..."}' in the
# environment of terraform plan and terraform apply.
ephemeral "example_private_keys" "tls" {
  names = ["web-tls"]
}

resource "example_certificate" "web" {
  certificate_pem        = file("web.crt")
  private_key_wo         = ephemeral.example_private_keys.tls.keys["web-tls"]
  private_key_wo_version = 1

  lifecycle {
    create_before_destroy = true
  }
}
