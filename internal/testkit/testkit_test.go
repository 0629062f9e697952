package testkit

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"sync"
	"testing"
	"time"
)

// fakeTB records what a helper reports. Fatal ends the calling goroutine
// as testing's does, so code after a failed helper does not run. Methods
// it does not define are those of a nil TB: a helper calling one panics.
type fakeTB struct {
	testing.TB
	ctx context.Context

	mu       sync.Mutex
	fatals   []string
	cleanups []func()
}

func (f *fakeTB) Helper() {}

func (f *fakeTB) Fatal(args ...any) { f.fatal(fmt.Sprint(args...)) }

func (f *fakeTB) Fatalf(format string, args ...any) { f.fatal(fmt.Sprintf(format, args...)) }

func (f *fakeTB) fatal(msg string) {
	f.mu.Lock()
	f.fatals = append(f.fatals, msg)
	f.mu.Unlock()
	runtime.Goexit()
}

func (f *fakeTB) Context() context.Context { return f.ctx }

func (f *fakeTB) Cleanup(fn func()) { f.cleanups = append(f.cleanups, fn) }

// run calls helper with a fakeTB in a goroutine of its own, as testing
// runs a test, and returns the fake and whether helper returned (rather
// than ended at a Fatal).
func run(t *testing.T, helper func(tb testing.TB)) (*fakeTB, bool) {
	t.Helper()
	f := &fakeTB{ctx: t.Context()}
	returned := false
	done := make(chan struct{})
	go func() {
		defer close(done)
		helper(f)
		returned = true
	}()
	<-done
	return f, returned
}

func TestMust(t *testing.T) {
	f, returned := run(t, func(tb testing.TB) { Must(tb, nil) })
	if !returned || len(f.fatals) != 0 {
		t.Errorf("Must(nil): returned %v, fatals %q; want it to pass", returned, f.fatals)
	}
	f, returned = run(t, func(tb testing.TB) { Must(tb, errors.New("boom")) })
	if returned || len(f.fatals) != 1 || f.fatals[0] != "boom" {
		t.Errorf("Must(boom): returned %v, fatals %q; want one Fatal, boom", returned, f.fatals)
	}
}

func TestMustValue(t *testing.T) {
	var got int
	f, returned := run(t, func(tb testing.TB) { got = MustValue(tb, 42, nil) })
	if !returned || got != 42 || len(f.fatals) != 0 {
		t.Errorf("MustValue(42, nil) = %d: returned %v, fatals %q", got, returned, f.fatals)
	}
	got = 0
	f, returned = run(t, func(tb testing.TB) { got = MustValue(tb, 7, errors.New("boom")) })
	if returned || got != 0 || len(f.fatals) != 1 || f.fatals[0] != "boom" {
		t.Errorf("MustValue(7, boom) = %d: returned %v, fatals %q; want one Fatal, boom", got, returned, f.fatals)
	}
}

// Context has the deadline, and ends with the test's context or at the
// test's clean-up, whichever comes first.
func TestContext(t *testing.T) {
	parent, cancelParent := context.WithCancel(context.Background())
	defer cancelParent()
	f := &fakeTB{ctx: parent}
	ctx := Context(f)
	deadline, ok := ctx.Deadline()
	if left := time.Until(deadline); !ok || left > ContextTimeout || left < ContextTimeout-time.Minute {
		t.Errorf("deadline in %s (set: %v), want about %s", left, ok, ContextTimeout)
	}
	if ctx.Err() != nil || len(f.cleanups) != 1 {
		t.Fatalf("new context: err %v, %d clean-ups; want live, one", ctx.Err(), len(f.cleanups))
	}
	f.cleanups[0]()
	if ctx.Err() == nil {
		t.Error("context live after the test's clean-up")
	}

	ctx = Context(f)
	cancelParent()
	if !errors.Is(ctx.Err(), context.Canceled) {
		t.Errorf("context after the test's context ended: %v, want canceled", ctx.Err())
	}
}

// Eventually checks at once, and returns as soon as the check passes.
func TestEventuallyPasses(t *testing.T) {
	calls := 0
	began := time.Now()
	f, returned := run(t, func(tb testing.TB) {
		Eventually(tb, 10*time.Second, "first try", func() error { calls++; return nil })
	})
	if !returned || len(f.fatals) != 0 || calls != 1 || time.Since(began) > PollInterval/2 {
		t.Errorf("passing at once: returned %v, fatals %q, %d calls in %s", returned, f.fatals, calls, time.Since(began))
	}

	calls = 0
	f, returned = run(t, func(tb testing.TB) {
		EventuallyEvery(tb, 10*time.Second, time.Millisecond, "third try", func() error {
			if calls++; calls < 3 {
				return fmt.Errorf("try %d", calls)
			}
			return nil
		})
	})
	if !returned || len(f.fatals) != 0 || calls != 3 {
		t.Errorf("passing at the third try: returned %v, fatals %q, %d calls", returned, f.fatals, calls)
	}
}

// Eventually fails once timeout passes, naming what and the last error,
// and checks no more.
func TestEventuallyFails(t *testing.T) {
	const timeout, every = 100 * time.Millisecond, 10 * time.Millisecond
	calls := 0
	began := time.Now()
	f, returned := run(t, func(tb testing.TB) {
		EventuallyEvery(tb, timeout, every, "the impossible", func() error {
			calls++
			return fmt.Errorf("try %d", calls)
		})
	})
	took := time.Since(began)
	if returned || len(f.fatals) != 1 {
		t.Fatalf("never passing: returned %v, fatals %q; want one Fatal", returned, f.fatals)
	}
	if want := fmt.Sprintf("the impossible: not within 100ms: try %d", calls); f.fatals[0] != want {
		t.Errorf("message %q, want %q", f.fatals[0], want)
	}
	if took < timeout || calls < 2 || calls > int(timeout/every)+1 {
		t.Errorf("%d calls in %s; want about one per %s for %s", calls, took, every, timeout)
	}
	before := calls
	time.Sleep(3 * every)
	if calls != before {
		t.Errorf("checked %d more times after failing", calls-before)
	}
}
