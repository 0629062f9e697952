data "example_instances" "workers" {
  tags = { role = "worker" }
}

resource "example_load_balancer" "web" {
  name      = "web"
  type      = "lb-medium"
  algorithm = "least_connections"

  # Keyed "<protocol>/<port>": a changed port plans as one listener
  # removed and one added, the others unchanged.
  listeners = {
    "tcp/80"  = { protocol = "tcp", port = 80, target_port = 30080 }
    "tcp/443" = { protocol = "tcp", port = 443, target_port = 30443, proxy_protocol = true }
  }

  health_check = {
    protocol = "http"
    port     = 30080
    path     = "/healthz"
  }

  allowed_source_cidrs = ["192.0.2.0/24", "2001:db8::/32"]
  targets              = data.example_instances.workers.ids
  tags                 = { service = "default/web", cluster = "prod" }

  # An import (or adoption) of a load balancer whose service or cluster
  # tag names another owner is refused.
  owner_tags = ["cluster", "service"]

  timeouts = {
    create = "15m"
  }
}

output "web_address" {
  value = example_load_balancer.web.ipv4
}

# L7 rules on an http listener (what a Gateway's HTTPRoutes render to):
# the lowest priority whose conditions hold serves a request, keyed by
# name so a rule that moves plans as its priority changing.
resource "example_target_pool" "workers" {
  name    = "workers"
  targets = data.example_instances.workers.ids
}

resource "example_load_balancer" "gateway" {
  name           = "gateway"
  listeners      = { "http/80" = { protocol = "http", port = 80, target_port = 30080 } }
  target_pool_id = example_target_pool.workers.id

  rules = {
    # /api?version=2 goes to the canary, whose answers are not cached.
    "api-v2" = {
      listener_port    = 80, priority = 5, hostnames = ["a.example"], path_type = "prefix", path = "/api"
      query_params     = { version = "2" }
      backends         = [{ target_pool_id = example_target_pool.workers.id, port = 30005 }]
      response_headers = { set = { "Cache-Control" = "no-store" } }
    }
    # The API's servers speak HTTP/2 without TLS (h2c): each request goes
    # to them in it, whatever the client spoke.
    "api" = {
      listener_port = 80, priority = 10, hostnames = ["a.example"], path_type = "prefix", path = "/api"
      backends      = [{ target_pool_id = example_target_pool.workers.id, port = 30001, protocol = "h2c" }]
    }
    # 504 past 10 s (each try past 2.5 s); a 502 or 503 is tried twice
    # more, 100 ms apart.
    "web" = {
      listener_port = 80, priority = 20, hostnames = ["a.example"], path_type = "prefix", path = "/web"
      backends = [
        { target_pool_id = example_target_pool.workers.id, port = 30002, weight = 80 },
        { target_pool_id = example_target_pool.workers.id, port = 30003, weight = 20 },
      ]
      timeouts = { request_ms = 10000, backend_request_ms = 2500 }
      retry    = { attempts = 2, status_codes = [502, 503], backoff_ms = 100 }
    }
    "moved" = {
      listener_port = 80, priority = 30, hostnames = ["old.example"]
      redirect      = { scheme = "https", hostname = "new.example", status_code = 301 }
    }
    # The load balancer answers a.example's other requests itself, so
    # they do not fall through to the wildcard rule after it.
    "a-not-found" = {
      listener_port  = 80, priority = 40, hostnames = ["a.example"]
      fixed_response = { status_code = 404 }
    }
    "wildcard" = {
      listener_port = 80, priority = 50, hostnames = ["*.example"]
      backends      = [{ target_pool_id = example_target_pool.workers.id, port = 30004 }]
    }
  }
}

# TLS passthrough (what a Gateway's TLSRoutes render to): the load
# balancer reads the SNI name and forwards the connection unchanged, so
# the targets hold the certificates. tcp/53 and udp/53 share a port
# number: listener_protocol names the udp listener's rule.
resource "example_load_balancer" "passthrough" {
  name = "passthrough"
  listeners = {
    "tls/443" = { protocol = "tls", port = 443, target_port = 30443 }
    "tcp/53"  = { protocol = "tcp", port = 53, target_port = 30053 }
    "udp/53"  = { protocol = "udp", port = 53, target_port = 30053 }
  }
  target_pool_id = example_target_pool.workers.id

  rules = {
    "db" = {
      listener_port = 443, priority = 1, hostnames = ["db.example"]
      backends      = [{ target_pool_id = example_target_pool.workers.id, port = 30443 }]
    }
    "dns-tcp" = {
      listener_port = 53, priority = 1
      backends      = [{ target_pool_id = example_target_pool.workers.id, port = 30053 }]
    }
    "dns-udp" = {
      listener_port = 53, listener_protocol = "udp", priority = 1
      backends      = [{ target_pool_id = example_target_pool.workers.id, port = 30054 }]
    }
  }
}
