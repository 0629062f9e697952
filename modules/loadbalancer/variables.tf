variable "name" {
  description = "Name of the load balancer, unique per region. Changing it replaces the load balancer."
  type        = string
  nullable    = false

  validation {
    condition     = length(var.name) <= 253 && can(regex("^[A-Za-z0-9][A-Za-z0-9._-]*$", var.name))
    error_message = "The name must be 1-253 characters of letters, digits, '.', '_' and '-', starting with a letter or digit."
  }
}

variable "region" {
  description = "Region of the load balancer; null uses the provider's region. Changing it replaces the load balancer."
  type        = string
  default     = null
}

variable "type" {
  description = "Size of the load balancer: lb-small, lb-medium or lb-large. Can change in place."
  type        = string
  default     = "lb-small"
  nullable    = false

  validation {
    condition     = contains(["lb-small", "lb-medium", "lb-large"], var.type)
    error_message = "The type must be one of: lb-small, lb-medium, lb-large."
  }
}

variable "internal" {
  description = "Whether the load balancer gets an internal address (10.255.0.0/16) instead of a public one. Changing it replaces the load balancer."
  type        = bool
  default     = false
  nullable    = false
}

variable "ip_family" {
  description = "ipv4, or dualstack for an additional IPv6 address. Changing it replaces the load balancer."
  type        = string
  default     = "ipv4"
  nullable    = false

  validation {
    condition     = contains(["ipv4", "dualstack"], var.ip_family)
    error_message = "The ip_family must be one of: ipv4, dualstack."
  }
}

variable "algorithm" {
  description = "How connections are spread over the targets: round_robin, least_connections or source_ip."
  type        = string
  default     = "round_robin"
  nullable    = false

  validation {
    condition     = contains(["round_robin", "least_connections", "source_ip"], var.algorithm)
    error_message = "The algorithm must be one of: round_robin, least_connections, source_ip."
  }
}

