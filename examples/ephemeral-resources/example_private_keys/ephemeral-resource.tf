variable "certificate_pem" {
  description = "The certificate, then its intermediates (e.g. file(\"web.crt\"))."
  type        = string
}

# The provider reads EXAMPLE_PRIVATE_KEYS='{"web-tls":"-----BEGIN PRIVATE KEY-----\n..."}'
# from its environment, at plan and again at apply: the keys are in no
# file, saved plan or state.
ephemeral "example_private_keys" "tls" {
  names = ["web-tls"]
}

resource "example_certificate" "web" {
  certificate_pem        = var.certificate_pem
  private_key_wo         = ephemeral.example_private_keys.tls.keys["web-tls"]
  private_key_wo_version = 1

  lifecycle {
    create_before_destroy = true
  }
}
