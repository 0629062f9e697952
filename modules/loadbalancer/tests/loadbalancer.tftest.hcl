# terraform test, offline: the provider is mocked, so these runs check the
# module's own logic (defaults, pass-through, outputs, validation).

mock_provider "example" {}

variables {
  name = "web"
  listeners = [
    { protocol = "tcp", port = 80, target_port = 30080 },
    { protocol = "udp", port = 53, target_port = 30053, proxy_protocol = false },
  ]
}

run "defaults" {
  command = plan

  assert {
    condition = (
      example_load_balancer.this.type == "lb-small" &&
      example_load_balancer.this.ip_family == "ipv4" &&
      example_load_balancer.this.algorithm == "round_robin" &&
      example_load_balancer.this.internal == false
    )
    error_message = "Defaults must match the API's."
  }

  assert {
    condition     = example_load_balancer.this.listeners[0].proxy_protocol == false
    error_message = "proxy_protocol must default to false."
  }

  assert {
    condition     = example_load_balancer.this.health_check == null && example_load_balancer.this.timeouts == null
    error_message = "No health check and provider timeouts unless given."
  }

  assert {
    condition     = example_load_balancer.this.on_name_conflict == "adopt_if_tags_match"
    error_message = "A load balancer left by an interrupted apply must be adopted when its tags match."
  }
}

run "health_check_defaults" {
  command = plan

  variables {
    health_check = { protocol = "http", port = 32000, path = "/healthz" }
  }

  assert {
    condition     = example_load_balancer.this.health_check.interval_seconds == 10 && example_load_balancer.this.health_check.timeout_seconds == 5
    error_message = "Health check timing must default to 10s/5s."
  }
}

run "outputs" {
  assert {
    condition     = output.id == example_load_balancer.this.id && output.status == example_load_balancer.this.status
    error_message = "Outputs must pass the resource's attributes through."
  }
}

run "no_listener" {
  command = plan

  variables {
    listeners = []
  }

  expect_failures = [var.listeners]
}
