package simulator

import (
	"cmp"
	"fmt"
	"net"
	"net/http"
	"slices"
	"strconv"
	"strings"

	bolt "go.etcd.io/bbolt"

	"github.com/example/cloud-provider-example/exampleapi"
)

// Simulated requests: a load balancer's http(s) listener answers them by
// its rules, so tests see which backend a Gateway's routes send a request
// to; a tcp, udp or tls listener takes them as connections (a tls one
// routing by the SNI name in Host). Nothing is stored; a real cloud has no
// such endpoint.

func (s *Server) handleSimulateRequests(w http.ResponseWriter, r *http.Request) {
	var req exampleapi.SimulatedRequest
	if _, ok := s.decode(w, r, &req); !ok {
		return
	}
	if err := validateSimulatedRequest(&req); err != nil {
		s.fail(w, err)
		return
	}
	out, err := s.cloud.simulateRequests(r.PathValue("id"), req)
	if err != nil {
		s.fail(w, err)
		return
	}
	writeJSON(w, http.StatusOK, out)
}

// validateSimulatedRequest checks req and fills its count; the path and
// method defaults are the http(s) listener's (requestListener).
func validateSimulatedRequest(req *exampleapi.SimulatedRequest) error {
	if req.Count == 0 {
		req.Count = 1
	}
	if err := validateRange("count", req.Count, 1, exampleapi.MaxSimulatedRequests); err != nil {
		return err
	}
	if err := validateRange("listener_port", req.ListenerPort, 1, 65535); err != nil {
		return err
	}
	if req.Protocol != "" {
		if err := oneOf("protocol", "protocol", req.Protocol, exampleapi.ListenerProtocols); err != nil {
			return err
		}
	}
	if req.Method != "" {
		if err := oneOf("method", "method", req.Method, exampleapi.RuleMethods); err != nil {
			return err
		}
	}
	if req.Path != "" && !strings.HasPrefix(req.Path, "/") {
		return invalid("path", "%q must start with /", req.Path)
	}
	seen := map[string]string{}
	for name := range req.Headers {
		if !exampleapi.IsHeaderName(name) {
			return invalid("headers", "%q is not a header name", name)
		}
		c := http.CanonicalHeaderKey(name)
		if other, dup := seen[c]; dup {
			return invalid("headers", "%q and %q are one header (names are case insensitive)", name, other)
		}
		seen[c] = name
	}
	return nil
}

// simulateRequests answers req on load balancer id's listener.
func (c *cloud) simulateRequests(id string, req exampleapi.SimulatedRequest) (exampleapi.RequestOutcome, error) {
	return viewObject(c, func(tx *bolt.Tx) (exampleapi.RequestOutcome, error) {
		rec, err := storedLBs.get(tx, id)
		if err != nil {
			return exampleapi.RequestOutcome{}, err
		}
		lb := rec.view(c.now())
		if lb.Status != exampleapi.LBStatusActive {
			return exampleapi.RequestOutcome{}, conflict("load balancer %s is %s: it answers no requests", id, lb.Status)
		}
		l, err := requestListener(lb, &req)
		if err != nil {
			return exampleapi.RequestOutcome{}, err
		}
		return route(tx, lb, l, req)
	})
}

// requestListener is the listener of lb req goes to. For an http(s) one
// it fills req's path and method defaults; a connection to any other has
// neither, nor headers.
func requestListener(lb exampleapi.LoadBalancer, req *exampleapi.SimulatedRequest) (exampleapi.Listener, error) {
	l, err := pickListener(lb.Listeners, req.ListenerPort, req.Protocol, "listener_port", "protocol", "load balancer "+lb.ID)
	if err != nil {
		return l, err
	}
	if isHTTPListener(l) {
		req.Path, req.Method = cmp.Or(req.Path, "/"), cmp.Or(req.Method, http.MethodGet)
		return l, nil
	}
	field := ""
	switch {
	case req.Path != "":
		field = "path"
	case req.Method != "":
		field = "method"
	case len(req.Headers) > 0:
		field = "headers"
	default:
		return l, nil
	}
	return l, invalid(field, "a connection to listener %s/%d has none: only http and https listeners take HTTP requests", l.Protocol, l.Port)
}