variable "listeners" {
  description = "Ports the load balancer listens on (protocol tcp, udp, tls, http or https, port) and the port on the targets they forward to (target_port). At least one, at most 100 (the Example cloud's limit); ports are unique per protocol, and tcp, tls, http and https share the TCP ports. tls listeners pass TLS through (routed by SNI name with rules; the targets hold the certificates); https listeners end TLS with certificates (keys of var.certificates, e.g. certificates uploaded by the certificates module) and certificate_ids (ids of certificates already in the cloud): 1-25 together, the first the default; an http listener may redirect to an https port (redirect_to_https_port); http and https listeners may have cookie sticky_sessions. The last three are null when unset."
  type = list(object({
    protocol               = string
    port                   = number
    target_port            = number
    proxy_protocol         = optional(bool, false)
    certificates           = optional(list(string))
    certificate_ids        = optional(list(string))
    redirect_to_https_port = optional(number)
    sticky_sessions = optional(object({
      cookie_name = string
      ttl_seconds = number
    }))
  }))
  nullable = false

  validation {
    condition     = length(var.listeners) >= 1
    error_message = "At least one listener is required."
  }

  validation {
    condition     = length(var.listeners) <= 100
    error_message = "At most 100 listeners are allowed (the Example cloud's limit); got ${length(var.listeners)}."
  }

  validation {
    condition     = alltrue([for l in var.listeners : contains(["tcp", "udp", "http", "https", "tls"], l.protocol)])
    error_message = "Every listener protocol must be one of: tcp, udp, http, https, tls."
  }

  validation {
    condition = alltrue([for l in var.listeners : try(
      l.port == floor(l.port) && l.port >= 1 && l.port <= 65535 &&
      l.target_port == floor(l.target_port) && l.target_port >= 1 && l.target_port <= 65535,
    false)])
    error_message = "Every listener port and target_port must be a whole number in 1-65535."
  }

  # Grouping by key is linear in the number of listeners (distinct() on a
  # list is quadratic). A null protocol or port fails the rules above.
  validation {
    condition     = try(length({ for l in var.listeners : "${l.protocol}/${l.port}" => l... }) == length(var.listeners), true)
    error_message = "Listener ports must be unique per protocol; repeated: ${join(", ", [for k, ls in { for l in var.listeners : "${l.protocol}/${l.port}" => l... } : k if length(ls) > 1])}."
  }

  validation {
    condition     = try(alltrue([for p, ls in { for l in var.listeners : tostring(l.port) => l.protocol... if l.protocol != "udp" } : length(ls) == 1]), true)
    error_message = "tcp, tls, http and https listeners share the TCP ports; used twice: ${join(", ", [for p, ls in { for l in var.listeners : tostring(l.port) => "${l.protocol}/${l.port}"... if l.protocol != "udp" } : join(" and ", ls) if length(ls) > 1])}."
  }

  validation {
    condition = alltrue([for l in var.listeners : l.protocol == "https" ? try(
      length(concat(coalesce(l.certificates, []), coalesce(l.certificate_ids, []))) >= 1 &&
      length(concat(coalesce(l.certificates, []), coalesce(l.certificate_ids, []))) <= 25 &&
      length(distinct(coalesce(l.certificate_ids, []))) == length(coalesce(l.certificate_ids, [])) &&
      length(distinct(coalesce(l.certificates, []))) == length(coalesce(l.certificates, [])) &&
      alltrue([for c in coalesce(l.certificate_ids, []) : startswith(c, "cert-")]),
    false) : l.certificate_ids == null && l.certificates == null])
    error_message = "An https listener needs certificate_ids and certificates: 1-25 distinct certificate ids (cert-...) and keys of var.certificates together, the first the default; other protocols take none."
  }

  # Refers to var.certificates: Terraform 1.9.
  validation {
    condition     = alltrue([for l in var.listeners : alltrue([for c in coalesce(l.certificates, []) : contains(keys(var.certificates), c)])])
    error_message = "Every listener's certificates must be keys of var.certificates; unknown: ${join(", ", distinct(flatten([for l in var.listeners : [for c in coalesce(l.certificates, []) : c if !contains(keys(var.certificates), c)]])))}."
  }

  validation {
    condition = alltrue([for l in var.listeners : l.redirect_to_https_port == null ? true : (
      l.protocol == "http" && contains([for h in var.listeners : h.port if h.protocol == "https"], l.redirect_to_https_port)
    )])
    error_message = "redirect_to_https_port is only allowed on http listeners, and must be the port of an https listener of this load balancer."
  }

  validation {
    condition = alltrue([for l in var.listeners : l.sticky_sessions == null ? true : try(
      contains(["http", "https"], l.protocol) && l.redirect_to_https_port == null &&
      can(regex("^[!#$%&'*+\\-.^_`|~0-9A-Za-z]{1,64}$", l.sticky_sessions.cookie_name)) &&
      l.sticky_sessions.ttl_seconds == floor(l.sticky_sessions.ttl_seconds) &&
      l.sticky_sessions.ttl_seconds >= 1 && l.sticky_sessions.ttl_seconds <= 604800,
    false)])
    error_message = "sticky_sessions are only allowed on http and https listeners without redirect_to_https_port, with a cookie_name of 1-64 letters, digits and !#$%&'*+-.^_`|~ and a whole ttl_seconds in 1-604800."
  }
}

variable "certificates" {
  description = "Ids (cert-...) of certificates by key, for the listeners' certificates: typically the certificates module's ids output, so a rotation (a new id) updates the listeners in place."
  type        = map(string)
  default     = {}
  nullable    = false
}

