package simulator

import (
	"fmt"
	"strings"

	"github.com/example/cloud-provider-example/exampleapi"
	"github.com/example/cloud-provider-example/simulator/routing"
)

// Rules of tcp, udp and tls listeners (exampleapi/rules.go): these see
// connections, not HTTP requests. A port may have two listeners, a udp one
// and one of the TCP ports, so a rule (and a simulated connection) names
// its listener by port and, where that is not enough, protocol.

// pickListener is routing.ListenerOn, or a 400 on portField when the port has
// no listener, on protocolField when it has none of protocol; what
// introduces the listeners in the message (e.g. "the load balancer").
func pickListener(ls []exampleapi.Listener, port int, protocol, portField, protocolField, what string) (exampleapi.Listener, error) {
	if l, ok := routing.ListenerOn(ls, port, protocol); ok {
		return l, nil
	}
	var have []string
	for _, l := range ls {
		if l.Port == port {
			have = append(have, fmt.Sprintf("%s/%d", l.Protocol, l.Port))
		}
	}
	if len(have) == 0 {
		return exampleapi.Listener{}, invalid(portField, "%s has no listener on port %d", what, port)
	}
	return exampleapi.Listener{}, invalid(protocolField, "%s has no %s listener on port %d (only %s)", what, protocol, port, strings.Join(have, " and "))
}

// validateL4Rule checks rule r of listener l against what l sees: a tls
// listener matches only host names, against the SNI name; tcp and udp
// have nothing to match, so their rules have no conditions. Neither sees
// an HTTP request, so both only forward: no redirect, no fixed response,
// no header changes, no rewrite, no timeouts or retry, no session
// persistence, no backend protocol.
func validateL4Rule(f string, l exampleapi.Listener, r exampleapi.Rule) error {
	if routing.IsHTTP(l) {
		return nil
	}
	on := fmt.Sprintf("is not allowed on listener %s/%d", l.Protocol, l.Port)
	why := "tcp and udp rules have no conditions: the rule of lowest priority takes every connection"
	if l.Protocol == exampleapi.ProtocolTLS {
		why = "a tls listener passes TLS through and matches only hostnames, against the SNI name"
	}
	switch {
	case len(r.Hostnames) > 0 && l.Protocol != exampleapi.ProtocolTLS:
		return invalid(f+".hostnames", "%s: %s", on, why)
	case r.PathType != "":
		return invalid(f+".path_type", "%s: %s", on, why)
	case r.Path != "":
		return invalid(f+".path", "%s: %s", on, why)
	case r.Method != "":
		return invalid(f+".method", "%s: %s", on, why)
	case len(r.Headers) > 0:
		return invalid(f+".headers", "%s: %s", on, why)
	case len(r.QueryParams) > 0:
		return invalid(f+".query_params", "%s: %s", on, why)
	case r.Redirect != nil:
		return invalid(f+".redirect", "%s: it forwards connections to backends and cannot answer them", on)
	case r.FixedResponse != nil:
		return invalid(f+".fixed_response", "%s: it forwards connections to backends and cannot answer them", on)
	case r.RequestHeaders != nil:
		return invalid(f+".request_headers", "%s: a connection through it has no HTTP headers to change", on)
	case r.ResponseHeaders != nil:
		return invalid(f+".response_headers", "%s: a connection through it has no HTTP headers to change", on)
	case r.Rewrite != nil:
		return invalid(f+".rewrite", "%s: a connection through it has no HTTP request to rewrite", on)
	case r.Timeouts != nil:
		return invalid(f+".timeouts", "%s: a connection through it has no HTTP request to time", on)
	case r.Retry != nil:
		return invalid(f+".retry", "%s: a connection through it has no HTTP request to send again", on)
	case r.CORS != nil:
		return invalid(f+".cors", "%s: a connection through it has no HTTP request to answer for a browser", on)
	case r.SessionPersistence != nil:
		return invalid(f+".session_persistence", "%s: a connection through it has no HTTP answer to carry a session token", on)
	}
	for k, b := range r.Backends {
		switch {
		case b.Protocol != "":
			return invalid(fmt.Sprintf("%s.backends[%d].protocol", f, k), "%s: it forwards connections as they come, in no HTTP version of its choosing", on)
		case b.TLS != nil:
			return invalid(fmt.Sprintf("%s.backends[%d].tls", f, k), "%s: it forwards connections as they come, and re-encrypts none", on)
		}
	}
	return nil
}
