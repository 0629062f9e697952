package runner

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/example/cloud-provider-example/internal/testkit"
)

// waitFor polls until the scheduler has want waiters in total, so a test
// knows the order in which its goroutines queued.
func waitFor(t *testing.T, f *fairSlots, want int) {
	t.Helper()
	testkit.EventuallyEvery(t, 5*time.Second, time.Millisecond, fmt.Sprintf("%d waiters in all", want), func() error {
		n := 0
		for _, c := range f.waiters() {
			n += c
		}
		if n != want {
			return fmt.Errorf("waiters: %v", f.waiters())
		}
		return nil
	})
}

// queue starts a waiter for share and waits until it is queued; got
// receives its name once it holds a slot.
func queue(t *testing.T, f *fairSlots, wg *sync.WaitGroup, got chan<- string, share, name string, queued int) {
	t.Helper()
	wg.Go(func() {
		s, err := f.get(context.Background(), share)
		if err != nil {
			t.Error(err)
			return
		}
		got <- name
		f.put(s)
	})
	waitFor(t, f, queued)
}

// servedOrder puts the held slot back and returns the names of the queued
// waiters in the order they were served.
func servedOrder(f *fairSlots, held *slot, wg *sync.WaitGroup, got chan string) []string {
	f.put(held)
	wg.Wait()
	close(got)
	var order []string
	for name := range got {
		order = append(order, name)
	}
	return order
}

func TestFairSlotsFreeFirst(t *testing.T) {
	f := newFairSlots(2)
	a, err := f.get(context.Background(), "a")
	if err != nil {
		t.Fatal(err)
	}
	b, err := f.get(context.Background(), "a")
	if err != nil || a == b {
		t.Fatalf("second slot: %v, %v (same as the first: %t)", b, err, a == b)
	}
	f.put(a)
	f.put(b)
	if len(f.free) != 2 || len(f.turns) != 0 || len(f.waiting) != 0 {
		t.Fatalf("after put: free %d, turns %v, waiting %v", len(f.free), f.turns, f.waiters())
	}
}

// One slot, held; share a queues four, then b one and the cluster share
// one: b and the cluster are served after a's first, not after all of a's.
func TestFairSlotsSecondShareServedBeforeBusyQueue(t *testing.T) {
	f := newFairSlots(1)
	held, err := f.get(context.Background(), "a")
	if err != nil {
		t.Fatal(err)
	}
	got := make(chan string, 10)
	var wg sync.WaitGroup
	n := 0
	for i := range 4 {
		n++
		queue(t, f, &wg, got, "a", fmt.Sprintf("a%d", i), n)
	}
	n++
	queue(t, f, &wg, got, "b", "b0", n)
	n++
	queue(t, f, &wg, got, ClusterShare, "cluster0", n)
	order := servedOrder(f, held, &wg, got)
	want := []string{"a0", "b0", "cluster0", "a1", "a2", "a3"}
	if fmt.Sprint(order) != fmt.Sprint(want) {
		t.Fatalf("served %v, want %v", order, want)
	}
	if len(f.free) != 1 {
		t.Fatalf("free slots %d, want 1", len(f.free))
	}
}

// Round-robin between two busy shares, FIFO within each.
func TestFairSlotsRoundRobin(t *testing.T) {
	f := newFairSlots(1)
	held, _ := f.get(context.Background(), "a")
	got := make(chan string, 10)
	var wg sync.WaitGroup
	n := 0
	for _, q := range []struct{ share, name string }{{"a", "a0"}, {"a", "a1"}, {"a", "a2"}, {"b", "b0"}, {"b", "b1"}} {
		n++
		queue(t, f, &wg, got, q.share, q.name, n)
	}
	order := servedOrder(f, held, &wg, got)
	if want := []string{"a0", "b0", "a1", "b1", "a2"}; fmt.Sprint(order) != fmt.Sprint(want) {
		t.Fatalf("served %v, want %v", order, want)
	}
}

// A waiter whose context ends leaves the queue; others keep their place,
// and its share's turn goes when it was the last.
func TestFairSlotsCancelLeavesQueue(t *testing.T) {
	f := newFairSlots(1)
	held, _ := f.get(context.Background(), "a")
	ctx, cancel := context.WithCancel(context.Background())
	errc := make(chan error, 1)
	go func() {
		_, err := f.get(ctx, "b")
		errc <- err
	}()
	waitFor(t, f, 1)
	got := make(chan string, 10)
	var wg sync.WaitGroup
	queue(t, f, &wg, got, "a", "a0", 2)
	cancel()
	if err := <-errc; !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled get: %v", err)
	}
	if w := f.waiters(); w["b"] != 0 || w["a"] != 1 || len(f.turns) != 1 {
		t.Fatalf("after cancel: waiters %v, turns %q", w, f.turns)
	}
	f.put(held)
	wg.Wait()
	if name := <-got; name != "a0" {
		t.Fatalf("served %s", name)
	}
	if len(f.free) != 1 {
		t.Fatalf("free slots %d, want 1", len(f.free))
	}
}

// Many waiters, some cancelled at random moments (also as they are
// handed a slot): every slot comes back, none is handed twice. Run with
// -race.
func TestFairSlotsCancelDoesNotLeak(t *testing.T) {
	const slots, workers = 3, 40
	f := newFairSlots(slots)
	var (
		mu     sync.Mutex
		inUse  = map[*slot]bool{}
		served int
	)
	var wg sync.WaitGroup
	for i := range workers {
		wg.Go(func() {
			for j := range 50 {
				ctx, cancel := context.WithCancel(context.Background())
				if (i+j)%3 == 0 {
					// Cancelled while waiting, or just as a slot arrives.
					time.AfterFunc(time.Duration(j%4)*50*time.Microsecond, cancel)
				}
				s, err := f.get(ctx, fmt.Sprintf("ns%d", i%5))
				cancel()
				if err != nil {
					if !errors.Is(err, context.Canceled) {
						t.Error(err)
					}
					continue
				}
				mu.Lock()
				if inUse[s] {
					t.Errorf("slot %d handed out twice", s.idx)
				}
				inUse[s] = true
				served++
				mu.Unlock()
				time.Sleep(20 * time.Microsecond)
				mu.Lock()
				delete(inUse, s)
				mu.Unlock()
				f.put(s)
			}
		})
	}
	wg.Wait()
	if len(f.free) != slots || len(f.turns) != 0 || len(f.waiting) != 0 {
		t.Fatalf("after all: free %d of %d, turns %q, waiting %v", len(f.free), slots, f.turns, f.waiters())
	}
	if served == 0 {
		t.Fatal("nothing served")
	}
	// Every slot can still be taken at once.
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	for range slots {
		if _, err := f.get(ctx, "x"); err != nil {
			t.Fatalf("slot lost: %v", err)
		}
	}
}

// A context already ended takes no slot even when one is free.
func TestFairSlotsDoneContext(t *testing.T) {
	f := newFairSlots(1)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := f.get(ctx, "a"); !errors.Is(err, context.Canceled) {
		t.Fatalf("get: %v", err)
	}
	if len(f.free) != 1 {
		t.Fatalf("free slots %d, want 1", len(f.free))
	}
}