variable "health_check" {
  description = "How the load balancer probes its targets; null for no health check. protocol is tcp, http or https; path (http and https only) starts with /; timeout_seconds must be less than interval_seconds."
  type = object({
    protocol            = optional(string, "tcp")
    port                = number
    path                = optional(string)
    interval_seconds    = optional(number, 10)
    timeout_seconds     = optional(number, 5)
    healthy_threshold   = optional(number, 3)
    unhealthy_threshold = optional(number, 3)
  })
  default = null

  validation {
    condition     = var.health_check == null ? true : contains(["tcp", "http", "https"], var.health_check.protocol)
    error_message = "The health_check protocol must be one of: tcp, http, https."
  }

  validation {
    condition     = var.health_check == null ? true : try(var.health_check.port == floor(var.health_check.port) && var.health_check.port >= 1 && var.health_check.port <= 65535, false)
    error_message = "The health_check port must be a whole number in 1-65535."
  }

  validation {
    condition = var.health_check == null ? true : (
      contains(["http", "https"], var.health_check.protocol)
      ? try(startswith(var.health_check.path, "/"), false)
      : var.health_check.path == null
    )
    error_message = "An http or https health_check needs a path starting with /; a tcp health_check takes no path."
  }

  validation {
    condition = var.health_check == null ? true : try(
      var.health_check.interval_seconds >= 1 && var.health_check.interval_seconds <= 300 &&
      var.health_check.timeout_seconds >= 1 && var.health_check.timeout_seconds <= 60 &&
      var.health_check.timeout_seconds < var.health_check.interval_seconds,
    false)
    error_message = "The health_check interval_seconds must be in 1-300 and timeout_seconds in 1-60, less than interval_seconds."
  }

  validation {
    condition = var.health_check == null ? true : try(
      var.health_check.healthy_threshold >= 1 && var.health_check.healthy_threshold <= 10 &&
      var.health_check.unhealthy_threshold >= 1 && var.health_check.unhealthy_threshold <= 10,
    false)
    error_message = "The health_check healthy_threshold and unhealthy_threshold must be in 1-10."
  }
}

variable "allowed_source_cidrs" {
  description = "Client CIDRs (IPv4 or IPv6, canonical form) allowed to connect, at most 1000; empty allows everyone."
  type        = set(string)
  default     = []
  nullable    = false

  validation {
    condition     = length(var.allowed_source_cidrs) <= 1000
    error_message = "At most 1000 allowed_source_cidrs entries are allowed (the Example cloud's limit); got ${length(var.allowed_source_cidrs)}."
  }

  validation {
    # cidrsubnet(c, 0, 0) is c without host bits: the API rejects those.
    condition     = alltrue([for c in var.allowed_source_cidrs : can(cidrhost(c, 0)) && try(cidrsubnet(c, 0, 0) == c, false)])
    error_message = "Every allowed_source_cidrs entry must be a CIDR in canonical form (no host bits), e.g. 203.0.113.0/24 or 2001:db8::/32."
  }
}

variable "targets" {
  description = "Instance ids (i-...) the load balancer forwards to, at most 5000. Leave empty with target_pool_id."
  type        = set(string)
  default     = []
  nullable    = false

  validation {
    condition     = length(var.targets) <= 5000
    error_message = "At most 5000 targets are allowed (the Example cloud's limit); got ${length(var.targets)}."
  }

  validation {
    condition     = alltrue([for t in var.targets : startswith(t, "i-")])
    error_message = "Every target must be an instance id (i-...)."
  }
}

variable "target_pool_id" {
  description = "Id (tp-...) of a target pool of the load balancer's region to forward to instead of targets (e.g. an id from the targetpools module). The load balancer follows the pool's targets without a change of its own. null (the default) forwards to targets. Changes in place."
  type        = string
  default     = null

  validation {
    condition     = var.target_pool_id == null ? true : startswith(var.target_pool_id, "tp-")
    error_message = "The target_pool_id must be a target pool id (tp-...)."
  }

  # Refers to targets: Terraform 1.9.
  validation {
    condition     = var.target_pool_id == null || length(var.targets) == 0
    error_message = "Set targets or target_pool_id, not both: with target_pool_id the load balancer forwards to the pool's targets, so targets must be empty (got ${length(var.targets)})."
  }
}

