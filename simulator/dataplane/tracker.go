package dataplane

import "sync"

// tracker holds the open connections (and in-flight requests) of each
// load balancer's targets, so a target that leaves without draining, or
// whose drain ends, has them closed.
type tracker struct {
	mu   sync.Mutex
	open map[trackKey]map[*tracked]struct{}
}

type trackKey struct{ lb, target string }

type tracked struct{ cancel func() }

// add tracks one connection to target of lb; cancel closes it. The
// connection calls done when it ends.
func (t *tracker) add(lb, target string, cancel func()) (done func()) {
	k, c := trackKey{lb, target}, &tracked{cancel: cancel}
	t.mu.Lock()
	if t.open == nil {
		t.open = map[trackKey]map[*tracked]struct{}{}
	}
	if t.open[k] == nil {
		t.open[k] = map[*tracked]struct{}{}
	}
	t.open[k][c] = struct{}{}
	t.mu.Unlock()
	return func() {
		t.mu.Lock()
		delete(t.open[k], c)
		if len(t.open[k]) == 0 {
			delete(t.open, k)
		}
		t.mu.Unlock()
	}
}

// sweep closes the connections of the targets keep refuses.
func (t *tracker) sweep(keep func(lb, target string) bool) {
	var cancel []func()
	t.mu.Lock()
	for k, cs := range t.open {
		if keep(k.lb, k.target) {
			continue
		}
		for c := range cs {
			cancel = append(cancel, c.cancel)
		}
	}
	t.mu.Unlock()
	for _, c := range cancel {
		c()
	}
}
