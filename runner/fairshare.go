package runner

import (
	"context"
	"slices"
	"sync"
)

// ClusterShare is the share of operations no namespace caused: the
// cluster-wide objects (the route set, the target pools). It is Job.Share's
// zero value.
const ClusterShare = ""

// fairSlots hands out the runner's slots fairly between shares (the
// namespaces that caused the work): a freed slot goes to the next share
// with waiters, round-robin, and within a share to its oldest waiter. One
// namespace flapping many Services then holds at most its turn of the
// slots, and another namespace's create waits for one slot to free, not
// behind the whole queue (one FIFO did that).
type fairSlots struct {
	mu   sync.Mutex
	size int
	// free are the idle slots, oldest first (a channel's order, so every
	// slot's provider server keeps being used).
	free []*slot
	// waiting holds each share's waiters, oldest first; only shares with
	// waiters have an entry.
	waiting map[string][]*slotWaiter
	// turns are the shares with waiters in the order they are served: a
	// share served goes to the back if it still waits, a share that starts
	// waiting joins at the back.
	turns []string
}

// slotWaiter is one operation waiting for a slot. s is set (under
// fairSlots.mu) when it is handed one, then ready is closed.
type slotWaiter struct {
	share string
	s     *slot
	ready chan struct{}
}

func newFairSlots(n int) *fairSlots {
	f := &fairSlots{size: n, waiting: map[string][]*slotWaiter{}}
	for i := range n {
		f.free = append(f.free, &slot{idx: i})
	}
	return f
}

// get waits for a slot for share. An error (ctx's) means no slot is held:
// a slot handed over as ctx ended is passed on to the next waiter.
func (f *fairSlots) get(ctx context.Context, share string) (*slot, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	f.mu.Lock()
	if len(f.free) > 0 { // nobody waits while a slot is free (put hands it over)
		s := f.free[0]
		f.free = slices.Delete(f.free, 0, 1)
		f.mu.Unlock()
		return s, nil
	}
	w := &slotWaiter{share: share, ready: make(chan struct{})}
	if len(f.waiting[share]) == 0 {
		f.turns = append(f.turns, share)
	}
	f.waiting[share] = append(f.waiting[share], w)
	f.mu.Unlock()

	select {
	case <-w.ready:
		return w.s, nil
	case <-ctx.Done():
	}
	f.mu.Lock()
	if s := w.s; s != nil { // handed a slot as ctx ended: not lost, passed on
		f.mu.Unlock()
		f.put(s)
		return nil, ctx.Err()
	}
	f.remove(w)
	f.mu.Unlock()
	return nil, ctx.Err()
}

// put returns a slot: to the waiter whose share's turn it is, else to
// the free ones.
func (f *fairSlots) put(s *slot) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if len(f.turns) == 0 {
		f.free = append(f.free, s)
		return
	}
	share := f.turns[0]
	f.turns = slices.Delete(f.turns, 0, 1)
	q := f.waiting[share]
	w := q[0]
	if q = slices.Delete(q, 0, 1); len(q) == 0 {
		delete(f.waiting, share)
	} else {
		f.waiting[share] = q
		f.turns = append(f.turns, share)
	}
	w.s = s
	close(w.ready)
}

// remove takes a waiter that gave up out of its share's queue, and the
// share out of the turns if it has no waiter left (f.mu held).
func (f *fairSlots) remove(w *slotWaiter) {
	q := f.waiting[w.share]
	i := slices.Index(q, w)
	if i < 0 {
		return
	}
	if q = slices.Delete(q, i, i+1); len(q) > 0 {
		f.waiting[w.share] = q
		return
	}
	delete(f.waiting, w.share)
	if t := slices.Index(f.turns, w.share); t >= 0 {
		f.turns = slices.Delete(f.turns, t, t+1)
	}
}

// waiters counts the operations waiting, by share.
func (f *fairSlots) waiters() map[string]int {
	f.mu.Lock()
	defer f.mu.Unlock()
	out := make(map[string]int, len(f.waiting))
	for share, q := range f.waiting {
		out[share] = len(q)
	}
	return out
}
