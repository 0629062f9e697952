package simulator

import (
	"fmt"
	"net/http"
	"regexp"
	"slices"
	"strings"
	"unicode"

	bolt "go.etcd.io/bbolt"

	"github.com/example/cloud-provider-example/exampleapi"
)

// A load balancer's rules (exampleapi/rules.go): stateless checks here
// (those only tcp, udp and tls listeners have in l4rules.go), the target
// pools they forward to checked against the store on create and update.

var (
	// hostnameRE is an RFC 1123 name, or one with a leading "*." label.
	hostnameRE = regexp.MustCompile(`^(\*\.)?[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$`)
	// tokenRE is an HTTP header name (RFC 9110 token).
	tokenRE = regexp.MustCompile("^[!#$%&'*+.^_`|~0-9A-Za-z-]+$")
	// ruleNameRE is a rule's name.
	ruleNameRE = regexp.MustCompile(`^[A-Za-z0-9._\-/:@#*]{1,128}$`)
)

const maxHostnameLen = 253

// listenerPriority is a rule's priority on its listener.
type listenerPriority struct {
	protocol       string
	port, priority int
}

// validateRules checks rules against the load balancer's listeners ls.
func validateRules(ls []exampleapi.Listener, rules []exampleapi.Rule) error {
	if n := len(rules); n > exampleapi.MaxRules {
		return invalid("rules", "has %d rules (at most %d)", n, exampleapi.MaxRules)
	}
	priorities := map[listenerPriority]int{}
	names := map[string]int{}
	for i, r := range rules {
		f := fmt.Sprintf("rules[%d]", i)
		if !ruleNameRE.MatchString(r.Name) {
			return invalid(f+".name", "%q is not a rule name (1-128 letters, digits and ._-/:@#*)", r.Name)
		}
		if k, dup := names[r.Name]; dup {
			return invalid(f+".name", "%q is also rules[%d]'s; names are unique per load balancer", r.Name, k)
		}
		names[r.Name] = i
		l, err := pickListener(ls, r.ListenerPort, r.ListenerProtocol, f+".listener_port", f+".listener_protocol", "the load balancer")
		if err != nil {
			return err
		}
		if l.RedirectToHTTPSPort != 0 {
			return invalid(f+".listener_port", "listener http/%d redirects every request to https: it has no requests to route", r.ListenerPort)
		}
		if err := validateRange(f+".priority", r.Priority, 1, exampleapi.MaxRulePriority); err != nil {
			return err
		}
		// By listener: tcp/53 and udp/53 each have their own priorities.
		key := listenerPriority{l.Protocol, l.Port, r.Priority}
		if k, dup := priorities[key]; dup {
			return invalid(f+".priority", "priority %d is also rules[%d]'s on listener %s/%d; priorities are unique per listener",
				r.Priority, k, l.Protocol, r.ListenerPort)
		}
		priorities[key] = i
		if err := validateL4Rule(f, l, r); err != nil {
			return err
		}
		if err := validateRule(f, r); err != nil {
			return err
		}
	}
	return nil
}

func validateRule(f string, r exampleapi.Rule) error {
	if n := len(r.Hostnames); n > exampleapi.MaxRuleHostnames {
		return invalid(f+".hostnames", "has %d names (at most %d)", n, exampleapi.MaxRuleHostnames)
	}
	for k, h := range r.Hostnames {
		if len(h) > maxHostnameLen || !hostnameRE.MatchString(h) {
			return invalid(fmt.Sprintf("%s.hostnames[%d]", f, k), "%q is not a lower-case DNS name or a wildcard (*.example.com)", h)
		}
	}
	if err := validatePath(f, r.PathType, r.Path); err != nil {
		return err
	}
	if r.Method != "" {
		if err := oneOf(f+".method", "method", r.Method, exampleapi.RuleMethods); err != nil {
			return err
		}
	}
	if err := validateHeaders(f+".headers", r.Headers, exampleapi.MaxRuleHeaders); err != nil {
		return err
	}
	if r.Redirect != nil && len(r.Backends) > 0 {
		return invalid(f+".redirect", "is exclusive with backends (%d given): a rule either redirects or forwards", len(r.Backends))
	}
	if err := validateFixedResponse(f, r); err != nil {
		return err
	}
	if err := validateBackends(f+".backends", r.Backends); err != nil {
		return err
	}
	if r.Redirect != nil {
		if err := validateRedirect(f+".redirect", *r.Redirect); err != nil {
			return err
		}
	}
	if m := r.RequestHeaders; m != nil {
		if err := validateHeaders(f+".request_headers.set", m.Set, exampleapi.MaxHeaderChanges); err != nil {
			return err
		}
		if err := validateHeaders(f+".request_headers.add", m.Add, exampleapi.MaxHeaderChanges); err != nil {
			return err
		}
		if n := len(m.Remove); n > exampleapi.MaxHeaderChanges {
			return invalid(f+".request_headers.remove", "has %d names (at most %d)", n, exampleapi.MaxHeaderChanges)
		}
		for k, name := range m.Remove {
			if !tokenRE.MatchString(name) {
				return invalid(fmt.Sprintf("%s.request_headers.remove[%d]", f, k), "%q is not a header name", name)
			}
		}
	}
	return nil
}

