# terraform test, offline: the provider is mocked, so these runs check the
# module's own logic (rules keyed by name, pass-through, validation).

mock_provider "example" {}

variables {
  load_balancer_id = "lb-0123456789abcdef"
  name             = "route-0123456789abcdef"
  rules = [
    {
      name          = "shop-0"
      listener_port = 80
      order_key     = "0253000shop"
      hostnames     = ["shop.example.com"]
      backends      = [{ target_pool_id = "tp-0123456789abcdef", port = 0, weight = 1 }]
    },
    {
      name           = "shop-1"
      listener_port  = 80
      order_key      = "0253001shop"
      path_type      = "prefix"
      path           = "/old"
      fixed_response = { status_code = 410 }
    },
  ]
}

run "rules_by_name" {
  command = plan

  assert {
    condition = (
      example_load_balancer_rule_set.this.load_balancer_id == "lb-0123456789abcdef" &&
      example_load_balancer_rule_set.this.name == "route-0123456789abcdef" &&
      join(",", keys(example_load_balancer_rule_set.this.rules)) == "shop-0,shop-1"
    )
    error_message = "load_balancer_id and name pass through; the rules are keyed by name."
  }

  assert {
    condition = (
      example_load_balancer_rule_set.this.rules["shop-0"].order_key == "0253000shop" &&
      example_load_balancer_rule_set.this.rules["shop-1"].fixed_response.status_code == 410 &&
      example_load_balancer_rule_set.this.rules["shop-0"].backends[0].port == 0
    )
    error_message = "Each rule's attributes pass through, whichever it sets."
  }
}

run "empty" {
  command = plan

  variables {
    rules = []
  }

  assert {
    condition     = length(example_load_balancer_rule_set.this.rules) == 0
    error_message = "A set without rules routes nothing."
  }
}

run "numbered_rule" {
  command = plan

  variables {
    rules = [{ name = "a", listener_port = 80, priority = 1, backends = [] }]
  }

  expect_failures = [var.rules]
}

run "rules_named_alike" {
  command = plan

  variables {
    rules = [{ name = "a", listener_port = 80, order_key = "k" }, { name = "a", listener_port = 80, order_key = "l" }]
  }

  expect_failures = [var.rules]
}

run "not_a_load_balancer" {
  command = plan

  variables {
    load_balancer_id = "tp-0123"
  }

  expect_failures = [var.load_balancer_id]
}