// route is how listener l of lb answers req.
func route(tx *bolt.Tx, lb exampleapi.LoadBalancer, l exampleapi.Listener, req exampleapi.SimulatedRequest) (exampleapi.RequestOutcome, error) {
	host := strings.ToLower(req.Host)
	if h, _, err := net.SplitHostPort(host); err == nil {
		host = h
	}
	if l.RedirectToHTTPSPort != 0 {
		return exampleapi.RequestOutcome{Status: http.StatusMovedPermanently,
			Location: location("https", host, l.RedirectToHTTPSPort, req.Path)}, nil
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
		has, err := hasTargets(tx, lb)
		if err != nil || !has {
			return exampleapi.RequestOutcome{Status: http.StatusServiceUnavailable}, err
		}
		return exampleapi.RequestOutcome{Status: http.StatusOK, Backends: map[string]int{"targets": req.Count},
			RequestHeaders: headers(nil)}, nil
	}
	slices.SortFunc(rules, func(a, b exampleapi.Rule) int { return cmp.Compare(a.Priority, b.Priority) })
	i := slices.IndexFunc(rules, func(r exampleapi.Rule) bool { return matches(r, host, req) })
	if i < 0 {
		return exampleapi.RequestOutcome{Status: http.StatusNotFound}, nil
	}
	r := rules[i]
	out := exampleapi.RequestOutcome{RulePriority: r.Priority}
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
		out.Status, out.Location = rd.StatusCode, location(scheme, host, port, req.Path)
		return out, nil
	}
	// The load balancer answers itself: no backend sees the request.
	if fr := r.FixedResponse; fr != nil {
		out.Status = fr.StatusCode
		return out, nil
	}
	var serving []exampleapi.RuleBackend
	weighed := false
	for _, b := range r.Backends {
		if b.Weight == 0 {
			continue
		}
		weighed = true
		tp, err := storedTargetPools.get(tx, b.TargetPoolID)
		if err != nil {
			return exampleapi.RequestOutcome{}, fmt.Errorf("rule %d of port %d: %w", r.Priority, l.Port, err)
		}
		if len(tp.Targets) > 0 {
			serving = append(serving, b)
		}
	}
	switch {
	case !weighed:
		out.Status = http.StatusInternalServerError
	case len(serving) == 0:
		out.Status = http.StatusServiceUnavailable
	default:
		out.Status, out.Backends, out.RequestHeaders = http.StatusOK, share(serving, req.Count), headers(r.RequestHeaders)
	}
	return out, nil
}

// matches tells whether every condition of r holds for req to host.
func matches(r exampleapi.Rule, host string, req exampleapi.SimulatedRequest) bool {
	if len(r.Hostnames) > 0 && !slices.ContainsFunc(r.Hostnames, func(h string) bool { return hostMatches(h, host) }) {
		return false
	}
	switch r.PathType {
	case exampleapi.PathExact:
		if req.Path != r.Path {
			return false
		}
	case exampleapi.PathPrefix:
		p := strings.TrimSuffix(r.Path, "/")
		if p != "" && req.Path != p && !strings.HasPrefix(req.Path, p+"/") {
			return false
		}
	}
	if r.Method != "" && r.Method != req.Method {
		return false
	}
	for _, h := range r.Headers {
		if v, ok := header(req.Headers, h.Name); !ok || v != h.Value {
			return false
		}
	}
	return true
}

// hostMatches: a name matches itself; "*.example.com" matches a name of
// one or more labels before ".example.com".
func hostMatches(pattern, host string) bool {
	if suffix, ok := strings.CutPrefix(pattern, "*"); ok {
		return len(host) > len(suffix) && strings.HasSuffix(host, suffix)
	}
	return host == pattern
}

// header is the value of the header called name (any case) in hs.
func header(hs map[string]string, name string) (string, bool) {
	for k, v := range hs {
		if strings.EqualFold(k, name) {
			return v, true
		}
	}
	return "", false
}

// forwarded are the request's headers after m, by canonical name.
func forwarded(in map[string]string, m *exampleapi.HeaderModifier) map[string]string {
	out := make(map[string]string, len(in))
	for k, v := range in {
		out[http.CanonicalHeaderKey(k)] = v
	}
	if m == nil {
		return out
	}
	for _, h := range m.Set {
		out[http.CanonicalHeaderKey(h.Name)] = h.Value
	}
	for _, h := range m.Add {
		k := http.CanonicalHeaderKey(h.Name)
		if v, ok := out[k]; ok {
			out[k] = v + ", " + h.Value
		} else {
			out[k] = h.Value
		}
	}
	for _, name := range m.Remove {
		delete(out, http.CanonicalHeaderKey(name))
	}
	return out
}

// share deals n requests over backends by weight, with smooth weighted
// round robin: 100 requests at 80/20 are exactly 80 and 20.
func share(backends []exampleapi.RuleBackend, n int) map[string]int {
	out := map[string]int{}
	current := make([]int, len(backends))
	total := 0
	for _, b := range backends {
		total += b.Weight
	}
	for range n {
		best := 0
		for i, b := range backends {
			current[i] += b.Weight
			if current[i] > current[best] {
				best = i
			}
		}
		current[best] -= total
		b := backends[best]
		out[b.TargetPoolID+":"+strconv.Itoa(b.Port)]++
	}
	return out
}

func defaultPort(scheme string) int {
	if scheme == "https" {
		return 443
	}
	return 80
}

// location is a redirect's URL; the port is left out when it is the
// scheme's default.
func location(scheme, host string, port int, path string) string {
	if port == defaultPort(scheme) {
		return scheme + "://" + host + path
	}
	return scheme + "://" + net.JoinHostPort(host, strconv.Itoa(port)) + path
}

// hasTargets tells whether lb forwards anywhere without rules: its own
// targets or its pool's (a Gateway's load balancer has neither).
func hasTargets(tx *bolt.Tx, lb exampleapi.LoadBalancer) (bool, error) {
	if lb.TargetPoolID == "" {
		return len(lb.Targets) > 0, nil
	}
	tp, err := storedTargetPools.get(tx, lb.TargetPoolID)
	return len(tp.Targets) > 0, err
}
