package simulator

import (
	"cmp"
	"net/http"
	"net/url"
	"strings"

	bolt "go.etcd.io/bbolt"

	"github.com/example/cloud-provider-example/exampleapi"
	"github.com/example/cloud-provider-example/simulator/routing"
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
	s.answer(w, out, err)
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
	if _, err := url.ParseQuery(req.Query); err != nil {
		return invalid("query", "%q is not a query string (name=value pairs joined by &): %v", req.Query, err)
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
	if routing.IsHTTP(l) {
		req.Path, req.Method = cmp.Or(req.Path, "/"), cmp.Or(req.Method, http.MethodGet)
		return l, nil
	}
	field := ""
	switch {
	case req.Path != "":
		field = "path"
	case req.Query != "":
		field = "query"
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
	sets, err := ruleSetsOf(tx, lb.ID)
	if err != nil {
		return exampleapi.RequestOutcome{}, err
	}
	d, err := routing.Decide(lb, sets, l, req, func(id string) (int, error) {
		tp, err := storedTargetPools.get(tx, id)
		return len(tp.Targets), err
	})
	if err != nil {
		return exampleapi.RequestOutcome{}, err
	}
	out := exampleapi.RequestOutcome{Status: d.Status, RulePriority: d.Priority, Rule: d.Rule, RuleSet: d.RuleSet,
		Location: d.Location, RequestHeaders: d.Headers,
		RequestHost: d.RewriteHost, RequestPath: d.RewritePath}
	switch {
	case d.OwnTargets:
		out.Backends = map[string]int{"targets": req.Count}
	case len(d.Backends) > 0:
		out.Backends = routing.Share(d.Backends, req.Count)
	}
	return out, nil
}
