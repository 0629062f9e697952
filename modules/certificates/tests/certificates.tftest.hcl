# terraform test, offline: the provider is mocked, so these runs check the
# module's own logic (keys, pass-through, outputs). The provider still
# checks certificates and keys: TestModuleTests writes real ones, made for
# the run, to terraform.tfvars (var.certificates and var.private_keys, keys
# web and api, api at private_key_version 3).

mock_provider "example" {
  mock_resource "example_certificate" {
    defaults = {
      id        = "cert-mock"
      not_after = "2030-01-01T00:00:00Z"
    }
  }
}

variables {
  tags = { "k8s.example.com/cluster-id" = "prod" }
}

run "one_certificate_per_key" {
  command = apply

  assert {
    condition = (
      join(",", keys(example_certificate.this)) == "api,web" &&
      example_certificate.this["api"].certificate_pem == var.certificates["api"].certificate_pem &&
      example_certificate.this["api"].private_key_wo_version == 3 &&
      example_certificate.this["web"].private_key_wo_version == 1 &&
      example_certificate.this["web"].tags["k8s.example.com/cluster-id"] == "prod" &&
      example_certificate.this["web"].on_duplicate == "adopt_if_tags_match"
    )
    error_message = "One certificate per key, with its PEM, version (default 1), the tags, and adoption of what an interrupted apply left."
  }

  assert {
    condition     = output.ids == { api = "cert-mock", web = "cert-mock" } && output.not_after["web"] == "2030-01-01T00:00:00Z"
    error_message = "ids and not_after must be keyed like var.certificates."
  }
}

run "a_key_missing" {
  command = plan

  variables {
    private_keys = {}
  }

  expect_failures = [var.private_keys]
}
