terraform {
  required_providers {
    example = {
      source  = "example.com/example/example"
      version = "= 0.1.0"
    }
  }
}

# endpoint and token usually come from EXAMPLE_ENDPOINT and EXAMPLE_TOKEN.
provider "example" {
  endpoint        = "http://127.0.0.1:8440"
  region          = "ex-west-1"
  request_timeout = "30s"
  max_retries     = 8
}
