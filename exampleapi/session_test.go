package exampleapi_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/example/cloud-provider-example/exampleapi"
)

// A rule's session persistence is checked by CheckRule: a known type and
// lifetime, a name that is a token (no header the exchange owns), a
// timeout in range and one for a permanent cookie, and a rule that
// forwards; each refusal names the field.
func TestCheckSessionPersistence(t *testing.T) {
	ok := exampleapi.Rule{Name: "r", ListenerPort: 80, Priority: 1, Backends: []exampleapi.RuleBackend{{TargetPoolID: "tp-1", Port: 30001, Weight: 1}}}
	for _, s := range []exampleapi.SessionPersistence{{}, {Type: "header", Name: "X-Session"},
		{Name: "JSESSIONID", Lifetime: "permanent", AbsoluteTimeoutSeconds: 300}, {Lifetime: "session", AbsoluteTimeoutSeconds: 2592000}} {
		r := ok
		r.SessionPersistence = &s
		if err := exampleapi.CheckRule(r); err != nil {
			t.Errorf("%+v: %v", s, err)
		}
	}
	for _, tc := range []struct {
		name, field, reason string
		s                   exampleapi.SessionPersistence
		edit                func(*exampleapi.Rule)
	}{
		{"type", "session_persistence.type", `unknown type "Cookie" (accepted: cookie, header; empty is cookie)`, exampleapi.SessionPersistence{Type: "Cookie"}, nil},
		{"name", "session_persistence.name", `"my session" is not a cookie or header name`, exampleapi.SessionPersistence{Name: "my session"}, nil},
		{"long name", "session_persistence.name", `is not a cookie or header name (1-128`, exampleapi.SessionPersistence{Name: strings.Repeat("a", 129)}, nil},
		{"reserved header", "session_persistence.name", `header "cookie" is the HTTP exchange's own`, exampleapi.SessionPersistence{Type: "header", Name: "cookie"}, nil},
		{"timeout", "session_persistence.absolute_timeout_seconds", "2592001 is out of range (accepted: 1-2592000, or 0 for none)",
			exampleapi.SessionPersistence{AbsoluteTimeoutSeconds: 2592001}, nil},
		{"negative timeout", "session_persistence.absolute_timeout_seconds", "-1 is out of range", exampleapi.SessionPersistence{AbsoluteTimeoutSeconds: -1}, nil},
		{"lifetime", "session_persistence.lifetime", `unknown lifetime "forever"`, exampleapi.SessionPersistence{Lifetime: "forever"}, nil},
		{"header with a lifetime", "session_persistence.lifetime", "is a cookie's: a session of type header has none",
			exampleapi.SessionPersistence{Type: "header", Lifetime: "session"}, nil},
		{"permanent without timeout", "session_persistence.absolute_timeout_seconds", "is required with lifetime permanent",
			exampleapi.SessionPersistence{Lifetime: "permanent"}, nil},
		{"redirect", "session_persistence", "is exclusive with redirect", exampleapi.SessionPersistence{},
			func(r *exampleapi.Rule) { r.Backends, r.Redirect = nil, &exampleapi.Redirect{StatusCode: 302} }},
		{"fixed response", "session_persistence", "is exclusive with fixed_response", exampleapi.SessionPersistence{},
			func(r *exampleapi.Rule) {
				r.Backends, r.FixedResponse = nil, &exampleapi.FixedResponse{StatusCode: 404}
			}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := ok
			r.SessionPersistence = &tc.s
			if tc.edit != nil {
				tc.edit(&r)
			}
			var re *exampleapi.RuleError
			if err := exampleapi.CheckRule(r); !errors.As(err, &re) || re.Field != tc.field || !strings.Contains(re.Reason, tc.reason) {
				t.Fatalf("got %v, want %s: ...%s", err, tc.field, tc.reason)
			}
		})
	}
}
