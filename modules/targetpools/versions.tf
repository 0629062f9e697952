terraform {
  # 1.9: validation conditions may refer to other variables (pools refers
  # to name_prefix); every module keeps the same floor so one Terraform runs
  # every workspace.
  required_version = ">= 1.9.0"
  required_providers { example = { source = "example.com/example/example", version = ">= 0.1.0" } }
}
