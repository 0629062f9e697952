package exampleapi

import (
	"fmt"
	"net/http"
	"regexp"
	"slices"
	"strings"
	"unicode"
)

// The cloud's checks of one rule on its own (rules.go): what a rule may
// hold whatever its load balancer. The simulator applies them to every
// rule it is given; the Gateway front-end applies them to each route's
// rules before rendering, so a route the cloud would refuse is refused
// alone instead of failing its Gateway's plan. What depends on the load
// balancer (names and priorities unique, the listener and what it
// allows, the rule count, target pools that exist) is the simulator's.

var (
	// hostnameRE is an RFC 1123 name, or one with a leading "*." label.
	hostnameRE = regexp.MustCompile(`^(\*\.)?[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$`)
	// headerNameRE is an HTTP header name (RFC 9110 token).
	headerNameRE = regexp.MustCompile("^[!#$%&'*+.^_`|~0-9A-Za-z-]+$")
)

// Limits of a rule's values.
const (
	MaxHostnameLen    = 253
	MaxHeaderValueLen = 4096
	MaxRulePathLen    = 1024
)

// RuleError is a rule the cloud refuses: Field is where in the rule
// ("headers[0].value", relative to the rule) and Reason why.
type RuleError struct {
	Field  string
	Reason string
}

func (e *RuleError) Error() string { return e.Field + ": " + e.Reason }

func ruleError(field, format string, args ...any) *RuleError {
	return &RuleError{Field: field, Reason: fmt.Sprintf(format, args...)}
}

// IsHeaderName tells whether name is an HTTP header name (RFC 9110 token).
func IsHeaderName(name string) bool { return headerNameRE.MatchString(name) }

// CheckRule checks what rule r holds on its own: host names, path,
// method, header matches, the action (backends, redirect or fixed
// response, exclusive) and header changes. The first refusal is a
// *RuleError.
func CheckRule(r Rule) error {
	if n := len(r.Hostnames); n > MaxRuleHostnames {
		return ruleError("hostnames", "has %d names (at most %d)", n, MaxRuleHostnames)
	}
	for k, h := range r.Hostnames {
		if len(h) > MaxHostnameLen || !hostnameRE.MatchString(h) {
			return ruleError(fmt.Sprintf("hostnames[%d]", k), "%q is not a lower-case DNS name or a wildcard (*.example.com)", h)
		}
	}
	if err := checkPath(r.PathType, r.Path); err != nil {
		return err
	}
	if r.Method != "" && !slices.Contains(RuleMethods, r.Method) {
		return ruleError("method", "unknown method %q (accepted: %s)", r.Method, strings.Join(RuleMethods, ", "))
	}
	if err := checkHeaders("headers", r.Headers, MaxRuleHeaders); err != nil {
		return err
	}
	if r.Redirect != nil && len(r.Backends) > 0 {
		return ruleError("redirect", "is exclusive with backends (%d given): a rule either redirects or forwards", len(r.Backends))
	}
	if err := checkFixedResponse(r); err != nil {
		return err
	}
	if err := checkBackends(r.Backends); err != nil {
		return err
	}
	if r.Redirect != nil {
		if err := checkRedirect(*r.Redirect); err != nil {
			return err
		}
	}
	if m := r.RequestHeaders; m != nil {
		if err := checkHeaders("request_headers.set", m.Set, MaxHeaderChanges); err != nil {
			return err
		}
		if err := checkHeaders("request_headers.add", m.Add, MaxHeaderChanges); err != nil {
			return err
		}
		if n := len(m.Remove); n > MaxHeaderChanges {
			return ruleError("request_headers.remove", "has %d names (at most %d)", n, MaxHeaderChanges)
		}
		for k, name := range m.Remove {
			if !IsHeaderName(name) {
				return ruleError(fmt.Sprintf("request_headers.remove[%d]", k), "%q is not a header name", name)
			}
		}
	}
	return nil
}

func checkPath(pathType, path string) error {
	switch {
	case pathType == "" && path == "":
		return nil
	case pathType == "":
		return ruleError("path_type", "is required with a path (accepted: %s)", strings.Join(PathTypes, ", "))
	case !slices.Contains(PathTypes, pathType):
		return ruleError("path_type", "unknown path type %q (accepted: %s)", pathType, strings.Join(PathTypes, ", "))
	case !strings.HasPrefix(path, "/"):
		return ruleError("path", "%q must start with /", path)
	case len(path) > MaxRulePathLen:
		return ruleError("path", "is longer than %d characters", MaxRulePathLen)
	case strings.ContainsFunc(path, func(r rune) bool { return r <= ' ' || r > '~' || r == '?' || r == '#' }):
		return ruleError("path", "%q must be printable ASCII without spaces, '?' or '#'", path)
	case strings.Contains(path, "//") || strings.Contains(path, "/./") || strings.Contains(path, "/../"):
		return ruleError("path", "%q is not a normalized path (no //, /./ or /../)", path)
	}
	return nil
}

