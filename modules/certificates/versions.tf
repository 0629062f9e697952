terraform {
  # 1.11: private_key_wo is a write-only argument, and private_keys an
  # ephemeral variable (1.10); OpenTofu 1.10 has neither.
  required_version = ">= 1.11.0"
  required_providers { example = { source = "example.com/example/example", version = ">= 0.1.0" } }
}
