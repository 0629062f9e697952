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
	MaxHostnameLen        = 253
	MaxHeaderValueLen     = 4096
	MaxQueryParamValueLen = 1024
	MaxRulePathLen        = 1024
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

// IsOrderKey tells whether k is an order key: 1 to MaxOrderKeyLen
// printable ASCII characters without spaces, so that byte order is the
// order any reader sees.
func IsOrderKey(k string) bool {
	if k == "" || len(k) > MaxOrderKeyLen {
		return false
	}
	for i := range len(k) {
		if k[i] <= ' ' || k[i] > '~' {
			return false
		}
	}
	return true
}

// IsHeaderName tells whether name is an HTTP header name (RFC 9110 token).
func IsHeaderName(name string) bool { return headerNameRE.MatchString(name) }

// CheckRule checks what rule r holds on its own: host names, path,
// method, header and query parameter matches, the action (backends,
// redirect or fixed response, exclusive), header changes and rewrite. The first
// refusal is a *RuleError.
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
	if r.OrderKey != "" && !IsOrderKey(r.OrderKey) {
		return ruleError("order_key", "%q is not an order key (1-%d printable ASCII characters, no spaces)", r.OrderKey, MaxOrderKeyLen)
	}
	if r.Method != "" && !slices.Contains(RuleMethods, r.Method) {
		return ruleError("method", "unknown method %q (accepted: %s)", r.Method, strings.Join(RuleMethods, ", "))
	}
	if err := checkHeaders("headers", r.Headers, MaxRuleHeaders); err != nil {
		return err
	}
	if err := checkQueryParams(r.QueryParams); err != nil {
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
		if err := checkRedirect(*r.Redirect, r.PathType); err != nil {
			return err
		}
	}
	if err := checkRewrite(r); err != nil {
		return err
	}
	if err := checkHeaderModifier("request_headers", r.RequestHeaders); err != nil {
		return err
	}
	if err := checkHeaderModifier("response_headers", r.ResponseHeaders); err != nil {
		return err
	}
	if r.CORS != nil {
		if err := checkCORS(*r.CORS); err != nil {
			return err
		}
	}
	if err := checkSession(r); err != nil {
		return err
	}
	return checkTimeoutsAndRetry(r)
}

