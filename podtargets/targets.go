// Package podtargets decides which pods are the targets of a Service port
// when a load balancer reaches pods directly (a pool of target type ip,
// docs/adr/0024-pod-targets.md): the ready endpoints of the Service's
// EndpointSlices, each address through the tenant boundary, on the port
// the slices resolved for the Service port. It reads no API server and
// no cloud: the caller hands it what its informers hold.
package podtargets

import (
	"fmt"
	"net/netip"
	"slices"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"

	"github.com/example/cloud-provider-example/exampleapi"
)

// Source is what the decision reads besides the slices.
type Source struct {
	// Pod is the pod of the Service's namespace at ip, if any: a pod not
	// Ready yet is a target only while a readiness gate of this
	// controller holds it back (Gated).
	Pod func(ip string) (*corev1.Pod, bool)
	// Allow decides an address through the tenant boundary
	// (tenancy.PodTarget): "" allows, otherwise why not.
	Allow func(ip string) (reason string, err error)
}

// Targets are a Service port's pod targets.
type Targets struct {
	// Targets are IP:port (exampleapi.IPTarget), sorted, each once.
	Targets []string
	// Refused are the addresses left out by the boundary, each once, for
	// an event in the Service's namespace.
	Refused []Refusal
}

// Refusal is an address of an EndpointSlice that is not a target.
type Refusal struct {
	Slice, Address, Reason string
}

func (r Refusal) String() string {
	return fmt.Sprintf("EndpointSlice %s lists %s: %s", r.Slice, r.Address, r.Reason)
}

// For is the targets of port of svc from its EndpointSlices:
//   - only slices of svc (its namespace, its kubernetes.io/service-name
//     label) count, and only their IPv4 and IPv6 addresses;
//   - the port is what the slices resolved for the Service port (by name
//     and protocol), as kube-proxy reads it, the targetPort by name or
//     number;
//   - a terminating endpoint is no target (its pool drains it); a ready
//     one is, and so is one whose pod waits only for this controller's
//     readiness gate (Gated), or it never would be;
//   - every address passes src.Allow, or is refused.
func For(svc *corev1.Service, port corev1.ServicePort, eps []*discoveryv1.EndpointSlice, src Source) (Targets, error) {
	var out Targets
	seen, refused := map[string]bool{}, map[string]bool{}
	for _, s := range eps {
		if s.Namespace != svc.Namespace || s.Labels[discoveryv1.LabelServiceName] != svc.Name {
			continue
		}
		if s.AddressType != discoveryv1.AddressTypeIPv4 && s.AddressType != discoveryv1.AddressTypeIPv6 {
			continue
		}
		num, ok := slicePort(s, port)
		if !ok {
			continue
		}
		for _, e := range s.Endpoints {
			for _, a := range e.Addresses {
				ip, err := netip.ParseAddr(a)
				if err != nil || !included(e, a, src) {
					continue
				}
				if reason, err := src.Allow(ip.String()); err != nil {
					return Targets{}, fmt.Errorf("EndpointSlice %s/%s, address %s: %w", s.Namespace, s.Name, a, err)
				} else if reason != "" {
					if !refused[a] {
						refused[a] = true
						out.Refused = append(out.Refused, Refusal{Slice: s.Name, Address: a, Reason: reason})
					}
					continue
				}
				if t := exampleapi.IPTarget(ip, num); !seen[t] {
					seen[t] = true
					out.Targets = append(out.Targets, t)
				}
			}
		}
	}
	slices.Sort(out.Targets)
	return out, nil
}

// slicePort is the number slice s gives the Service port: the slice port
// of its name and protocol.
func slicePort(s *discoveryv1.EndpointSlice, port corev1.ServicePort) (int, bool) {
	proto := port.Protocol
	if proto == "" {
		proto = corev1.ProtocolTCP
	}
	for _, p := range s.Ports {
		pp := corev1.ProtocolTCP
		if p.Protocol != nil {
			pp = *p.Protocol
		}
		if deref(p.Name) == port.Name && pp == proto && p.Port != nil && *p.Port >= 1 && *p.Port <= 65535 {
			return int(*p.Port), true
		}
	}
	return 0, false
}

// included tells whether endpoint e (at address a) is a target by its
// conditions: not terminating, and ready or held back by a readiness gate
// of this controller alone. Unset conditions are ready (the API's rule).
func included(e discoveryv1.Endpoint, a string, src Source) bool {
	c := e.Conditions
	if c.Terminating != nil && *c.Terminating {
		return false
	}
	if c.Ready == nil || *c.Ready {
		return true
	}
	pod, ok := src.Pod(a)
	return ok && Gated(pod)
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}
