package exampleapi

import (
	"errors"
	"testing"
)

// CheckRule's refusals say where in the rule and why: what the simulator
// answers (behind the rule's index) and what a refused route's status
// says.
func TestCheckRule(t *testing.T) {
	ok := Rule{Name: "r", ListenerPort: 80, Priority: 1, Hostnames: []string{"a.example"}, PathType: PathPrefix, Path: "/",
		Headers: []HeaderMatch{{Name: "X-Env", Value: "prod"}}, Backends: []RuleBackend{{TargetPoolID: "tp-1", Port: 30001, Weight: 1}}}
	if err := CheckRule(ok); err != nil {
		t.Fatalf("a valid rule: %v", err)
	}
	for _, tc := range []struct {
		name, field, reason string
		edit                func(*Rule)
	}{
		{"header value with a tab", "headers[0].value", "header X-Env: must be at most 4096 characters, without control characters",
			func(r *Rule) { r.Headers[0].Value = "a\tb" }},
		{"backend twice", "backends[1]", "tp-1 port 30001 is also backends[0]; give one backend the sum of the weights",
			func(r *Rule) { r.Backends = append(r.Backends, r.Backends[0]) }},
		{"header change name", "request_headers.remove[0]", `"a b" is not a header name`,
			func(r *Rule) { r.RequestHeaders = &HeaderModifier{Remove: []string{"a b"}} }},
		{"redirect and backends", "redirect", "is exclusive with backends (1 given): a rule either redirects or forwards",
			func(r *Rule) { r.Redirect = &Redirect{StatusCode: 301} }},
	} {
		r := ok
		r.Headers, r.Backends = append([]HeaderMatch(nil), ok.Headers...), append([]RuleBackend(nil), ok.Backends...)
		tc.edit(&r)
		var re *RuleError
		if err := CheckRule(r); !errors.As(err, &re) || re.Field != tc.field || re.Reason != tc.reason {
			t.Errorf("%s: %v, want %s: %s", tc.name, err, tc.field, tc.reason)
		}
	}
}