// checkHeaderModifier checks the header changes m (field f), if any.
func checkHeaderModifier(f string, m *HeaderModifier) error {
	if m == nil {
		return nil
	}
	if err := checkHeaders(f+".set", m.Set, MaxHeaderChanges); err != nil {
		return err
	}
	if err := checkHeaders(f+".add", m.Add, MaxHeaderChanges); err != nil {
		return err
	}
	if n := len(m.Remove); n > MaxHeaderChanges {
		return ruleError(f+".remove", "has %d names (at most %d)", n, MaxHeaderChanges)
	}
	for k, name := range m.Remove {
		if !IsHeaderName(name) {
			return ruleError(fmt.Sprintf("%s.remove[%d]", f, k), "%q is not a header name", name)
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
	case pathType == PathRegex:
		if err := CheckPathRegex(path); err != nil {
			return ruleError("path", "%s", err)
		}
		return nil
	}
	return checkPathValue("path", path)
}

// CheckPathRegex checks a regex path: RE2's syntax, which matches in time
// linear in the path whatever the expression, so no rule can slow the
// load balancer for the others.
func CheckPathRegex(expr string) error {
	switch {
	case expr == "":
		return fmt.Errorf("is required with path_type %q", PathRegex)
	case len(expr) > MaxRulePathLen:
		return fmt.Errorf("is longer than %d characters", MaxRulePathLen)
	case strings.ContainsFunc(expr, func(r rune) bool { return r < ' ' || r > '~' }):
		return fmt.Errorf("%q must be printable ASCII", expr)
	}
	if _, err := CompilePathRegex(expr); err != nil {
		return fmt.Errorf("%q is not a regular expression of RE2's syntax: %w", expr, err)
	}
	return nil
}

// CompilePathRegex compiles a regex path (PathRegex) to match a whole
// path. The expression compiles alone first: wrapped, an unbalanced one
// ("a)|(.*") would escape the anchors.
func CompilePathRegex(expr string) (*regexp.Regexp, error) {
	if _, err := regexp.Compile(expr); err != nil {
		return nil, err
	}
	return regexp.Compile(`^(?:` + expr + `)$`)
}

// checkPathValue checks a path (field f) the rule matches or sets.
func checkPathValue(f, path string) error {
	if err := CheckPath(path); err != nil {
		return ruleError(f, "%s", err)
	}
	return nil
}

// CheckPath checks a path a rule matches (path_type exact or prefix) or
// a redirect or rewrite sets: absolute, normalized, printable ASCII.
func CheckPath(path string) error {
	switch {
	case !strings.HasPrefix(path, "/"):
		return fmt.Errorf("%q must start with /", path)
	case len(path) > MaxRulePathLen:
		return fmt.Errorf("is longer than %d characters", MaxRulePathLen)
	case strings.ContainsFunc(path, func(r rune) bool { return r <= ' ' || r > '~' || r == '?' || r == '#' }):
		return fmt.Errorf("%q must be printable ASCII without spaces, '?' or '#'", path)
	case strings.Contains(path, "//") || strings.Contains(path, "/./") || strings.Contains(path, "/../"):
		return fmt.Errorf("%q is not a normalized path (no //, /./ or /../)", path)
	}
	return nil
}

// checkNewPath checks the path or path prefix a redirect or rewrite
// (field f) puts in place of the request's: one of them, and a prefix
// replaces what the rule's prefix matched.
func checkNewPath(f, path, prefix, rulePathType string) error {
	switch {
	case path != "" && prefix != "":
		return ruleError(f+".path_prefix", "is exclusive with path: one replaces the whole path, the other what the rule's prefix matched")
	case prefix != "" && rulePathType != PathPrefix:
		return ruleError(f+".path_prefix", "needs the rule's path_type %q: it replaces what the prefix matched", PathPrefix)
	case path != "":
		return checkPathValue(f+".path", path)
	case prefix != "":
		return checkPathValue(f+".path_prefix", prefix)
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

// checkQueryParams checks query parameter matches: names are tokens, as
// header names (Gateway API's), and compared as written.
func checkQueryParams(ps []QueryParamMatch) error {
	if n := len(ps); n > MaxRuleQueryParams {
		return ruleError("query_params", "has %d parameters (at most %d)", n, MaxRuleQueryParams)
	}
	seen := map[string]int{}
	for k, p := range ps {
		g := fmt.Sprintf("query_params[%d]", k)
		j, dup := seen[p.Name]
		switch {
		case !IsHeaderName(p.Name):
			return ruleError(g+".name", "%q is not a query parameter name (letters, digits and !#$%%&'*+-.^_`|~)", p.Name)
		case dup:
			return ruleError(g+".name", "parameter %q is also query_params[%d]", p.Name, j)
		case p.Value == "" || len(p.Value) > MaxQueryParamValueLen || strings.ContainsFunc(p.Value, unicode.IsControl):
			return ruleError(g+".value", "parameter %s: must be 1-%d characters, without control characters", p.Name, MaxQueryParamValueLen)
		}
		seen[p.Name] = k
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
		case b.Protocol != "" && !slices.Contains(BackendProtocols, b.Protocol):
			return ruleError(g+".protocol", "unknown backend protocol %q (accepted: %s; empty is %s)", b.Protocol,
				strings.Join(BackendProtocols, ", "), BackendHTTP)
		case b.TLS != nil && b.Protocol == BackendH2C:
			return ruleError(g+".tls", "is exclusive with protocol h2c (HTTP/2 in cleartext); a backend over TLS is spoken to in HTTP/1.1")
		}
		if b.TLS != nil {
			if err := checkBackendTLS(g, *b.TLS); err != nil {
				return err
			}
		}
		at := RuleBackend{TargetPoolID: b.TargetPoolID, Port: b.Port}
		if j, dup := seen[at]; dup {
			return ruleError(g, "%s port %d is also backends[%d]; give one backend the sum of the weights", b.TargetPoolID, b.Port, j)
		}
		seen[at] = k
	}
	return nil
}

// isExactHostname tells whether h is a lower-case DNS name without a
// wildcard.
func isExactHostname(h string) bool {
	return !strings.HasPrefix(h, "*") && len(h) <= MaxHostnameLen && hostnameRE.MatchString(h)
}

func checkRedirect(r Redirect, rulePathType string) error {
	if !slices.Contains(RedirectCodes, r.StatusCode) {
		return ruleError("redirect.status_code", "%d is not a redirect code (accepted: %v)", r.StatusCode, RedirectCodes)
	}
	if r.Scheme != "" && r.Scheme != "http" && r.Scheme != "https" {
		return ruleError("redirect.scheme", "unknown scheme %q (accepted: http, https)", r.Scheme)
	}
	if r.Hostname != "" && !isExactHostname(r.Hostname) {
		return ruleError("redirect.hostname", "%q is not a lower-case DNS name", r.Hostname)
	}
	if r.Port != 0 && (r.Port < 1 || r.Port > 65535) {
		return ruleError("redirect.port", "%d is out of range (accepted: 1-65535)", r.Port)
	}
	return checkNewPath("redirect", r.Path, r.PathPrefix, rulePathType)
}

// checkRewrite checks rule r's rewrite, if any: it changes what is
// forwarded, so the rule forwards.
func checkRewrite(r Rule) error {
	rw := r.Rewrite
	switch {
	case rw == nil:
		return nil
	case r.Redirect != nil:
		return ruleError("rewrite", "is exclusive with redirect: a rule either redirects or forwards")
	case rw.Hostname != "" && !isExactHostname(rw.Hostname):
		return ruleError("rewrite.hostname", "%q is not a lower-case DNS name", rw.Hostname)
	}
	return checkNewPath("rewrite", rw.Path, rw.PathPrefix, r.PathType)
}

// checkFixedResponse checks rule r's fixed response, if any: it is the
// load balancer answering the request itself, so the rule has nothing to
// forward, to redirect, to rewrite or to change the headers of.
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
	case r.Rewrite != nil:
		return ruleError("fixed_response", "is exclusive with rewrite: a rule that answers the request itself forwards nothing to rewrite")
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
