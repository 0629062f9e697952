terraform {
  # The floor every module keeps, so one Terraform runs every workspace.
  required_version = ">= 1.9.0"
  required_providers { example = { source = "example.com/example/example", version = ">= 0.1.0" } }
}
