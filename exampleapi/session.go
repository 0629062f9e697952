package exampleapi

import (
	"cmp"
	"slices"
	"strings"
)

// SessionPersistence keeps a client on one target of a rule (http and
// https listeners only): the rule's first answer to a client carries a
// session token, in a cookie or a response header, naming the target the
// load balancer chose (by the backends' weights); a request that brings
// it back goes to that target while it is a healthy target of one of the
// rule's backends and the token has not outlived AbsoluteTimeoutSeconds.
// Otherwise a target is chosen anew and a new token issued. The token is
// opaque and signed with a key of the load balancer's: it tells the
// client nothing of its target, and one changed, expired or from
// elsewhere is ignored, never an error.
type SessionPersistence struct {
	// Type is how the client carries the token: SessionCookie (a
	// Set-Cookie of the rule's path, HttpOnly, SameSite=Lax, Secure over
	// TLS) or SessionHeader (a response header, sent back as a request
	// header). Empty: SessionCookie.
	Type string `json:"type,omitempty"`
	// Name is the cookie's or header's name, an HTTP token of at most
	// MaxSessionNameLen characters. Empty: DefaultSessionName.
	Name string `json:"name,omitempty"`
	// AbsoluteTimeoutSeconds ends a session that long after its token was
	// issued, 1 to MaxSessionTimeoutSeconds; 0 is none. A permanent
	// cookie lives as long (its Max-Age), so it needs one.
	AbsoluteTimeoutSeconds int `json:"absolute_timeout_seconds,omitempty"`
	// Lifetime is the cookie's (type cookie only): SessionLifetime, gone
	// when the browser closes, or PermanentLifetime, kept for
	// AbsoluteTimeoutSeconds. Empty: SessionLifetime.
	Lifetime string `json:"lifetime,omitempty"`
}

// Session persistence types and cookie lifetimes.
const (
	SessionCookie     = "cookie"
	SessionHeader     = "header"
	SessionLifetime   = "session"
	PermanentLifetime = "permanent"
)

// SessionTypes and SessionLifetimes are the accepted Type and Lifetime
// values.
var (
	SessionTypes     = []string{SessionCookie, SessionHeader}
	SessionLifetimes = []string{SessionLifetime, PermanentLifetime}
)

// Limits of a rule's session persistence.
const (
	DefaultSessionName       = "example-session"
	MaxSessionNameLen        = 128     // Gateway API's
	MaxSessionTimeoutSeconds = 2592000 // 30 days
)

// sessionReservedHeaders are names the HTTP exchange itself owns: a
// session header of one of them would break the request or answer it
// rides on.
var sessionReservedHeaders = []string{"Host", "Cookie", "Set-Cookie", "Connection", "Content-Length", "Transfer-Encoding"}

// TypeOrDefault is s's type, SessionCookie when unset.
func (s SessionPersistence) TypeOrDefault() string { return cmp.Or(s.Type, SessionCookie) }

// NameOrDefault is s's cookie or header name, DefaultSessionName when
// unset.
func (s SessionPersistence) NameOrDefault() string { return cmp.Or(s.Name, DefaultSessionName) }

// checkSession checks rule r's session persistence, if any: it pins
// what the rule forwards (no redirect, no fixed response), of a known type
// and lifetime, its name a token, its timeout in range, and a permanent
// cookie's lifetime given by its timeout.
func checkSession(r Rule) error {
	if r.SessionPersistence == nil {
		return nil
	}
	s := *r.SessionPersistence
	switch {
	case r.Redirect != nil:
		return ruleError("session_persistence", "is exclusive with redirect: a rule that redirects has no target to keep")
	case r.FixedResponse != nil:
		return ruleError("session_persistence", "is exclusive with fixed_response: a rule that answers the request itself has no target to keep")
	case s.Type != "" && !slices.Contains(SessionTypes, s.Type):
		return ruleError("session_persistence.type", "unknown type %q (accepted: %s; empty is %s)", s.Type,
			strings.Join(SessionTypes, ", "), SessionCookie)
	case len(s.Name) > MaxSessionNameLen || (s.Name != "" && !IsHeaderName(s.Name)):
		return ruleError("session_persistence.name", "%q is not a cookie or header name (1-%d letters, digits and !#$%%&'*+-.^_`|~)",
			s.Name, MaxSessionNameLen)
	case s.TypeOrDefault() == SessionHeader && slices.ContainsFunc(sessionReservedHeaders, func(h string) bool { return strings.EqualFold(h, s.Name) }):
		return ruleError("session_persistence.name", "header %q is the HTTP exchange's own (not %s)", s.Name,
			strings.Join(sessionReservedHeaders, ", "))
	case s.AbsoluteTimeoutSeconds < 0 || s.AbsoluteTimeoutSeconds > MaxSessionTimeoutSeconds:
		return ruleError("session_persistence.absolute_timeout_seconds", "%d is out of range (accepted: 1-%d, or 0 for none)",
			s.AbsoluteTimeoutSeconds, MaxSessionTimeoutSeconds)
	case s.Lifetime != "" && !slices.Contains(SessionLifetimes, s.Lifetime):
		return ruleError("session_persistence.lifetime", "unknown lifetime %q (accepted: %s; empty is %s)", s.Lifetime,
			strings.Join(SessionLifetimes, ", "), SessionLifetime)
	case s.Lifetime != "" && s.TypeOrDefault() != SessionCookie:
		return ruleError("session_persistence.lifetime", "is a cookie's: a session of type %s has none", s.Type)
	case s.Lifetime == PermanentLifetime && s.AbsoluteTimeoutSeconds == 0:
		return ruleError("session_persistence.absolute_timeout_seconds", "is required with lifetime %s: it is the cookie's Max-Age",
			PermanentLifetime)
	}
	return nil
}
