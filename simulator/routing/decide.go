// Package routing is the Example load balancer's rule evaluator: what a
// listener does with one request (or connection), from the load balancer
// as applied. It reads nothing but its arguments, so the simulator's
// http-requests endpoint deals its requests by it and the data plane
// serves each request by it (docs/adr/0023-the-data-plane.md): one
// evaluator, two callers.
package routing

import (
	"cmp"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strings"

	"github.com/example/cloud-provider-example/exampleapi"
)

// Decision is a listener's answer to one request.
type Decision struct {
	Status int
	// Priority is the matching rule's (0: none matched, the listener has
	// no rules, or the rule is keyed).
	Priority int
	// Rule is the matching rule's name, RuleSet its rule set's ("": none
	// matched, or the rule is the load balancer's own).
	Rule, RuleSet string
	// Location is a redirect's, ending with LocationPath (decoded: the
	// data plane sends it escaped).
	Location, LocationPath string
	// Backends are the matching rule's backends whose pools have targets,
	// to be chosen among by weight (status 200 only).
	Backends []exampleapi.RuleBackend
	// OwnTargets: the listener has no rules and forwards to the load
	// balancer's own targets, or its pool's (status 200 only).
	OwnTargets bool
	// Headers are the request's headers as forwarded (http and https
	// listeners only), and Modifier the rule's change that made them.
	Headers  map[string]string
	Modifier *exampleapi.HeaderModifier
	// ResponseModifier is the rule's change of its answer's headers (a
	// redirect, a fixed response or the backend's response).
	ResponseModifier *exampleapi.HeaderModifier
	// RewriteHost and RewritePath are the Host and path the request is
	// forwarded with, when the rule rewrites them ("" keeps them).
	RewriteHost, RewritePath string
	// Timeouts and Retry are the rule's, for the data plane (status 200
	// only).
	Timeouts *exampleapi.Timeouts
	Retry    *exampleapi.Retry
	// CORS is the matching rule's, for the data plane to answer
	// preflights and mark answers, a redirect's too (cors.go).
	CORS *exampleapi.CORS
	// Session is the matching rule's session persistence, for the data
	// plane to keep a client on its target (status 200 only).
	Session *Session
}

// RuleID is the matching rule's identity on its load balancer: its name,
// after its set's for a set's rule (a space is in no name).
func (d Decision) RuleID() string {
	if d.RuleSet == "" {
		return d.Rule
	}
	return d.RuleSet + " " + d.Rule
}

// Session is a rule's session persistence as the data plane keeps it:
// its tokens are the rule's (by RuleID, which outlives priorities), and
// its cookie's path is the rule's path, or "/" when it matches any path.
type Session struct {
	exampleapi.SessionPersistence
	Rule, Path string
}

// PoolTargets counts the targets of target pool id that take requests.
type PoolTargets func(id string) (int, error)

// Decide is how listener l of lb, with its rule sets, answers req (its
// Count aside).
func Decide(lb exampleapi.LoadBalancer, sets []exampleapi.RuleSet, l exampleapi.Listener, req exampleapi.SimulatedRequest,
	targets PoolTargets) (Decision, error) {
	host := strings.ToLower(req.Host)
	if h, _, err := net.SplitHostPort(host); err == nil {
		host = h
	}
	if l.RedirectToHTTPSPort != 0 {
		return Decision{Status: http.StatusMovedPermanently, Location: location("https", host, l.RedirectToHTTPSPort, req.Path),
			LocationPath: req.Path}, nil
	}
	rules := listenerRules(lb, sets, l)
	// Connections carry no HTTP headers to forward.
	headers := func(m *exampleapi.HeaderModifier) map[string]string {
		if !IsHTTP(l) {
			return nil
		}
		return forwarded(req.Headers, m)
	}
	if len(rules) == 0 {
		has, err := hasTargets(lb, targets)
		if err != nil || !has {
			return Decision{Status: http.StatusServiceUnavailable}, err
		}
		return Decision{Status: http.StatusOK, OwnTargets: true, Headers: headers(nil)}, nil
	}
	query, _ := url.ParseQuery(req.Query) // a malformed pair matches nothing
	i := slices.IndexFunc(rules, func(r setRule) bool { return matches(r.Rule, host, req, query) })
	if i < 0 {
		return Decision{Status: http.StatusNotFound}, nil
	}
	r := rules[i].Rule
	d := Decision{Priority: r.Priority, Rule: r.Name, RuleSet: rules[i].set, CORS: r.CORS}
	if r.Redirect != nil {
		// A browser follows a cross-origin redirect only when it is
		// marked, so the redirect keeps the rule's CORS.
		redirect(&d, l, r, host, req.Path)
		return d, nil
	}
	// The load balancer answers itself: no backend sees the request.
	if fr := r.FixedResponse; fr != nil {
		d.Status, d.ResponseModifier = fr.StatusCode, r.ResponseHeaders
		return d, nil
	}
	weighed := false
	for _, b := range r.Backends {
		if b.Weight == 0 {
			continue
		}
		weighed = true
		n, err := targets(b.TargetPoolID)
		if err != nil {
			return Decision{}, fmt.Errorf("rule %s of port %d: %w", d.RuleID(), l.Port, err)
		}
		if n > 0 {
			d.Backends = append(d.Backends, b)
		}
	}
	switch {
	case !weighed:
		d.Status = http.StatusInternalServerError
	case len(d.Backends) == 0:
		d.Status = http.StatusServiceUnavailable
	default:
		d.Status, d.Headers, d.Modifier, d.ResponseModifier = http.StatusOK, headers(r.RequestHeaders), r.RequestHeaders, r.ResponseHeaders
		d.RewriteHost, d.RewritePath = rewrite(r, req.Path)
		d.Timeouts, d.Retry = r.Timeouts, r.Retry
		if sp := r.SessionPersistence; sp != nil {
			d.Session = &Session{SessionPersistence: *sp, Rule: d.RuleID(), Path: cookiePath(r)}
		}
	}
	return d, nil
}

// hasTargets tells whether lb forwards anywhere without rules: its own
// targets or its pool's (a Gateway's load balancer has neither).
func hasTargets(lb exampleapi.LoadBalancer, targets PoolTargets) (bool, error) {
	if lb.TargetPoolID == "" {
		return len(lb.Targets) > 0, nil
	}
	n, err := targets(lb.TargetPoolID)
	return n > 0, err
}

// cookiePath is the Path of rule r's session cookie: its path, a prefix
// a browser sends the cookie back on. A regex path is no such prefix: its
// literal beginning to its last /, at least /.
func cookiePath(r exampleapi.Rule) string {
	if r.PathType != exampleapi.PathRegex {
		return cmp.Or(r.Path, "/")
	}
	re := pathRegex(r.Path)
	if re == nil {
		return "/"
	}
	lit, _ := re.LiteralPrefix()
	if i := strings.LastIndex(lit, "/"); i >= 0 && strings.HasPrefix(lit, "/") {
		return lit[:i+1]
	}
	return "/"
}
