package simulator

import (
	"cmp"
	"fmt"
	"net"
	"net/http"
	"slices"
	"strings"

	"github.com/example/cloud-provider-example/exampleapi"
)

// The rule evaluator: what a listener does with one request (or
// connection), from the load balancer as applied. The http-requests
// endpoint deals its requests by it (routing.go); the data plane will
// serve each request by it (docs/adr/0023-the-data-plane.md).

// decision is a listener's answer to one request.
type decision struct {
	status int
	// priority is the matching rule's (0: none matched, or the listener
	// has no rules).
	priority int
	location string
	// backends are the matching rule's backends whose pools have targets,
	// to be chosen among by weight (status 200 only).
	backends []exampleapi.RuleBackend
	// ownTargets: the listener has no rules and forwards to the load
	// balancer's own targets, or its pool's (status 200 only).
	ownTargets bool
	// headers are the request's headers as forwarded (http and https
	// listeners only).
	headers map[string]string
}

// poolTargets counts the targets of target pool id.
type poolTargets func(id string) (int, error)

// decide is how listener l of lb answers req (its Count aside).
func decide(lb exampleapi.LoadBalancer, l exampleapi.Listener, req exampleapi.SimulatedRequest, targets poolTargets) (decision, error) {
	host := strings.ToLower(req.Host)
	if h, _, err := net.SplitHostPort(host); err == nil {
		host = h
	}
	if l.RedirectToHTTPSPort != 0 {
		return decision{status: http.StatusMovedPermanently, location: location("https", host, l.RedirectToHTTPSPort, req.Path)}, nil
	}
	var rules []exampleapi.Rule
	for _, r := range lb.Rules {
		if rl, ok := listenerOn(lb.Listeners, r.ListenerPort, r.ListenerProtocol); ok && rl.Port == l.Port && rl.Protocol == l.Protocol {
			rules = append(rules, r)
		}
	}
	// Connections carry no HTTP headers to forward.
	headers := func(m *exampleapi.HeaderModifier) map[string]string {
		if !isHTTPListener(l) {
			return nil
		}
		return forwarded(req.Headers, m)
	}
	if len(rules) == 0 {
		has, err := hasTargets(lb, targets)
		if err != nil || !has {
			return decision{status: http.StatusServiceUnavailable}, err
		}
		return decision{status: http.StatusOK, ownTargets: true, headers: headers(nil)}, nil
	}
	slices.SortFunc(rules, func(a, b exampleapi.Rule) int { return cmp.Compare(a.Priority, b.Priority) })
	i := slices.IndexFunc(rules, func(r exampleapi.Rule) bool { return matches(r, host, req) })
	if i < 0 {
		return decision{status: http.StatusNotFound}, nil
	}
	r := rules[i]
	d := decision{priority: r.Priority}
	if rd := r.Redirect; rd != nil {
		scheme, port := rd.Scheme, rd.Port
		if scheme == "" {
			scheme = l.Protocol
		}
		if port == 0 {
			port = l.Port
			if rd.Scheme != "" {
				port = defaultPort(rd.Scheme)
			}
		}
		if rd.Hostname != "" {
			host = rd.Hostname
		}
		d.status, d.location = rd.StatusCode, location(scheme, host, port, req.Path)
		return d, nil
	}
	// The load balancer answers itself: no backend sees the request.
	if fr := r.FixedResponse; fr != nil {
		d.status = fr.StatusCode
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
			return decision{}, fmt.Errorf("rule %d of port %d: %w", r.Priority, l.Port, err)
		}
		if n > 0 {
			d.backends = append(d.backends, b)
		}
	}
	switch {
	case !weighed:
		d.status = http.StatusInternalServerError
	case len(d.backends) == 0:
		d.status = http.StatusServiceUnavailable
	default:
		d.status, d.headers = http.StatusOK, headers(r.RequestHeaders)
	}
	return d, nil
}

// hasTargets tells whether lb forwards anywhere without rules: its own
// targets or its pool's (a Gateway's load balancer has neither).
func hasTargets(lb exampleapi.LoadBalancer, targets poolTargets) (bool, error) {
	if lb.TargetPoolID == "" {
		return len(lb.Targets) > 0, nil
	}
	n, err := targets(lb.TargetPoolID)
	return n > 0, err
}