func checkHeaders(f string, hs []HeaderMatch, limit int) error {
	if n := len(hs); n > limit {
		return ruleError(f, "has %d headers (at most %d)", n, limit)
	}
	seen := map[string]int{}
	for k, h := range hs {
		g := fmt.Sprintf("%s[%d]", f, k)
		if !IsHeaderName(h.Name) {
			return ruleError(g+".name", "%q is not a header name", h.Name)
		}
		canonical := http.CanonicalHeaderKey(h.Name)
		if j, dup := seen[canonical]; dup {
			return ruleError(g+".name", "header %q is also %s[%d] (names are case insensitive)", h.Name, f, j)
		}
		seen[canonical] = k
		if len(h.Value) > MaxHeaderValueLen || strings.ContainsFunc(h.Value, unicode.IsControl) {
			return ruleError(g+".value", "header %s: must be at most %d characters, without control characters", h.Name, MaxHeaderValueLen)
		}
	}
	return nil
}

func checkBackends(bs []RuleBackend) error {
	if n := len(bs); n > MaxRuleBackends {
		return ruleError("backends", "has %d backends (at most %d)", n, MaxRuleBackends)
	}
	seen := map[RuleBackend]int{}
	for k, b := range bs {
		g := fmt.Sprintf("backends[%d]", k)
		switch {
		case !strings.HasPrefix(b.TargetPoolID, "tp-") || b.TargetPoolID == "tp-":
			return ruleError(g+".target_pool_id", "%q is not a target pool id (tp-...)", b.TargetPoolID)
		case b.Port < 0 || b.Port > 65535:
			return ruleError(g+".port", "%d is out of range (accepted: 1-65535, or 0 for a pool of target type ip)", b.Port)
		case b.Weight < 0 || b.Weight > MaxBackendWeight:
			return ruleError(g+".weight", "%d is out of range (accepted: 0-%d)", b.Weight, MaxBackendWeight)
		}
		at := RuleBackend{TargetPoolID: b.TargetPoolID, Port: b.Port}
		if j, dup := seen[at]; dup {
			return ruleError(g, "%s port %d is also backends[%d]; give one backend the sum of the weights", b.TargetPoolID, b.Port, j)
		}
		seen[at] = k
	}
	return nil
}

func checkRedirect(r Redirect) error {
	if !slices.Contains(RedirectCodes, r.StatusCode) {
		return ruleError("redirect.status_code", "%d is not a redirect code (accepted: %v)", r.StatusCode, RedirectCodes)
	}
	if r.Scheme != "" && r.Scheme != "http" && r.Scheme != "https" {
		return ruleError("redirect.scheme", "unknown scheme %q (accepted: http, https)", r.Scheme)
	}
	if r.Hostname != "" && (strings.HasPrefix(r.Hostname, "*") || len(r.Hostname) > MaxHostnameLen || !hostnameRE.MatchString(r.Hostname)) {
		return ruleError("redirect.hostname", "%q is not a lower-case DNS name", r.Hostname)
	}
	if r.Port != 0 && (r.Port < 1 || r.Port > 65535) {
		return ruleError("redirect.port", "%d is out of range (accepted: 1-65535)", r.Port)
	}
	return nil
}

// checkFixedResponse checks rule r's fixed response, if any: it is the
// load balancer answering the request itself, so the rule has nothing to
// forward, to redirect or to change the headers of.
func checkFixedResponse(r Rule) error {
	fr := r.FixedResponse
	if fr == nil {
		return nil
	}
	switch {
	case len(r.Backends) > 0:
		return ruleError("fixed_response", "is exclusive with backends (%d given): a rule either answers the request itself or forwards it", len(r.Backends))
	case r.Redirect != nil:
		return ruleError("fixed_response", "is exclusive with redirect: a rule answers with one status code")
	case r.RequestHeaders != nil:
		return ruleError("fixed_response", "is exclusive with request_headers: a rule that answers the request itself forwards no headers to change")
	}
	if !IsFixedResponseCode(fr.StatusCode) {
		rs := make([]string, len(FixedResponseCodes))
		for i, r := range FixedResponseCodes {
			rs[i] = r.String()
		}
		return ruleError("fixed_response.status_code", "%d is not a fixed response code (accepted: %s; a 3xx is a redirect's)",
			fr.StatusCode, strings.Join(rs, ", "))
	}
	return nil
}
