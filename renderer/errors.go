package renderer

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"
)

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
		name = fmt.Sprintf(" (%s)", e.Port)
	}
	return fmt.Sprintf("port %d%s: protocol %s is not supported by Example cloud load balancers (accepted: TCP, UDP)", e.Number, name, e.Protocol)
}

// TooManyListenersError is a Service with more ports than a load balancer
// may have listeners.
type TooManyListenersError struct {
	Ports, Limit int
}

func (e *TooManyListenersError) Error() string {
	return fmt.Sprintf("spec.ports: %d ports, but a load balancer has at most %d listeners "+
		"(loadBalancer.maxListeners in the cloud config; the Example cloud allows at most %d)", e.Ports, e.Limit, MaxListeners)
}
