package annotations

import (
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

// Read parses svc's annotations once.
func Read(svc *corev1.Service) *Service {
	lb, err := Parse(svc.Annotations)
	return &Service{Service: svc, LB: lb, Err: err}
}

// parses counts Parse's calls: the figure behind the test that a
// reconcile reads a Service's annotations once.
var parses atomic.Uint64

// Parses is how many times this process has parsed a Service's
// annotations.
func Parses() uint64 { return parses.Load() }
