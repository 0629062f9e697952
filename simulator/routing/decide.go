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
	// Priority is the matching rule's (0: none matched, or the listener
	// has no rules).
	Priority int
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

// Session is a rule's session persistence as the data plane keeps it:
// its tokens are the rule's (by name, which outlives priorities), and
// its cookie's path is the rule's path, or "/" when it matches any path.
type Session struct {
	exampleapi.SessionPersistence
	Rule, Path string
}

// PoolTargets counts the targets of target pool id that take requests.
type PoolTargets func(id string) (int, error)

// Decide is how listener l of lb answers req (its Count aside).
func Decide(lb exampleapi.LoadBalancer, l exampleapi.Listener, req exampleapi.SimulatedRequest, targets PoolTargets) (Decision, error) {
	host := strings.ToLower(req.Host)
	if h, _, err := net.SplitHostPort(host); err == nil {
		host = h
	}
	if l.RedirectToHTTPSPort != 0 {
		return Decision{Status: http.StatusMovedPermanently, Location: location("https", host, l.RedirectToHTTPSPort, req.Path),
			LocationPath: req.Path}, nil
	}
	var rules []exampleapi.Rule
	for _, r := range lb.Rules {
		if rl, ok := ListenerOn(lb.Listeners, r.ListenerPort, r.ListenerProtocol); ok && rl.Port == l.Port && rl.Protocol == l.Protocol {
			rules = append(rules, r)
		}
	}
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
	slices.SortFunc(rules, func(a, b exampleapi.Rule) int { return cmp.Compare(a.Priority, b.Priority) })
	query, _ := url.ParseQuery(req.Query) // a malformed pair matches nothing
	i := slices.IndexFunc(rules, func(r exampleapi.Rule) bool { return matches(r, host, req, query) })
	if i < 0 {
		return Decision{Status: http.StatusNotFound}, nil
	}
	r := rules[i]
	if r.Redirect != nil {
		d := redirect(l, r, host, req.Path)
		d.CORS = r.CORS // a browser follows a cross-origin redirect only when it is marked
		return d, nil
	}
	d := Decision{Priority: r.Priority, CORS: r.CORS}
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
			return Decision{}, fmt.Errorf("rule %d of port %d: %w", r.Priority, l.Port, err)
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
			d.Session = &Session{SessionPersistence: *sp, Rule: r.Name, Path: cmp.Or(r.Path, "/")}
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
