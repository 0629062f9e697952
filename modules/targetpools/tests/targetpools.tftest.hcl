# terraform test, offline: the provider is mocked, so these runs check the
# module's own logic (names, pass-through, outputs, validation).

mock_provider "example" {}

variables {
  name_prefix = "k8s-prod-"
  pools = {
    workers = {
      targets = ["i-1", "i-2"]
      tags    = { "k8s.example.com/cluster-id" = "prod" }
    }
    gpu = {
      targets = []
    }
  }
}

run "pools" {
  command = plan

  assert {
    condition = (
      example_target_pool.this["workers"].name == "k8s-prod-workers" &&
      example_target_pool.this["gpu"].name == "k8s-prod-gpu"
    )
    error_message = "A pool is named name_prefix + key."
  }

  assert {
    condition = (
      example_target_pool.this["workers"].targets == toset(["i-1", "i-2"]) &&
      length(example_target_pool.this["gpu"].targets) == 0 &&
      example_target_pool.this["workers"].tags["k8s.example.com/cluster-id"] == "prod" &&
      length(example_target_pool.this["gpu"].tags) == 0
    )
    error_message = "Targets and tags must pass through; tags default to {}."
  }

  assert {
    condition = (
      example_target_pool.this["workers"].on_name_conflict == "adopt_if_tags_match" &&
      example_target_pool.this["workers"].owner_tags == toset(["k8s.example.com/cluster-id"])
    )
    error_message = "A pool left by an interrupted apply must be adopted when its tags match, and only the cluster's."
  }
}

run "target_types" {
  command = plan

  variables {
    pools = {
      workers = { targets = ["i-1"] }
      pods = {
        target_type = "ip"
        targets     = ["10.244.1.10:8080", "[fd00:10:244:1::5]:65535"]
      }
    }
  }

  assert {
    condition = (
      example_target_pool.this["workers"].target_type == "instance" &&
      example_target_pool.this["pods"].target_type == "ip" &&
      example_target_pool.this["pods"].targets == toset(["10.244.1.10:8080", "[fd00:10:244:1::5]:65535"])
    )
    error_message = "target_type defaults to instance and passes through, with the IP:port targets of an ip pool."
  }
}

run "outputs" {
  assert {
    condition = (
      output.ids["workers"] == example_target_pool.this["workers"].id &&
      output.ids["gpu"] == example_target_pool.this["gpu"].id &&
      length(output.ids) == 2
    )
    error_message = "ids must map every key to its pool's id."
  }

  assert {
    condition     = output.targets["workers"] == tolist(["i-1", "i-2"]) && length(output.targets["gpu"]) == 0
    error_message = "targets must map every key to its pool's targets, sorted."
  }
}

run "no_pools" {
  command = plan

  variables {
    pools = {}
  }

  assert {
    condition     = length(example_target_pool.this) == 0 && length(output.ids) == 0
    error_message = "No pools, no resources."
  }
}

run "bad_prefix" {
  command = plan

  variables {
    name_prefix = "-k8s-"
  }

  expect_failures = [var.pools]
}

run "bad_key" {
  command = plan

  variables {
    pools = { "a b" = { targets = [] } }
  }

  expect_failures = [var.pools]
}

run "name_too_long" {
  command = plan

  variables {
    pools = { (join("", [for i in range(250) : "a"])) = { targets = [] } }
  }

  expect_failures = [var.pools]
}

run "too_many_targets" {
  command = plan

  variables {
    pools = { big = { targets = concat(["i-x"], flatten([for i in range(5) : [for j in range(1000) : "i-${i}-${j}"]])) } }
  }

  expect_failures = [var.pools]
}

run "most_targets" {
  command = plan

  variables {
    pools = { big = { targets = flatten([for i in range(5) : [for j in range(1000) : "i-${i}-${j}"]]) } }
  }

  assert {
    condition     = length(example_target_pool.this["big"].targets) == 5000
    error_message = "5000 targets are allowed."
  }
}

run "deregistration_delay" {
  command = plan

  variables {
    deregistration_delay_seconds = 30
  }

  assert {
    condition     = example_target_pool.this["workers"].deregistration_delay_seconds == 30
    error_message = "The delay passes to every pool."
  }
}

run "no_deregistration_delay" {
  command = plan

  assert {
    condition     = example_target_pool.this["workers"].deregistration_delay_seconds == null
    error_message = "Without a delay the attribute stays unset (0 in the cloud)."
  }
}

run "deregistration_delay_too_long" {
  command = plan

  variables {
    deregistration_delay_seconds = 3601
  }

  expect_failures = [var.deregistration_delay_seconds]
}

run "own_deregistration_delay" {
  command = plan

  variables {
    deregistration_delay_seconds = 30
    pools = {
      workers = { targets = ["i-1"], deregistration_delay_seconds = 120 }
      gpu     = { targets = [], deregistration_delay_seconds = null }
      batch   = { targets = [], deregistration_delay_seconds = 0 }
    }
  }

  assert {
    condition = (
      example_target_pool.this["workers"].deregistration_delay_seconds == 120 &&
      example_target_pool.this["gpu"].deregistration_delay_seconds == 30 &&
      example_target_pool.this["batch"].deregistration_delay_seconds == null
    )
    error_message = "A pool's own delay wins over the module's; null takes the module's; 0 removes at once."
  }
}

run "own_deregistration_delay_too_long" {
  command = plan

  variables {
    pools = {
      workers = { targets = [], deregistration_delay_seconds = 3601 }
    }
  }

  expect_failures = [var.pools]
}
