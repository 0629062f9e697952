package servicemodel

import (
	"fmt"
	"strconv"

	corev1 "k8s.io/api/core/v1"

	"github.com/example/cloud-provider-example/exampleapi"
)

// The texts of these errors reach Service events, plan records, logs and
// examplectl's terminal; what a tenant wrote in them (a port's name, a
// protocol, a value) is quoted or escaped, never shown raw: no escape
// sequence, carriage return or bidi control of theirs reaches a reader.

// UnsupportedProtocolError is a Service port whose protocol the load
// balancer cannot carry (only TCP and UDP are).
type UnsupportedProtocolError struct {
	Port     string // port name, may be empty
	Number   int32
	Protocol corev1.Protocol
}

func (e *UnsupportedProtocolError) Error() string {
	name := ""
	if e.Port != "" {
		name = fmt.Sprintf(" (%s)", quoteUnlessName(e.Port))
	}
	return fmt.Sprintf("port %d%s: protocol %s is not supported by Example cloud load balancers (accepted: TCP, UDP)",
		e.Number, name, quoteUnlessName(string(e.Protocol)))
}

// TooManyListenersError is a Service with more ports than a load balancer
// may have listeners.
type TooManyListenersError struct {
	Ports, Limit int
}

func (e *TooManyListenersError) Error() string {
	return fmt.Sprintf("spec.ports: %d ports, but a load balancer has at most %d listeners "+
		"(loadBalancer.maxListeners in the cloud config; the Example cloud allows at most %d)", e.Ports, e.Limit, exampleapi.MaxListeners)
}

// quoteUnlessName is s as it is when it reads as a name (ASCII letters,
// digits, '-', '.', '_': what the API server accepts as a port name or a
// protocol), else quoted in Go syntax, its controls escaped: a value that
// is not a name cannot pass for the message around it.
func quoteUnlessName(s string) string {
	if s == "" {
		return `""`
	}
	for _, r := range s {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '.' || r == '_') {
			return strconv.Quote(s)
		}
	}
	return s
}
