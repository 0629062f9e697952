package exampleapi

import (
	"errors"
	"strings"
	"testing"
)

// CheckRule's refusals say where in the rule and why: what the simulator
// answers (behind the rule's index) and what a refused route's status
// says.
func TestCheckRule(t *testing.T) {
	ok := Rule{Name: "r", ListenerPort: 80, Priority: 1, Hostnames: []string{"a.example"}, PathType: PathPrefix, Path: "/",
		Headers: []HeaderMatch{{Name: "X-Env", Value: "prod"}}, Backends: []RuleBackend{{TargetPoolID: "tp-1", Port: 30001, Weight: 1}},
		// Names of query parameters are case sensitive: two of them.
		QueryParams: []QueryParamMatch{{Name: "animal", Value: "whale"}, {Name: "ANIMAL", Value: "Whale"}}}
	if err := CheckRule(ok); err != nil {
		t.Fatalf("a valid rule: %v", err)
	}
	patient := ok
	patient.Timeouts, patient.Retry = &Timeouts{RequestMS: 500, BackendRequestMS: 200}, &Retry{Attempts: 3, StatusCodes: []int{500, 503}, BackoffMS: 10}
	if err := CheckRule(patient); err != nil {
		t.Fatalf("valid timeouts and retry: %v", err)
	}
	rewritten := ok
	rewritten.Rewrite = &Rewrite{Hostname: "b.example", PathPrefix: "/"}
	if err := CheckRule(rewritten); err != nil {
		t.Fatalf("a valid rewrite: %v", err)
	}
	h2c := ok
	h2c.Backends = []RuleBackend{{TargetPoolID: "tp-1", Port: 30001, Weight: 1, Protocol: BackendH2C}, {TargetPoolID: "tp-1", Port: 30002, Protocol: BackendHTTP}}
	if err := CheckRule(h2c); err != nil {
		t.Fatalf("valid backend protocols: %v", err)
	}
	regex := ok
	regex.PathType, regex.Path = PathRegex, `/api/v[0-9]+/(users|orders)`
	if err := CheckRule(regex); err != nil {
		t.Fatalf("a valid regex path: %v", err)
	}
	for _, tc := range []struct {
		name, field, reason string
		edit                func(*Rule)
	}{
		{"regex path of another syntax", "path", `"/a/(?<=b)" is not a regular expression of RE2's syntax: error parsing regexp: invalid named capture: ` + "`(?<=b)`",
			func(r *Rule) { r.PathType, r.Path = PathRegex, "/a/(?<=b)" }},
		{"regex path escaping its anchors", "path", `"/a)|(.*" is not a regular expression of RE2's syntax: error parsing regexp: unexpected ): ` + "`/a)|(.*`",
			func(r *Rule) { r.PathType, r.Path = PathRegex, "/a)|(.*" }},
		{"regex path not printable", "path", `"/a\tb" must be printable ASCII`,
			func(r *Rule) { r.PathType, r.Path = PathRegex, "/a\tb" }},
		{"regex path empty", "path", `is required with path_type "regex"`,
			func(r *Rule) { r.PathType, r.Path = PathRegex, "" }},
		{"rewrite prefix of a regex path", "rewrite.path_prefix", `needs the rule's path_type "prefix": it replaces what the prefix matched`,
			func(r *Rule) { r.PathType, r.Path, r.Rewrite = PathRegex, "/a.*", &Rewrite{PathPrefix: "/b"} }},
		{"header value with a tab", "headers[0].value", "header X-Env: must be at most 4096 characters, without control characters",
			func(r *Rule) { r.Headers[0].Value = "a\tb" }},
		{"order key with a space", "order_key", `"a b" is not an order key (1-512 printable ASCII characters, no spaces)`,
			func(r *Rule) { r.OrderKey = "a b" }},
		{"order key too long", "order_key", `"` + strings.Repeat("k", MaxOrderKeyLen+1) + `" is not an order key (1-512 printable ASCII characters, no spaces)`,
			func(r *Rule) { r.OrderKey = strings.Repeat("k", MaxOrderKeyLen+1) }},
		{"order key not ASCII", "order_key", `"clé" is not an order key (1-512 printable ASCII characters, no spaces)`,
			func(r *Rule) { r.OrderKey = "clé" }},
		{"backend twice", "backends[1]", "tp-1 port 30001 is also backends[0]; give one backend the sum of the weights",
			func(r *Rule) { r.Backends = append(r.Backends, r.Backends[0]) }},
		{"backend protocol", "backends[0].protocol", `unknown backend protocol "h2" (accepted: http, h2c; empty is http)`,
			func(r *Rule) { r.Backends[0].Protocol = "h2" }},
		{"backend twice in two protocols", "backends[1]", "tp-1 port 30001 is also backends[0]; give one backend the sum of the weights",
			func(r *Rule) {
				r.Backends = append(r.Backends, RuleBackend{TargetPoolID: "tp-1", Port: 30001, Weight: 1, Protocol: BackendH2C})
			}},
		{"header change name", "request_headers.remove[0]", `"a b" is not a header name`,
			func(r *Rule) { r.RequestHeaders = &HeaderModifier{Remove: []string{"a b"}} }},
		{"response header change name", "response_headers.set[1].name", `header "x-a" is also response_headers.set[0] (names are case insensitive)`,
			func(r *Rule) {
				r.ResponseHeaders = &HeaderModifier{Set: []HeaderMatch{{Name: "X-A", Value: "1"}, {Name: "x-a", Value: "2"}}}
			}},
		{"query parameter twice", "query_params[1].name", `parameter "animal" is also query_params[0]`,
			func(r *Rule) {
				r.QueryParams = []QueryParamMatch{{Name: "animal", Value: "whale"}, {Name: "animal", Value: "dolphin"}}
			}},
		{"query parameter without a value", "query_params[0].value", "parameter animal: must be 1-1024 characters, without control characters",
			func(r *Rule) { r.QueryParams = []QueryParamMatch{{Name: "animal"}} }},
		{"query parameter name", "query_params[0].name", `"a b" is not a query parameter name (letters, digits and !#$%&'*+-.^_` + "`|~)",
			func(r *Rule) { r.QueryParams = []QueryParamMatch{{Name: "a b", Value: "x"}} }},
		{"too many query parameters", "query_params", "has 17 parameters (at most 16)",
			func(r *Rule) { r.QueryParams = make([]QueryParamMatch, MaxRuleQueryParams+1) }},
		{"redirect path and prefix", "redirect.path_prefix", "is exclusive with path: one replaces the whole path, the other what the rule's prefix matched",
			func(r *Rule) { r.Backends, r.Redirect = nil, &Redirect{StatusCode: 302, Path: "/a", PathPrefix: "/b"} }},
		{"redirect prefix without a prefix match", "redirect.path_prefix", `needs the rule's path_type "prefix": it replaces what the prefix matched`,
			func(r *Rule) {
				r.PathType, r.Backends, r.Redirect = PathExact, nil, &Redirect{StatusCode: 302, PathPrefix: "/b"}
			}},
		{"rewrite path", "rewrite.path", `"/a//b" is not a normalized path (no //, /./ or /../)`,
			func(r *Rule) { r.Rewrite = &Rewrite{Path: "/a//b"} }},
		{"rewrite host", "rewrite.hostname", `"*.a.example" is not a lower-case DNS name`,
			func(r *Rule) { r.Rewrite = &Rewrite{Hostname: "*.a.example"} }},
		{"rewrite and redirect", "rewrite", "is exclusive with redirect: a rule either redirects or forwards",
			func(r *Rule) {
				r.Backends, r.Redirect, r.Rewrite = nil, &Redirect{StatusCode: 302}, &Rewrite{Path: "/"}
			}},
		{"rewrite and fixed response", "fixed_response", "is exclusive with rewrite: a rule that answers the request itself forwards nothing to rewrite",
			func(r *Rule) {
				r.Backends, r.FixedResponse, r.Rewrite = nil, &FixedResponse{StatusCode: 404}, &Rewrite{Hostname: "b.example"}
			}},
		{"request timeout too long", "timeouts.request_ms", "3600001 ms is out of range (accepted: 1-3600000 ms, or 0 for none)",
			func(r *Rule) { r.Timeouts = &Timeouts{RequestMS: MaxTimeoutMS + 1} }},
		{"backend timeout past the request's", "timeouts.backend_request_ms",
			"600 is longer than request_ms (500): the request's timeout covers each of its tries",
			func(r *Rule) { r.Timeouts = &Timeouts{RequestMS: 500, BackendRequestMS: 600} }},
		{"timeouts of a redirect", "timeouts", "is exclusive with redirect: a rule that redirects forwards nothing to wait for",
			func(r *Rule) {
				r.Backends, r.Redirect, r.Timeouts = nil, &Redirect{StatusCode: 302}, &Timeouts{RequestMS: 1}
			}},
		{"retry of a fixed response", "retry",
			"is exclusive with fixed_response: a rule that answers the request itself forwards nothing to wait for",
			func(r *Rule) {
				r.Backends, r.FixedResponse, r.Retry = nil, &FixedResponse{StatusCode: 404}, &Retry{Attempts: 1}
			}},
		{"retry attempts", "retry.attempts", "11 is out of range (accepted: 1-10 tries after the first)",
			func(r *Rule) { r.Retry = &Retry{Attempts: 11} }},
		{"retry of a 4xx", "retry.status_codes[1]", "429 is not a status code to retry (accepted: 500-599, a server's errors)",
			func(r *Rule) { r.Retry = &Retry{Attempts: 2, StatusCodes: []int{503, 429}} }},
		{"retry code twice", "retry.status_codes[1]", "503 is also retry.status_codes[0]",
			func(r *Rule) { r.Retry = &Retry{Attempts: 2, StatusCodes: []int{503, 503}} }},
		{"retry backoff", "retry.backoff_ms", "60001 ms is out of range (accepted: 1-60000 ms, or 0 for none)",
			func(r *Rule) { r.Retry = &Retry{Attempts: 2, BackoffMS: 60001} }},
		{"redirect and backends", "redirect", "is exclusive with backends (1 given): a rule either redirects or forwards",
			func(r *Rule) { r.Redirect = &Redirect{StatusCode: 301} }},
	} {
		r := ok
		r.Headers, r.Backends = append([]HeaderMatch(nil), ok.Headers...), append([]RuleBackend(nil), ok.Backends...)
		r.QueryParams = append([]QueryParamMatch(nil), ok.QueryParams...)
		tc.edit(&r)
		var re *RuleError
		if err := CheckRule(r); !errors.As(err, &re) || re.Field != tc.field || re.Reason != tc.reason {
			t.Errorf("%s: %v, want %s: %s", tc.name, err, tc.field, tc.reason)
		}
	}
}
