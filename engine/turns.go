package engine

import (
	"context"
	"sync"
)

// turns lets one reconcile of an object run at a time. The runner locks a
// workspace for each terraform run only: between an approved plan's fresh
// plan and its apply, a second reconcile of the same object (the TLS
// resync beside the service controller, a drift check) would plan, then
// apply the same saved plan again and find it spent.
type turns struct {
	mu sync.Mutex
	m  map[string]*turn
}

// turn is one object's: a token held by the reconcile that runs, and how
// many want it (the entry goes with the last of them).
type turn struct {
	token chan struct{}
	users int
}

// take waits for key's turn, or for ctx; release ends it.
func (t *turns) take(ctx context.Context, key string) (release func(), err error) {
	t.mu.Lock()
	if t.m == nil {
		t.m = map[string]*turn{}
	}
	tn := t.m[key]
	if tn == nil {
		tn = &turn{token: make(chan struct{}, 1)}
		t.m[key] = tn
	}
	tn.users++
	t.mu.Unlock()

	select {
	case tn.token <- struct{}{}:
		return func() { <-tn.token; t.leave(key, tn) }, nil
	case <-ctx.Done():
		t.leave(key, tn)
		return nil, ctx.Err()
	}
}

func (t *turns) leave(key string, tn *turn) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if tn.users--; tn.users == 0 {
		delete(t.m, key)
	}
}

// len is how many objects have a reconcile running or waiting.
func (t *turns) len() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	return len(t.m)
}
