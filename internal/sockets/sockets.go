// Package sockets keeps a set of listening sockets bound to what is
// wanted, as the simulator's data plane (one per load balancer listener
// address) and the test cluster's nodes (one per node port) do.
package sockets

import "fmt"

// Set is the sockets bound now, by key; the zero value is ready. It is
// not safe for concurrent use.
type Set[K comparable] struct {
	open   map[K]func()
	failed map[K]bool
}

// Reconcile closes the sockets want does not have, then binds those it
// lacks (a key whose socket changes kind closes and binds again in one
// call). A failed bind is reported once, by failed, until it succeeds;
// every failure of this call is returned, and tried again by the next.
func (s *Set[K]) Reconcile(want map[K]bool, bind func(K) (closeFn func(), err error), failed func(K, error)) []error {
	if s.open == nil {
		s.open, s.failed = map[K]func(){}, map[K]bool{}
	}
	for k, closeFn := range s.open {
		if !want[k] {
			closeFn()
			delete(s.open, k)
		}
	}
	for k := range s.failed {
		if !want[k] {
			delete(s.failed, k) // wanted again, a failure is said again
		}
	}
	var errs []error
	for k := range want {
		if _, ok := s.open[k]; ok {
			continue
		}
		closeFn, err := bind(k)
		if err != nil {
			if !s.failed[k] {
				failed(k, err)
			}
			s.failed[k] = true
			errs = append(errs, fmt.Errorf("%v: %w", k, err))
			continue
		}
		delete(s.failed, k)
		s.open[k] = closeFn
	}
	return errs
}

// Keys are the keys of the sockets bound now.
func (s *Set[K]) Keys() []K {
	out := make([]K, 0, len(s.open))
	for k := range s.open {
		out = append(out, k)
	}
	return out
}

// CloseAll closes every socket.
func (s *Set[K]) CloseAll() { s.Reconcile(nil, nil, nil) }
