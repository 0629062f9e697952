package simulator

import (
	"cmp"
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

// route is how listener l of lb answers req's requests: the decision
// for one, dealt over req.Count by weight.
func route(tx *bolt.Tx, lb exampleapi.LoadBalancer, l exampleapi.Listener, req exampleapi.SimulatedRequest) (exampleapi.RequestOutcome, error) {
	d, err := decide(lb, l, req, func(id string) (int, error) {
		tp, err := storedTargetPools.get(tx, id)
		return len(tp.Targets), err
	})
	if err != nil {
		return exampleapi.RequestOutcome{}, err
	}
	out := exampleapi.RequestOutcome{Status: d.status, RulePriority: d.priority, Location: d.location, RequestHeaders: d.headers}
	switch {
	case d.ownTargets:
		out.Backends = map[string]int{"targets": req.Count}
	case len(d.backends) > 0:
		out.Backends = share(d.backends, req.Count)
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
