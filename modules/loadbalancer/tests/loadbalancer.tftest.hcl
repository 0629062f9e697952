# terraform test, offline: the provider is mocked, so these runs check the
# module's own logic (defaults, pass-through, outputs, validation).

mock_provider "example" {}

variables {
  name = "web"
  tags = { "k8s.example.com/cluster-id" = "prod", "k8s.example.com/service-uid" = "u-1" }
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
    condition     = example_load_balancer.this.listeners["tcp/80"].proxy_protocol == false
    error_message = "proxy_protocol must default to false."
  }

  assert {
    condition = (
      join(",", keys(example_load_balancer.this.listeners)) == "tcp/80,udp/53" &&
      example_load_balancer.this.listeners["udp/53"].target_port == 30053
    )
    error_message = "Listeners must be keyed by protocol/port."
  }

  assert {
    condition     = example_load_balancer.this.owner_tags == toset(["k8s.example.com/cluster-id", "k8s.example.com/service-uid"])
    error_message = "Imports and adoptions must prove ownership by the controller's cluster id and Service UID tags."
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

run "too_many_listeners" {
  command = plan

  variables {
    listeners = [for p in range(1, 102) : { protocol = "tcp", port = p, target_port = p }]
  }

  expect_failures = [var.listeners]
}

run "most_listeners" {
  command = plan

  variables {
    listeners = [for p in range(1, 101) : { protocol = "tcp", port = p, target_port = p }]
  }

  assert {
    condition     = length(example_load_balancer.this.listeners) == 100
    error_message = "100 listeners are allowed."
  }
}

run "target_pool" {
  command = plan

  variables {
    target_pool_id = "tp-1"
  }

  assert {
    condition     = example_load_balancer.this.target_pool_id == "tp-1" && length(example_load_balancer.this.targets) == 0
    error_message = "target_pool_id must pass through, with no targets."
  }
}

run "no_target_pool" {
  command = plan

  variables {
    targets = ["i-1"]
  }

  assert {
    condition     = example_load_balancer.this.target_pool_id == null && example_load_balancer.this.targets == toset(["i-1"])
    error_message = "Without target_pool_id the load balancer forwards to targets."
  }
}

run "target_pool_and_targets" {
  command = plan

  variables {
    targets        = ["i-1"]
    target_pool_id = "tp-1"
  }

  expect_failures = [var.target_pool_id]
}

run "https" {
  command = plan

  variables {
    listeners = [
      { protocol = "http", port = 80, target_port = 30080, redirect_to_https_port = 443 },
      { protocol = "https", port = 443, target_port = 30080, certificate_ids = ["cert-b", "cert-a"], sticky_sessions = { cookie_name = "EXLB", ttl_seconds = 60 } },
    ]
    health_check = { protocol = "https", port = 30080, path = "/healthz" }
  }

  assert {
    condition = (
      example_load_balancer.this.listeners["https/443"].certificate_ids == tolist(["cert-b", "cert-a"]) &&
      example_load_balancer.this.listeners["https/443"].sticky_sessions.ttl_seconds == 60 &&
      example_load_balancer.this.listeners["http/80"].redirect_to_https_port == 443 &&
      example_load_balancer.this.health_check.protocol == "https"
    )
    error_message = "https listeners, certificates (in order), redirects and sticky sessions must pass through."
  }
}

run "tcp_listener_has_no_http_attributes" {
  command = plan

  assert {
    condition = (
      example_load_balancer.this.listeners["tcp/80"].certificate_ids == null &&
      example_load_balancer.this.listeners["tcp/80"].redirect_to_https_port == null &&
      example_load_balancer.this.listeners["tcp/80"].sticky_sessions == null
    )
    error_message = "Unset http attributes must be null, so existing listeners render and plan as before."
  }
}

run "redirect_without_https" {
  command = plan

  variables {
    listeners = [{ protocol = "http", port = 80, target_port = 30080, redirect_to_https_port = 443 }]
  }

  expect_failures = [var.listeners]
}

run "certificates_by_key" {
  command = plan

  variables {
    listeners = [
      { protocol = "https", port = 443, target_port = 30443, certificates = ["web", "api"], certificate_ids = ["cert-x"] },
    ]
    certificates = { api = "cert-a", web = "cert-w" }
  }

  assert {
    condition     = example_load_balancer.this.listeners["https/443"].certificate_ids == tolist(["cert-w", "cert-a", "cert-x"])
    error_message = "certificates must resolve to ids in their order, ahead of certificate_ids."
  }
}

run "unknown_certificate_key" {
  command = plan

  variables {
    listeners    = [{ protocol = "https", port = 443, target_port = 30443, certificates = ["web", "nope"] }]
    certificates = { web = "cert-w" }
  }

  expect_failures = [var.listeners]
}

run "no_rules_is_null" {
  command = plan

  assert {
    condition     = example_load_balancer.this.rules == null
    error_message = "Without rules the provider's rules must be null, so a load balancer without rules plans as before rules existed."
  }
}

run "rules_by_name" {
  command = plan

  variables {
    listeners = [{ protocol = "http", port = 80, target_port = 30080 }]
    rules = [
      { name = "api", listener_port = 80, priority = 10, hostnames = ["a.example"], path_type = "prefix", path = "/api",
      backends = [{ target_pool_id = "tp-a", port = 30001 }] },
      { name = "moved", listener_port = 80, priority = 20, redirect = { scheme = "https", status_code = 301 } },
    ]
  }

  assert {
    condition = (
      join(",", keys(example_load_balancer.this.rules)) == "api,moved" &&
      example_load_balancer.this.rules["api"].priority == 10 &&
      example_load_balancer.this.rules["api"].backends[0].weight == 1 &&
      example_load_balancer.this.rules["moved"].redirect.status_code == 301 &&
      example_load_balancer.this.rules["moved"].backends == null
    )
    error_message = "Rules must be keyed by name, a backend's weight defaulting to 1, unset attributes null."
  }
}

# Ordered by key (ADR 28): keyed rules share no priority, and need none.
run "keyed_rules" {
  command = plan

  variables {
    listeners = [{ protocol = "http", port = 80, target_port = 30080 }]
    rules = [
      { name = "catch-all", listener_port = 80, order_key = "1999", fixed_response = { status_code = 404 } },
      { name = "fence", listener_port = 80, order_key = "0253", hostnames = ["a.example"], fixed_response = { status_code = 404 } },
      { name = "first", listener_port = 80, priority = 1, path_type = "exact", path = "/healthz", fixed_response = { status_code = 200 } },
      { name = "versions", listener_port = 80, order_key = "0999", path_type = "regex", path = "/v[0-9]+/.*", fixed_response = { status_code = 200 } },
    ]
  }

  assert {
    condition = (
      example_load_balancer.this.rules["versions"].path == "/v[0-9]+/.*" &&
      example_load_balancer.this.rules["catch-all"].order_key == "1999" &&
      example_load_balancer.this.rules["catch-all"].priority == null &&
      example_load_balancer.this.rules["first"].priority == 1 &&
      example_load_balancer.this.rules["first"].order_key == null
    )
    error_message = "A rule's order_key, or its priority, must pass through, the other null."
  }
}

run "priority_and_order_key" {
  command = plan

  variables {
    listeners = [{ protocol = "http", port = 80, target_port = 30080 }]
    rules     = [{ name = "a", listener_port = 80, priority = 1, order_key = "k" }]
  }

  expect_failures = [var.rules]
}

# RE2's syntax, checked as the cloud checks it: no lookbehind.
run "regex_path_of_another_syntax" {
  command = plan

  variables {
    listeners = [{ protocol = "http", port = 80, target_port = 30080 }]
    rules     = [{ name = "a", listener_port = 80, priority = 1, path_type = "regex", path = "/a/(?<=b)", fixed_response = { status_code = 200 } }]
  }

  expect_failures = [var.rules]
}

run "order_key_with_a_space" {
  command = plan

  variables {
    listeners = [{ protocol = "http", port = 80, target_port = 30080 }]
    rules     = [{ name = "a", listener_port = 80, order_key = "a b" }]
  }

  expect_failures = [var.rules]
}

run "order_key_on_tcp" {
  command = plan

  variables {
    listeners = [{ protocol = "tcp", port = 5432, target_port = 30432 }]
    rules     = [{ name = "a", listener_port = 5432, order_key = "k", backends = [{ target_pool_id = "tp-a", port = 30432 }] }]
  }

  expect_failures = [var.rules]
}

run "l4_rules" {
  command = plan

  variables {
    listeners = [
      { protocol = "tls", port = 443, target_port = 30443, proxy_protocol = true },
      { protocol = "tcp", port = 53, target_port = 30053 },
      { protocol = "udp", port = 53, target_port = 30053 },
    ]
    rules = [
      { name = "db", listener_port = 443, priority = 1, hostnames = ["db.example"], backends = [{ target_pool_id = "tp-a", port = 30443 }] },
      { name = "wild", listener_port = 443, priority = 2, hostnames = ["*.example"], backends = [{ target_pool_id = "tp-b", port = 30443 }] },
      { name = "dns-tcp", listener_port = 53, priority = 1, backends = [{ target_pool_id = "tp-a", port = 30053 }] },
      { name = "dns-udp", listener_port = 53, listener_protocol = "udp", priority = 1, backends = [{ target_pool_id = "tp-b", port = 30053 }] },
    ]
  }

  assert {
    condition = (
      example_load_balancer.this.listeners["tls/443"].proxy_protocol == true &&
      example_load_balancer.this.listeners["tls/443"].certificate_ids == null &&
      example_load_balancer.this.rules["wild"].hostnames == tolist(["*.example"]) &&
      example_load_balancer.this.rules["dns-udp"].listener_protocol == "udp" &&
      example_load_balancer.this.rules["dns-tcp"].listener_protocol == null &&
      example_load_balancer.this.rules["dns-tcp"].hostnames == null
    )
    error_message = "tls listeners and the rules of tls, tcp and udp listeners must pass through; tcp/53 and udp/53 may both have priority 1."
  }
}

run "priority_taken_on_a_listener" {
  command = plan

  variables {
    listeners = [{ protocol = "tcp", port = 53, target_port = 30053 }, { protocol = "udp", port = 53, target_port = 30053 }]
    rules = [
      { name = "a", listener_port = 53, priority = 1 },
      { name = "b", listener_port = 53, listener_protocol = "tcp", priority = 1 },
    ]
  }

  expect_failures = [var.rules]
}

run "rule_on_a_missing_udp_listener" {
  command = plan

  variables {
    rules = [{ name = "r", listener_port = 80, listener_protocol = "udp", priority = 1 }]
  }

  expect_failures = [var.rules]
}

run "hostnames_on_a_tcp_listener" {
  command = plan

  variables {
    rules = [{ name = "r", listener_port = 80, priority = 1, hostnames = ["a.example"] }]
  }

  expect_failures = [var.rules]
}

run "path_on_a_tls_listener" {
  command = plan

  variables {
    listeners = [{ protocol = "tls", port = 443, target_port = 30443 }]
    rules     = [{ name = "r", listener_port = 443, priority = 1, hostnames = ["a.example"], path_type = "prefix", path = "/" }]
  }

  expect_failures = [var.rules]
}

run "redirect_on_a_udp_listener" {
  command = plan

  variables {
    rules = [{ name = "r", listener_port = 53, priority = 1, redirect = { status_code = 301 } }]
  }

  expect_failures = [var.rules]
}

run "rule_on_a_redirecting_listener" {
  command = plan

  variables {
    listeners = [
      { protocol = "http", port = 80, target_port = 30080, redirect_to_https_port = 443 },
      { protocol = "https", port = 443, target_port = 30080, certificate_ids = ["cert-a"] },
    ]
    rules = [{ name = "r", listener_port = 80, priority = 1 }]
  }

  expect_failures = [var.rules]
}

run "fixed_response" {
  command = plan

  variables {
    listeners = [{ protocol = "http", port = 80, target_port = 30080 }]
    rules = [
      { name = "cart", listener_port = 80, priority = 10, hostnames = ["shop.example"], path_type = "prefix", path = "/cart",
      backends = [{ target_pool_id = "tp-a", port = 30001 }] },
      { name = "catch-all", listener_port = 80, priority = 20, hostnames = ["shop.example"], fixed_response = { status_code = 404 } },
      { name = "wildcard", listener_port = 80, priority = 30, hostnames = ["*.example"], backends = [{ target_pool_id = "tp-b", port = 30001 }] },
    ]
  }

  assert {
    condition = (
      example_load_balancer.this.rules["catch-all"].fixed_response.status_code == 404 &&
      example_load_balancer.this.rules["catch-all"].backends == null &&
      example_load_balancer.this.rules["catch-all"].redirect == null &&
      example_load_balancer.this.rules["cart"].fixed_response == null
    )
    error_message = "A rule's fixed_response must pass through, null where unset."
  }
}

run "fixed_response_on_a_tcp_listener" {
  command = plan

  variables {
    rules = [{ name = "r", listener_port = 80, priority = 1, fixed_response = { status_code = 404 } }]
  }

  expect_failures = [var.rules]
}

run "query_params_and_response_headers" {
  command = plan

  variables {
    listeners = [{ protocol = "http", port = 80, target_port = 30080 }]
    rules = [
      { name = "whale", listener_port = 80, priority = 10, query_params = { animal = "whale", ANIMAL = "Whale" },
      response_headers = { set = { "Cache-Control" = "no-store" }, remove = ["Server"] }, backends = [{ target_pool_id = "tp-a", port = 30001 }] },
      { name = "other", listener_port = 80, priority = 20, backends = [{ target_pool_id = "tp-b", port = 30001 }] },
    ]
  }

  assert {
    condition = (
      example_load_balancer.this.rules["whale"].query_params == tomap({ animal = "whale", ANIMAL = "Whale" }) &&
      example_load_balancer.this.rules["whale"].response_headers.set["Cache-Control"] == "no-store" &&
      example_load_balancer.this.rules["whale"].response_headers.remove == tolist(["Server"]) &&
      example_load_balancer.this.rules["whale"].response_headers.add == null &&
      example_load_balancer.this.rules["other"].query_params == null &&
      example_load_balancer.this.rules["other"].response_headers == null
    )
    error_message = "A rule's query_params (names case-sensitive) and response_headers must pass through, null where unset."
  }
}

run "query_params_on_a_tcp_listener" {
  command = plan

  variables {
    rules = [{ name = "r", listener_port = 80, priority = 1, query_params = { a = "1" } }]
  }

  expect_failures = [var.rules]
}

run "response_headers_on_a_tls_listener" {
  command = plan

  variables {
    listeners = [{ protocol = "tls", port = 443, target_port = 30443 }]
    rules     = [{ name = "r", listener_port = 443, priority = 1, response_headers = { set = { "X-A" = "1" } } }]
  }

  expect_failures = [var.rules]
}

run "rewrite_and_redirect_path" {
  command = plan

  variables {
    listeners = [{ protocol = "http", port = 80, target_port = 30080 }]
    rules = [
      { name = "v1", listener_port = 80, priority = 10, path_type = "prefix", path = "/v1",
      rewrite = { hostname = "api.internal", path_prefix = "/v2" }, backends = [{ target_pool_id = "tp-a", port = 30001 }] },
      { name = "moved", listener_port = 80, priority = 20, path_type = "prefix", path = "/old",
      redirect = { path_prefix = "/new", status_code = 302 } },
    ]
  }

  assert {
    condition = (
      example_load_balancer.this.rules["v1"].rewrite.hostname == "api.internal" &&
      example_load_balancer.this.rules["v1"].rewrite.path_prefix == "/v2" &&
      example_load_balancer.this.rules["v1"].rewrite.path == null &&
      example_load_balancer.this.rules["moved"].redirect.path_prefix == "/new" &&
      example_load_balancer.this.rules["moved"].redirect.path == null &&
      example_load_balancer.this.rules["moved"].rewrite == null
    )
    error_message = "A rule's rewrite and a redirect's path and path_prefix must pass through, null where unset."
  }
}

run "rewrite_on_a_tcp_listener" {
  command = plan

  variables {
    rules = [{ name = "r", listener_port = 80, priority = 1, rewrite = { hostname = "a.example" } }]
  }

  expect_failures = [var.rules]
}

run "backend_protocol" {
  command = plan

  variables {
    listeners = [{ protocol = "http", port = 80, target_port = 30080 }]
    rules = [
      { name = "grpc", listener_port = 80, priority = 10, backends = [
        { target_pool_id = "tp-a", port = 30001, protocol = "h2c" }, { target_pool_id = "tp-b", port = 30001 },
      ] },
    ]
  }

  assert {
    condition = (
      example_load_balancer.this.rules["grpc"].backends[0].protocol == "h2c" &&
      example_load_balancer.this.rules["grpc"].backends[1].protocol == null
    )
    error_message = "A backend's protocol must pass through, null where unset."
  }
}

run "backend_protocol_on_a_tcp_listener" {
  command = plan

  variables {
    rules = [{ name = "r", listener_port = 80, priority = 1, backends = [{ target_pool_id = "tp-a", port = 30001, protocol = "h2c" }] }]
  }

  expect_failures = [var.rules]
}

run "timeouts_and_retry" {
  command = plan

  variables {
    listeners = [{ protocol = "http", port = 80, target_port = 30080 }]
    rules = [
      { name     = "slow", listener_port = 80, priority = 10, backends = [{ target_pool_id = "tp-a", port = 30001 }],
        timeouts = { request_ms = 500, backend_request_ms = 200 },
      retry = { attempts = 3, status_codes = [500, 503] } },
      { name = "plain", listener_port = 80, priority = 20, backends = [{ target_pool_id = "tp-a", port = 30001 }] },
    ]
  }

  assert {
    condition = (
      example_load_balancer.this.rules["slow"].timeouts.request_ms == 500 &&
      example_load_balancer.this.rules["slow"].timeouts.backend_request_ms == 200 &&
      example_load_balancer.this.rules["slow"].retry.attempts == 3 &&
      example_load_balancer.this.rules["slow"].retry.status_codes[1] == 503 &&
      example_load_balancer.this.rules["slow"].retry.backoff_ms == null &&
      example_load_balancer.this.rules["plain"].timeouts == null && example_load_balancer.this.rules["plain"].retry == null
    )
    error_message = "A rule's timeouts and retry must pass through, null where unset."
  }
}

run "backend_timeout_past_the_request_timeout" {
  command = plan

  variables {
    listeners = [{ protocol = "http", port = 80, target_port = 30080 }]
    rules = [{ name = "r", listener_port = 80, priority = 1, backends = [{ target_pool_id = "tp-a", port = 30001 }],
    timeouts = { request_ms = 500, backend_request_ms = 600 } }]
  }

  expect_failures = [var.rules]
}

run "retry_of_a_4xx" {
  command = plan

  variables {
    listeners = [{ protocol = "http", port = 80, target_port = 30080 }]
    rules = [{ name = "r", listener_port = 80, priority = 1, backends = [{ target_pool_id = "tp-a", port = 30001 }],
    retry = { attempts = 2, status_codes = [429] } }]
  }

  expect_failures = [var.rules]
}

run "timeouts_on_a_tcp_listener" {
  command = plan

  variables {
    rules = [{ name = "r", listener_port = 80, priority = 1, backends = [{ target_pool_id = "tp-a", port = 30001 }],
    timeouts = { request_ms = 500 } }]
  }

  expect_failures = [var.rules]
}

run "backend_tls" {
  command = plan

  variables {
    listeners = [{ protocol = "http", port = 80, target_port = 30080 }]
    rules = [
      { name = "secure", listener_port = 80, priority = 10, backends = [
        { target_pool_id = "tp-a", port = 30443, tls = {
          ca_bundle = <<-PEM
            -----BEGIN CERTIFICATE-----
            MIIBiTCCAS+gAwIBAgIUeIOmSW9UrW7TECGVciiyV6q6iVkwCgYIKoZIzj0EAwIw
            GTEXMBUGA1UEAwwObW9kdWxlIHRlc3QgQ0EwIBcNMjYxMjAzMTkwNjQzWhgPMjEy
            NjExMDkxOTA2NDNaMBkxFzAVBgNVBAMMDm1vZHVsZSB0ZXN0IENBMFkwEwYHKoZI
            zj0CAQYIKoZIzj0DAQcDQgAEk6kgqr8XmoN65qnc51pSf+qaQaINUrPWYlntQ+6K
            bhXGhMZjFgyZRNtVC79YpqXnbXJCgkPDb8poo/QizcqFoaNTMFEwHQYDVR0OBBYE
            FHQBCvaacTVtXQPBIdiTB2ifVnz7MB8GA1UdIwQYMBaAFHQBCvaacTVtXQPBIdiT
            B2ifVnz7MA8GA1UdEwEB/wQFMAMBAf8wCgYIKoZIzj0EAwIDSAAwRQIhAOAPYJgc
            q/V8QPDAAxwoFSbykqN3EnkojpayjMvtteU1AiAUKGecKrkRoRSHVxF2NdSJ3BR4
            33/q2HLHHe9rm1k17Q==
            -----END CERTIFICATE-----
          PEM
        server_name = "abc.example.com", subject_alt_names = ["spiffe://abc.example.com/test-identity"] } },
        { target_pool_id = "tp-b", port = 30001 },
      ] },
    ]
  }

  assert {
    condition = (
      example_load_balancer.this.rules["secure"].backends[0].tls.server_name == "abc.example.com" &&
      startswith(example_load_balancer.this.rules["secure"].backends[0].tls.ca_bundle, "-----BEGIN CERTIFICATE-----") &&
      example_load_balancer.this.rules["secure"].backends[0].tls.subject_alt_names[0] == "spiffe://abc.example.com/test-identity" &&
      example_load_balancer.this.rules["secure"].backends[1].tls == null
    )
    error_message = "A backend's tls must pass through, null where unset."
  }
}

run "backend_tls_on_a_tcp_listener" {
  command = plan

  variables {
    rules = [{ name = "r", listener_port = 80, priority = 1, backends = [{ target_pool_id = "tp-a", port = 30001,
    tls = { ca_bundle = "-----BEGIN CERTIFICATE-----", server_name = "a.example" } }] }]
  }

  expect_failures = [var.rules]
}

run "cors" {
  command = plan

  variables {
    listeners = [{ protocol = "http", port = 80, target_port = 30080 }]
    rules = [{ name = "api", listener_port = 80, priority = 1, backends = [{ target_pool_id = "tp-a", port = 30001 }],
      cors = { allow_origins = ["https://www.foo.com", "https://*.bar.com"], allow_methods = ["GET", "OPTIONS"],
      expose_headers = ["X-Request-Id"], allow_credentials = true, max_age_seconds = 3600 } },
      # No max_age_seconds: the cloud's default.
    { name = "any", listener_port = 80, priority = 2, backends = [{ target_pool_id = "tp-a", port = 30001 }], cors = { allow_origins = ["*"] } }]
  }

  assert {
    condition = (
      example_load_balancer.this.rules["any"].cors.allow_origins[0] == "*" &&
      example_load_balancer.this.rules["api"].cors.allow_origins[1] == "https://*.bar.com" &&
      example_load_balancer.this.rules["api"].cors.allow_credentials == true &&
      example_load_balancer.this.rules["api"].cors.max_age_seconds == 3600 &&
      example_load_balancer.this.rules["api"].cors.allow_headers == null
    )
    error_message = "A rule's cors must pass through, null where unset."
  }
}

run "cors_on_a_tcp_listener" {
  command = plan

  variables {
    rules = [{ name = "r", listener_port = 80, priority = 1, backends = [{ target_pool_id = "tp-a", port = 30001 }],
    cors = { allow_origins = ["*"] } }]
  }

  expect_failures = [var.rules]
}

run "session_persistence" {
  command = plan

  variables {
    listeners = [{ protocol = "http", port = 80, target_port = 30080 }]
    rules = [{ name = "cart", listener_port = 80, priority = 1, backends = [{ target_pool_id = "tp-a", port = 30001 }],
    session_persistence = { name = "cart-session", absolute_timeout_seconds = 3600, lifetime = "permanent" } }]
  }

  assert {
    condition = (
      example_load_balancer.this.rules["cart"].session_persistence.name == "cart-session" &&
      example_load_balancer.this.rules["cart"].session_persistence.absolute_timeout_seconds == 3600 &&
      example_load_balancer.this.rules["cart"].session_persistence.lifetime == "permanent" &&
      example_load_balancer.this.rules["cart"].session_persistence.type == null
    )
    error_message = "A rule's session_persistence must pass through, null where unset."
  }
}

run "session_persistence_defaults" {
  command = plan

  variables {
    listeners = [{ protocol = "http", port = 80, target_port = 30080 }]
    rules = [{ name = "cart", listener_port = 80, priority = 1, backends = [{ target_pool_id = "tp-a", port = 30001 }],
    session_persistence = {} }]
  }

  assert {
    condition     = example_load_balancer.this.rules["cart"].session_persistence.name == null
    error_message = "A rule's session_persistence of the cloud's defaults must pass as nulls."
  }
}

run "session_persistence_header_with_a_lifetime" {
  command = plan

  variables {
    listeners = [{ protocol = "http", port = 80, target_port = 30080 }]
    rules = [{ name = "r", listener_port = 80, priority = 1, backends = [{ target_pool_id = "tp-a", port = 30001 }],
    session_persistence = { type = "header", name = "X-Session", lifetime = "session" } }]
  }

  expect_failures = [var.rules]
}

run "session_persistence_on_a_tcp_listener" {
  command = plan

  variables {
    rules = [{ name = "r", listener_port = 80, priority = 1, backends = [{ target_pool_id = "tp-a", port = 30001 }],
    session_persistence = {} }]
  }

  expect_failures = [var.rules]
}