variable "rules" {
  description = "Routing rules of the listeners (what a Gateway's routes render to), each with a name unique among them (1-128 letters, digits and ._-/:@#*): a listener with rules serves each request or connection by the matching rule of lowest priority (404 when none matches; a tls connection is reset); one without rules forwards to the load balancer's targets. Each rule: listener_port (a listener of var.listeners, not an http one with redirect_to_https_port), listener_protocol (only for the udp listener of a port that also has a tcp, tls, http or https one: null routes the latter), priority (1-50000, unique per listener, so tcp/53 and udp/53 each have their own) or, on http and https listeners, an order_key instead (1-512 printable ASCII characters: keyed rules come after the numbered ones, ordered by key together with the load balancer's rule sets'; see the ruleset module), conditions (hostnames, path_type exact|prefix with path, method, headers as exact values, query_params as exact values of each name's first value, names case-sensitive) and an action: backends (target_pool_id, port on its targets or 0 for a pool of target type ip, weight 0-1000000, default 1, protocol http|h2c: how the load balancer speaks to the targets, null for http, i.e. HTTP/1.1; h2c is HTTP/2 without TLS by prior knowledge; tls (ca_bundle, PEM CA certificates only; server_name, the SNI name and, without subject_alt_names, the name the target's certificate must hold; subject_alt_names, DNS names or URIs it must hold one of): re-encrypt to the targets in HTTP/1.1 over TLS, verifying their certificate, 502 where it does not verify; not with h2c) with request_headers changes (set, add, remove) and a rewrite of the request (hostname; path, or path_prefix in place of what the rule's path prefix matched), or a redirect (scheme, hostname, port, path or path_prefix, status_code 301|302|303|307|308), or a fixed_response (status_code 200-299|400-599: the load balancer answers itself, e.g. 404 after a host's routes so its other requests do not fall through to a wildcard rule; no backends, redirect, request_headers or rewrite); response_headers (set, add, remove) change the headers of the rule's answer (the backend's response, the redirect or the fixed response); cors (allow_origins: *, an origin, or one with a *. host; allow_methods, allow_headers, expose_headers, each its values or * alone; allow_credentials; max_age_seconds 1-86400) answers browsers' preflights at the load balancer and marks the answers to allowed origins; session_persistence (type cookie|header, null for cookie; name, a token of at most 128 characters, null for example-session; absolute_timeout_seconds 1-2592000, null for none; lifetime session|permanent, cookie only, permanent needing the timeout as its Max-Age) keeps a client on the target of its first answer through a signed token. Rules of http and https listeners route HTTP requests (HTTPRoutes); those of tls listeners match only hostnames, against the SNI name (TLSRoutes); those of tcp and udp listeners have no conditions (TCPRoutes, UDPRoutes); tcp, udp and tls rules only forward (backends, without a protocol or tls: connections go as they come). At most 2000. Empty (the default): no rules."
  type = list(object({
    name              = string
    listener_port     = number
    listener_protocol = optional(string)
    priority          = optional(number)
    order_key         = optional(string)
    hostnames         = optional(list(string))
    path_type         = optional(string)
    path              = optional(string)
    method            = optional(string)
    headers           = optional(map(string))
    query_params      = optional(map(string))
    backends = optional(list(object({
      target_pool_id = string
      port           = number
      weight         = optional(number, 1)
      protocol       = optional(string)
      tls = optional(object({
        ca_bundle         = string
        server_name       = string
        subject_alt_names = optional(list(string))
      }))
    })))
    redirect = optional(object({
      scheme      = optional(string)
      hostname    = optional(string)
      port        = optional(number)
      path        = optional(string)
      path_prefix = optional(string)
      status_code = number
    }))
    fixed_response = optional(object({
      status_code = number
    }))
    request_headers = optional(object({
      set    = optional(map(string))
      add    = optional(map(string))
      remove = optional(list(string))
    }))
    response_headers = optional(object({
      set    = optional(map(string))
      add    = optional(map(string))
      remove = optional(list(string))
    }))
    rewrite = optional(object({
      hostname    = optional(string)
      path        = optional(string)
      path_prefix = optional(string)
    }))
    timeouts = optional(object({
      request_ms         = optional(number)
      backend_request_ms = optional(number)
    }))
    retry = optional(object({
      attempts     = number
      status_codes = optional(list(number))
      backoff_ms   = optional(number)
    }))
    cors = optional(object({
      allow_origins     = list(string)
      allow_methods     = optional(list(string))
      allow_headers     = optional(list(string))
      expose_headers    = optional(list(string))
      allow_credentials = optional(bool)
      max_age_seconds   = optional(number)
    }))
    session_persistence = optional(object({
      type                     = optional(string)
      name                     = optional(string)
      absolute_timeout_seconds = optional(number)
      lifetime                 = optional(string)
    }))
  }))
  default  = []
  nullable = false

  validation {
    condition     = length(var.rules) <= 2000
    error_message = "At most 2000 rules are allowed (the Example cloud's limit); got ${length(var.rules)}."
  }

  validation {
    condition = alltrue([for r in var.rules : try(r.order_key == null ? (
    r.priority == floor(r.priority) && r.priority >= 1 && r.priority <= 50000) : r.priority == null, false)])
    error_message = "Every rule has a priority, a whole number in 1-50000, or an order_key instead, not both."
  }

  # Keys as names are checked: one regex over them all.
  validation {
    condition = (can(regex("^(?:[!-~]{1,512}\n)*$", join("", [for r in var.rules : "${r.order_key}\n" if r.order_key != null]))) &&
    length(split("\n", join("", [for r in var.rules : "${r.order_key}\n" if r.order_key != null]))) == length([for r in var.rules : r if r.order_key != null]) + 1)
    error_message = "Every order_key must be 1-512 printable ASCII characters without spaces."
  }

  validation {
    condition = alltrue([for r in var.rules : r.order_key == null || (contains(["http", "https"], coalesce(r.listener_protocol, "http")) &&
    contains([for l in var.listeners : l.port if contains(["http", "https"], l.protocol)], r.listener_port))])
    error_message = "An order_key orders rules of http and https listeners only: number the others with a priority."
  }

  # One regex over every name, each ended by a newline (and as many
  # newlines as names, so none holds one): terraform compiles a regex at
  # each call, and a call per rule was a third of the module's checks at
  # 1,000 rules.
  validation {
    condition = (can(regex("^(?:[A-Za-z0-9._\\-/:@#*]{1,128}\n)*$", join("", [for r in var.rules : "${r.name}\n"]))) &&
    length(split("\n", join("", [for r in var.rules : "${r.name}\n"]))) == length(var.rules) + 1)
    error_message = "Every rule name must be 1-128 letters, digits and ._-/:@#*."
  }

  validation {
    condition     = try(length({ for r in var.rules : r.name => r... }) == length(var.rules), true)
    error_message = "Rule names must be unique; repeated: ${join(", ", [for k, rs in { for r in var.rules : r.name => r... } : k if length(rs) > 1])}."
  }

  # A rule's listener is "<protocol>/<port>": listener_protocol, else the
  # port's listener of the TCP ports, else its udp one (as the API). Refers
  # to listeners: Terraform 1.9.
  validation {
    condition     = try(length({ for r in var.rules : "${coalesce(r.listener_protocol, try([for l in var.listeners : l.protocol if l.port == r.listener_port && l.protocol != "udp"][0], "udp"))}/${r.listener_port} priority ${r.priority}" => r... if r.priority != null }) == length([for r in var.rules : r if r.priority != null]), true)
    error_message = "Rule priorities must be unique per listener; repeated: ${join(", ", [for k, rs in { for r in var.rules : "${coalesce(r.listener_protocol, try([for l in var.listeners : l.protocol if l.port == r.listener_port && l.protocol != "udp"][0], "udp"))}/${r.listener_port} priority ${r.priority}" => r... if r.priority != null } : k if length(rs) > 1])}."
  }

  validation {
    condition = alltrue([for r in var.rules : contains(
      [for l in var.listeners : "${l.protocol}/${l.port}" if l.redirect_to_https_port == null],
    "${coalesce(r.listener_protocol, try([for l in var.listeners : l.protocol if l.port == r.listener_port && l.protocol != "udp"][0], "udp"))}/${r.listener_port}")])
    error_message = "Every rule's listener_port (with its listener_protocol, when set) must name a listener of var.listeners, not an http one with redirect_to_https_port."
  }

  # tcp, udp and tls listeners see connections, not HTTP requests. (p is
  # the rule's listener protocol.)
  validation {
    condition = alltrue([for r in var.rules : alltrue([for p in [coalesce(r.listener_protocol, try(
      [for l in var.listeners : l.protocol if l.port == r.listener_port && l.protocol != "udp"][0], "udp"))] :
      contains(["http", "https"], p) || (
        r.path_type == null && r.path == null && r.method == null && length(coalesce(r.headers, {})) == 0 &&
        length(coalesce(r.query_params, {})) == 0 && r.redirect == null && r.fixed_response == null &&
        r.request_headers == null && r.response_headers == null && r.rewrite == null && r.timeouts == null && r.retry == null && r.cors == null &&
        r.session_persistence == null &&
        (p == "tls" || length(coalesce(r.hostnames, [])) == 0) &&
        alltrue([for b in coalesce(r.backends, []) : b.protocol == null && b.tls == null])
      )
    ])])
    error_message = "Rules of tcp, udp and tls listeners only forward (backends, without a protocol or tls: no redirect, fixed_response, request_headers, response_headers, rewrite, timeouts or retry) and take no path_type, path, method, headers, query_params, cors or session_persistence; tcp and udp rules take no hostnames either (a tls rule's hostnames match the SNI name)."
  }

  # Names are tokens, as header names (Gateway API's); compared as written.
  validation {
    condition = alltrue([for r in var.rules : length(coalesce(r.query_params, {})) <= 16 && alltrue([
      for k, v in coalesce(r.query_params, {}) : can(regex("^[!#$%&'*+.^_`|~0-9A-Za-z-]+$", k)) &&
      length(v) >= 1 && length(v) <= 1024 && !can(regex("[[:cntrl:]]", v))
    ])])
    error_message = "A rule's query_params take at most 16 parameters, each name letters, digits and !#$%&'*+-.^_`|~, each value 1-1024 characters without control characters."
  }

  validation {
    condition = alltrue([for r in var.rules : alltrue([for m in [r.request_headers, r.response_headers] : m == null ? true : (
      length(coalesce(m.set, {})) <= 16 && length(coalesce(m.add, {})) <= 16 && length(coalesce(m.remove, [])) <= 16
    )])])
    error_message = "A rule's request_headers and response_headers each set, add and remove at most 16 headers."
  }

  validation {
    condition = alltrue([for r in var.rules : r.path == null ? r.path_type == null : try(
      r.path_type == "regex" ? can(regexall(r.path, "")) : contains(["exact", "prefix"], r.path_type) && startswith(r.path, "/"),
    false)])
    error_message = "A rule's path needs a path_type (exact, prefix or regex) and must start with /, or be a regular expression of RE2's syntax for regex; a path_type needs a path."
  }

  validation {
    condition     = alltrue([for r in var.rules : r.method == null || contains(["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "CONNECT", "OPTIONS", "TRACE"], coalesce(r.method, "-"))])
    error_message = "A rule's method must be one of GET, HEAD, POST, PUT, PATCH, DELETE, CONNECT, OPTIONS, TRACE."
  }

  validation {
    condition = alltrue([for r in var.rules : r.redirect == null ? true : (
      length(coalesce(r.backends, [])) == 0 && contains([301, 302, 303, 307, 308], r.redirect.status_code)
    )])
    error_message = "A rule's redirect excludes backends, and its status_code must be 301, 302, 303, 307 or 308."
  }

  # The load balancer answers itself: nothing to forward, redirect,
  # rewrite or change the headers of. A 3xx is a redirect's.
  validation {
    condition = alltrue([for r in var.rules : r.fixed_response == null ? true : (
      length(coalesce(r.backends, [])) == 0 && r.redirect == null && r.request_headers == null && r.rewrite == null && try(
        r.fixed_response.status_code == floor(r.fixed_response.status_code) && (
          (r.fixed_response.status_code >= 200 && r.fixed_response.status_code <= 299) ||
          (r.fixed_response.status_code >= 400 && r.fixed_response.status_code <= 599)
      ), false)
    )])
    error_message = "A rule's fixed_response excludes backends, redirect, request_headers and rewrite, and its status_code must be a whole number in 200-299 or 400-599 (a 3xx is a redirect's)."
  }

  # A redirect or rewrite (m) puts a path, or a prefix in place of what
  # the rule's prefix matched, never both; they forward or redirect.
  validation {
    condition = alltrue([for r in var.rules : (r.rewrite == null || r.redirect == null) && alltrue([
      for m in [r.redirect, r.rewrite] : m == null ? true : (
        (m.path == null || m.path_prefix == null) && (m.path_prefix == null || r.path_type == "prefix") &&
        alltrue([for p in [m.path, m.path_prefix] : p == null ? true : startswith(p, "/")])
      )
    ])])
    error_message = "A rule's redirect and rewrite exclude each other; each takes a path or a path_prefix (not both), starting with /, and a path_prefix (which replaces what the rule's path prefix matched) needs the rule's path_type \"prefix\"."
  }

  validation {
    condition = alltrue(flatten([for r in var.rules : [for b in coalesce(r.backends, []) : try(
      startswith(b.target_pool_id, "tp-") && b.port == floor(b.port) && b.port >= 0 && b.port <= 65535 &&
      b.weight == floor(b.weight) && b.weight >= 0 && b.weight <= 1000000 && contains(["http", "h2c"], coalesce(b.protocol, "http")),
    false)]]))
    error_message = "Every rule backend needs a target_pool_id (tp-...), a whole port in 1-65535 (0 for a pool of target type ip, whose targets carry their ports), a whole weight in 0-1000000 and a protocol http, h2c or null (http)."
  }

  validation {
    condition = alltrue([for r in var.rules : r.cors == null || try(
      length(r.cors.allow_origins) >= 1 && length(r.cors.allow_origins) <= 64 &&
      coalesce(r.cors.max_age_seconds, 1) >= 1 && coalesce(r.cors.max_age_seconds, 1) <= 86400, # terraform evaluates both sides of ||
    false)])
    error_message = "A rule's cors needs 1-64 allow_origins and a max_age_seconds in 1-86400 or null."
  }

  # The cloud's check of a rule's session persistence (exampleapi). Nulls
  # are coalesced, not guarded: terraform evaluates both sides of ||.
  validation {
    condition = alltrue([for r in var.rules : r.session_persistence == null || try(
      contains(["cookie", "header"], coalesce(r.session_persistence.type, "cookie")) &&
      can(regex("^[!#$%&'*+.^_`|~0-9A-Za-z-]{1,128}$", coalesce(r.session_persistence.name, "example-session"))) &&
      coalesce(r.session_persistence.absolute_timeout_seconds, 1) >= 1 && coalesce(r.session_persistence.absolute_timeout_seconds, 1) <= 2592000 &&
      coalesce(r.session_persistence.absolute_timeout_seconds, 1) == floor(coalesce(r.session_persistence.absolute_timeout_seconds, 1)) &&
      contains(["session", "permanent"], coalesce(r.session_persistence.lifetime, "session")) &&
      (r.session_persistence.lifetime == null || coalesce(r.session_persistence.type, "cookie") == "cookie") &&
      (coalesce(r.session_persistence.lifetime, "session") != "permanent" || r.session_persistence.absolute_timeout_seconds != null) &&
      r.redirect == null && r.fixed_response == null,
    false)])
    error_message = "A rule's session_persistence (not with a redirect or fixed_response) takes a type cookie or header, a name of 1-128 letters, digits and !#$%&'*+-.^_`|~, an absolute_timeout_seconds in 1-2592000, and a lifetime session or permanent for a cookie only, permanent needing absolute_timeout_seconds."
  }

  # The shape of a backend's TLS; the provider checks the bundle's
  # certificates and the names as the cloud does.
  validation {
    condition = alltrue(flatten([for r in var.rules : [for b in coalesce(r.backends, []) : b.tls == null || try(
      coalesce(b.protocol, "http") == "http" && startswith(trimspace(b.tls.ca_bundle), "-----BEGIN CERTIFICATE-----") &&
      can(regex("^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$", b.tls.server_name)) &&
      length(coalesce(b.tls.subject_alt_names, [])) <= 16,
    false)]]))
    error_message = "A rule backend's tls needs a ca_bundle of PEM CERTIFICATE blocks, a server_name that is a lower-case DNS name without a wildcard and at most 16 subject_alt_names, and no protocol h2c (a backend over TLS is spoken to in HTTP/1.1)."
  }

  # Timeouts and retries bound and repeat what a rule forwards: not with
  # a redirect or a fixed_response. Terraform's || evaluates both sides,
  # so a comparison with a null is guarded by a condition.
  validation {
    condition = alltrue([for r in var.rules : r.timeouts == null ? true : r.redirect == null && r.fixed_response == null && alltrue([
      for ms in [r.timeouts.request_ms, r.timeouts.backend_request_ms] : ms == null ? true : try(ms == floor(ms) && ms >= 0 && ms <= 3600000, false)
      ]) && (r.timeouts.request_ms == null || r.timeouts.backend_request_ms == null ? true : try(
    r.timeouts.request_ms == 0 || r.timeouts.backend_request_ms <= r.timeouts.request_ms, false))])
    error_message = "A rule's timeouts (not with a redirect or fixed_response) take request_ms and backend_request_ms as whole milliseconds in 1-3600000 (0 or null: none), backend_request_ms at most request_ms."
  }

  validation {
    condition = alltrue([for r in var.rules : r.retry == null ? true : r.redirect == null && r.fixed_response == null && try(
      r.retry.attempts == floor(r.retry.attempts) && r.retry.attempts >= 1 && r.retry.attempts <= 10 &&
      (r.retry.backoff_ms == null ? true : r.retry.backoff_ms == floor(r.retry.backoff_ms) && r.retry.backoff_ms >= 0 && r.retry.backoff_ms <= 60000) &&
      length(distinct(coalesce(r.retry.status_codes, []))) == length(coalesce(r.retry.status_codes, [])) &&
    alltrue([for c in coalesce(r.retry.status_codes, []) : c == floor(c) && c >= 500 && c <= 599]), false)])
    error_message = "A rule's retry (not with a redirect or fixed_response) takes attempts in 1-10 (tries after the first), distinct status_codes in 500-599 and backoff_ms in 0-60000."
  }
}

variable "tags" {
  description = "Tags of the load balancer (at most 50; keys 1-128 characters without '=', values at most 256 characters)."
  type        = map(string)
  default     = {}
  nullable    = false

  validation {
    condition = length(var.tags) <= 50 && alltrue([
      for k, v in var.tags : length(k) >= 1 && length(k) <= 128 && !strcontains(k, "=") && length(v) <= 256
    ])
    error_message = "At most 50 tags; keys 1-128 characters without '=', values at most 256 characters."
  }
}

variable "timeouts" {
  description = "How long to wait for create (until active), update and delete, as durations such as \"15m\"; null uses the provider's defaults (10m, 10m, 5m)."
  type = object({
    create = optional(string)
    update = optional(string)
    delete = optional(string)
  })
  default = null
}
