package exampleapi

import (
	"fmt"
	"regexp"
	"slices"
	"strings"
)

// CORS makes a rule answer browsers' cross-origin requests (http and
// https listeners only): a preflight (OPTIONS with Origin and
// Access-Control-Request-Method) from an allowed origin is answered by
// the load balancer itself, 204 with the Access-Control-Allow-* headers,
// and never forwarded; any other request from an allowed origin is
// served as the rule says, its answer carrying
// Access-Control-Allow-Origin (and -Credentials, -Expose-Headers). A
// request from another origin gets none of them (a preflight: 204
// without them, which the browser refuses).
type CORS struct {
	// AllowOrigins are the origins allowed: "*" (any), an exact origin
	// (https://www.example.com, a port allowed), or one whose host begins
	// with "*." (https://*.example.com: one or more labels before it).
	AllowOrigins []string `json:"allow_origins"`
	// AllowMethods, AllowHeaders and ExposeHeaders are answered as given;
	// "*" alone stands for any (the preflight's own method or headers are
	// named beside it).
	AllowMethods  []string `json:"allow_methods,omitempty"`
	AllowHeaders  []string `json:"allow_headers,omitempty"`
	ExposeHeaders []string `json:"expose_headers,omitempty"`
	// AllowCredentials adds Access-Control-Allow-Credentials: true; the
	// origin is then always answered as the request's own, never "*".
	AllowCredentials bool `json:"allow_credentials,omitempty"`
	// MaxAgeSeconds is how long a browser may keep the preflight's
	// answer, 1 to MaxCORSMaxAgeSeconds; 0 is DefaultCORSMaxAgeSeconds.
	MaxAgeSeconds int `json:"max_age_seconds,omitempty"`
}

// Limits of a rule's CORS, as the cloud enforces them.
const (
	MaxCORSOrigins           = 64
	MaxCORSMethods           = 9
	MaxCORSHeaders           = 64
	MaxCORSMaxAgeSeconds     = 86400
	DefaultCORSMaxAgeSeconds = 5
)

// corsOriginRE is an origin: a scheme, "://", a host (a DNS name, maybe
// after "*."; or an IPv4 address) and an optional port.
var corsOriginRE = regexp.MustCompile(`^[a-z][a-z0-9+.-]*://(\*\.)?[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*(:[0-9]{1,5})?$`)

// checkCORS checks a rule's CORS: each list within its limits and of
// its kind, "*" alone where it is one.
func checkCORS(c CORS) error {
	if n := len(c.AllowOrigins); n == 0 || n > MaxCORSOrigins {
		return ruleError("cors.allow_origins", "has %d origins (1-%d)", n, MaxCORSOrigins)
	}
	for k, o := range c.AllowOrigins {
		if o != "*" && (len(o) > MaxHostnameLen+32 || !corsOriginRE.MatchString(o)) {
			return ruleError(fmt.Sprintf("cors.allow_origins[%d]", k), "%q is not an origin (a lower-case scheme://host[:port], the host maybe *.example.com; or *)", o)
		}
	}
	for _, l := range []struct {
		field string
		vals  []string
		max   int
		valid func(string) bool
		what  string
	}{
		{"cors.allow_methods", c.AllowMethods, MaxCORSMethods, func(m string) bool { return slices.Contains(RuleMethods, m) }, "an HTTP method (" + strings.Join(RuleMethods, ", ") + ")"},
		{"cors.allow_headers", c.AllowHeaders, MaxCORSHeaders, IsHeaderName, "a header name"},
		{"cors.expose_headers", c.ExposeHeaders, MaxCORSHeaders, IsHeaderName, "a header name"},
	} {
		if len(l.vals) > l.max {
			return ruleError(l.field, "has %d values (at most %d)", len(l.vals), l.max)
		}
		seen := map[string]int{}
		for k, v := range l.vals {
			f := fmt.Sprintf("%s[%d]", l.field, k)
			switch j, dup := seen[strings.ToLower(v)]; {
			case v == "*" && len(l.vals) > 1:
				return ruleError(f, `"*" stands for any, alone`)
			case v != "*" && !l.valid(v):
				return ruleError(f, "%q is not %s, nor *", v, l.what)
			case dup:
				return ruleError(f, "%q is also %s[%d]", v, l.field, j)
			}
			seen[strings.ToLower(v)] = k
		}
	}
	if c.MaxAgeSeconds < 0 || c.MaxAgeSeconds > MaxCORSMaxAgeSeconds {
		return ruleError("cors.max_age_seconds", "%d is out of range (accepted: 1-%d, or 0 for %d)", c.MaxAgeSeconds, MaxCORSMaxAgeSeconds, DefaultCORSMaxAgeSeconds)
	}
	return nil
}
