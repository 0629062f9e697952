package annotations

import (
	"fmt"
	"net/netip"
	"strings"
	"sync/atomic"

	corev1 "k8s.io/api/core/v1"
)

// Service is a Service with its annotations read: what one reconcile
// passes on, so nothing on its path parses them again.
type Service struct {
	*corev1.Service
	// LB is what the annotations say; with Err set, the values that parsed.
	LB LoadBalancer
	// Err is every problem of the annotations (Parse's error), nil if none.
	Err error
}

// Read parses svc's annotations once, with spec.loadBalancerIP: the
// address annotation by IP when that is unset.
func Read(svc *corev1.Service) *Service {
	lb, err := Parse(svc.Annotations)
	if err == nil {
		err = loadBalancerIP(svc, &lb)
	}
	return &Service{Service: svc, LB: lb, Err: err}
}

// loadBalancerIP reads spec.loadBalancerIP (deprecated upstream, still
// widely used) into lb.Address, refusing one that says otherwise than the
// address annotation.
func loadBalancerIP(svc *corev1.Service, lb *LoadBalancer) error {
	v := strings.TrimSpace(svc.Spec.LoadBalancerIP)
	if v == "" {
		return nil
	}
	ip, err := netip.ParseAddr(v)
	if err != nil || ip.Zone() != "" {
		return &Error{Annotation: LBAddress, Value: svc.Annotations[string(LBAddress)], Reason: fmt.Sprintf("spec.loadBalancerIP %q is not an IP", Truncate(v))}
	}
	ip = ip.Unmap()
	switch {
	case lb.Internal:
		return &Error{Annotation: LBInternal, Value: svc.Annotations[string(LBInternal)],
			Reason: fmt.Sprintf("an internal load balancer takes its address from its network: spec.loadBalancerIP %s cannot be reserved for it", ip)}
	case lb.Address == "":
		lb.Address = ip.String()
	case lb.Address != ip.String():
		return &Error{Annotation: LBAddress, Value: svc.Annotations[string(LBAddress)],
			Reason: fmt.Sprintf("spec.loadBalancerIP names %s: set one of them, or the annotation to that IP", ip)}
	}
	return nil
}

// parses counts Parse's calls: the figure behind the test that a
// reconcile reads a Service's annotations once.
var parses atomic.Uint64

// Parses is how many times this process has parsed a Service's
// annotations.
func Parses() uint64 { return parses.Load() }

// Retains says whether the Service's load balancer is handed over rather
// than destroyed when the Service no longer needs it (LBDeletionPolicy).
// Read from the annotation itself when another annotation is invalid: a
// Service asking to keep its load balancer never loses it to a typo
// elsewhere.
func (s *Service) Retains() bool {
	if s.Err == nil {
		return s.LB.DeletionPolicy == DeletionRetain
	}
	return s.Annotations[string(LBDeletionPolicy)] == DeletionRetain
}
