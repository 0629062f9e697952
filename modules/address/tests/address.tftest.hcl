# terraform test, offline: the provider is mocked, so these runs check the
# module's own logic (pass-through, defaults, outputs, validation).

mock_provider "example" {}

variables {
  name             = "k8s-prod-web"
  load_balancer_id = "lb-0123456789abcdef"
  tags             = { "k8s.example.com/cluster-id" = "prod" }
}

run "address" {
  command = plan

  assert {
    condition = (
      example_address.this.name == "k8s-prod-web" &&
      example_address.this.load_balancer_id == "lb-0123456789abcdef" &&
      example_address.this.tags["k8s.example.com/cluster-id"] == "prod"
    )
    error_message = "name, load_balancer_id and tags must pass through."
  }

  assert {
    condition     = example_address.this.family == "ipv4"
    error_message = "family defaults to ipv4."
  }
}

run "detached" {
  command = plan

  variables {
    load_balancer_id = null
    family           = "ipv6"
    region           = "ex-east-1"
  }

  assert {
    condition = (
      example_address.this.load_balancer_id == null &&
      example_address.this.family == "ipv6" &&
      example_address.this.region == "ex-east-1"
    )
    error_message = "A null load_balancer_id detaches; family and region pass through."
  }
}

run "outputs" {
  assert {
    condition     = output.id == example_address.this.id && output.ip == example_address.this.ip
    error_message = "id and ip must be the address's."
  }
}

run "bad_family" {
  command = plan

  variables {
    family = "dualstack"
  }

  expect_failures = [var.family]
}

run "bad_load_balancer_id" {
  command = plan

  variables {
    load_balancer_id = "tp-0123456789abcdef"
  }

  expect_failures = [var.load_balancer_id]
}

run "bad_name" {
  command = plan

  variables {
    name = "-web"
  }

  expect_failures = [var.name]
}