func validatePath(f, pathType, path string) error {
	switch {
	case pathType == "" && path == "":
		return nil
	case pathType == "":
		return invalid(f+".path_type", "is required with a path (accepted: %s)", strings.Join(exampleapi.PathTypes, ", "))
	}
	if err := oneOf(f+".path_type", "path type", pathType, exampleapi.PathTypes); err != nil {
		return err
	}
	switch {
	case !strings.HasPrefix(path, "/"):
		return invalid(f+".path", "%q must start with /", path)
	case len(path) > 1024:
		return invalid(f+".path", "is longer than 1024 characters")
	case strings.ContainsFunc(path, func(r rune) bool { return r <= ' ' || r > '~' || r == '?' || r == '#' }):
		return invalid(f+".path", "%q must be printable ASCII without spaces, '?' or '#'", path)
	case strings.Contains(path, "//") || strings.Contains(path, "/./") || strings.Contains(path, "/../"):
		return invalid(f+".path", "%q is not a normalized path (no //, /./ or /../)", path)
	}
	return nil
}

func validateHeaders(f string, hs []exampleapi.HeaderMatch, limit int) error {
	if n := len(hs); n > limit {
		return invalid(f, "has %d headers (at most %d)", n, limit)
	}
	seen := map[string]int{}
	for k, h := range hs {
		g := fmt.Sprintf("%s[%d]", f, k)
		if !tokenRE.MatchString(h.Name) {
			return invalid(g+".name", "%q is not a header name", h.Name)
		}
		canonical := http.CanonicalHeaderKey(h.Name)
		if j, dup := seen[canonical]; dup {
			return invalid(g+".name", "header %q is also %s[%d] (names are case insensitive)", h.Name, f, j)
		}
		seen[canonical] = k
		if len(h.Value) > 4096 || strings.ContainsFunc(h.Value, unicode.IsControl) {
			return invalid(g+".value", "must be at most 4096 characters, without control characters")
		}
	}
	return nil
}

func validateBackends(f string, bs []exampleapi.RuleBackend) error {
	if n := len(bs); n > exampleapi.MaxRuleBackends {
		return invalid(f, "has %d backends (at most %d)", n, exampleapi.MaxRuleBackends)
	}
	seen := map[exampleapi.RuleBackend]int{}
	for k, b := range bs {
		g := fmt.Sprintf("%s[%d]", f, k)
		if err := validateID(g+".target_pool_id", b.TargetPoolID, "tp-", "target pool"); err != nil {
			return err
		}
		if err := validateRange(g+".port", b.Port, 1, 65535); err != nil {
			return err
		}
		if err := validateRange(g+".weight", b.Weight, 0, exampleapi.MaxBackendWeight); err != nil {
			return err
		}
		at := exampleapi.RuleBackend{TargetPoolID: b.TargetPoolID, Port: b.Port}
		if j, dup := seen[at]; dup {
			return invalid(g, "%s port %d is also %s[%d]; give one backend the sum of the weights", b.TargetPoolID, b.Port, f, j)
		}
		seen[at] = k
	}
	return nil
}

func validateRedirect(f string, r exampleapi.Redirect) error {
	if !slices.Contains(exampleapi.RedirectCodes, r.StatusCode) {
		return invalid(f+".status_code", "%d is not a redirect code (accepted: 301, 302)", r.StatusCode)
	}
	if r.Scheme != "" {
		if err := oneOf(f+".scheme", "scheme", r.Scheme, []string{"http", "https"}); err != nil {
			return err
		}
	}
	if r.Hostname != "" && (strings.HasPrefix(r.Hostname, "*") || len(r.Hostname) > maxHostnameLen || !hostnameRE.MatchString(r.Hostname)) {
		return invalid(f+".hostname", "%q is not a lower-case DNS name", r.Hostname)
	}
	if r.Port != 0 {
		return validateRange(f+".port", r.Port, 1, 65535)
	}
	return nil
}

// validateFixedResponse checks rule r's fixed response, if any: it is
// the load balancer answering the request itself, so the rule has nothing
// to forward, to redirect or to change the headers of.
func validateFixedResponse(f string, r exampleapi.Rule) error {
	fr := r.FixedResponse
	if fr == nil {
		return nil
	}
	switch {
	case len(r.Backends) > 0:
		return invalid(f+".fixed_response", "is exclusive with backends (%d given): a rule either answers the request itself or forwards it", len(r.Backends))
	case r.Redirect != nil:
		return invalid(f+".fixed_response", "is exclusive with redirect: a rule answers with one status code")
	case r.RequestHeaders != nil:
		return invalid(f+".fixed_response", "is exclusive with request_headers: a rule that answers the request itself forwards no headers to change")
	}
	if !exampleapi.IsFixedResponseCode(fr.StatusCode) {
		return invalid(f+".fixed_response.status_code", "%d is not a fixed response code (accepted: %s; a 3xx is a redirect's)",
			fr.StatusCode, fixedResponseCodes())
	}
	return nil
}

// fixedResponseCodes lists exampleapi.FixedResponseCodes for a message.
func fixedResponseCodes() string {
	rs := make([]string, len(exampleapi.FixedResponseCodes))
	for i, r := range exampleapi.FixedResponseCodes {
		rs[i] = r.String()
	}
	return strings.Join(rs, ", ")
}

// requireRuleBackends checks that every target pool a rule forwards to is
// one of region.
func requireRuleBackends(tx *bolt.Tx, rules []exampleapi.Rule, region string) error {
	for i, r := range rules {
		for k, b := range r.Backends {
			field := fmt.Sprintf("rules[%d].backends[%d].target_pool_id", i, k)
			if err := storedTargetPools.requireInRegion(tx, field, b.TargetPoolID, region); err != nil {
				return err
			}
		}
	}
	return nil
}
