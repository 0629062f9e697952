package exampleapi_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/example/cloud-provider-example/exampleapi"
)

// A rule's CORS is checked by CheckRule: origins (any, exact, with a
// wildcard host), methods and header names, "*" alone, no value twice,
// the max age in range; each refusal names the field.
func TestCheckCORS(t *testing.T) {
	ok := exampleapi.Rule{Name: "r", ListenerPort: 80, Priority: 1, Backends: []exampleapi.RuleBackend{{TargetPoolID: "tp-1", Port: 30001, Weight: 1}},
		CORS: &exampleapi.CORS{AllowOrigins: []string{"https://www.foo.com", "https://*.bar.com", "http://localhost:8080"},
			AllowMethods: []string{"GET", "OPTIONS"}, AllowHeaders: []string{"x-header-1"}, ExposeHeaders: []string{"x-header-3"},
			AllowCredentials: true, MaxAgeSeconds: 3600}}
	if err := exampleapi.CheckRule(ok); err != nil {
		t.Fatalf("a valid CORS: %v", err)
	}
	for _, tc := range []struct {
		name, field, reason string
		edit                func(*exampleapi.CORS)
	}{
		{"no origin", "cors.allow_origins", "has 0 origins (1-64)", func(c *exampleapi.CORS) { c.AllowOrigins = nil }},
		{"origin without scheme", "cors.allow_origins[0]", `"www.foo.com" is not an origin`, func(c *exampleapi.CORS) { c.AllowOrigins = []string{"www.foo.com"} }},
		{"origin with a path", "cors.allow_origins[0]", `"https://a.example/x" is not an origin`, func(c *exampleapi.CORS) { c.AllowOrigins = []string{"https://a.example/x"} }},
		{"method", "cors.allow_methods[1]", `"FETCH" is not an HTTP method`, func(c *exampleapi.CORS) { c.AllowMethods = []string{"GET", "FETCH"} }},
		{"any method beside others", "cors.allow_methods[0]", `"*" stands for any, alone`, func(c *exampleapi.CORS) { c.AllowMethods = []string{"*", "GET"} }},
		{"header twice", "cors.allow_headers[1]", `"X-Header-1" is also cors.allow_headers[0]`, func(c *exampleapi.CORS) { c.AllowHeaders = []string{"x-header-1", "X-Header-1"} }},
		{"exposed header name", "cors.expose_headers[0]", `"a b" is not a header name`, func(c *exampleapi.CORS) { c.ExposeHeaders = []string{"a b"} }},
		{"max age", "cors.max_age_seconds", "86401 is out of range", func(c *exampleapi.CORS) { c.MaxAgeSeconds = 86401 }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r, c := ok, *ok.CORS
			tc.edit(&c)
			r.CORS = &c
			var re *exampleapi.RuleError
			if err := exampleapi.CheckRule(r); !errors.As(err, &re) || re.Field != tc.field || !strings.Contains(re.Reason, tc.reason) {
				t.Fatalf("got %v, want %s: ...%s", err, tc.field, tc.reason)
			}
		})
	}
}
