// Package testkit holds what every test of this module needs, defined
// once: failing on an error (Must, MustValue), a context with a deadline
// (Context) and waiting for a condition (Eventually, EventuallyEvery).
// Each package had its own copies, and copies drift (deadlines, messages,
// hand-written poll loops); one definition, tested, does not.
package testkit

import (
	"context"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/util/wait"
)

// ContextTimeout bounds a Context: long enough for a terraform run on a
// loaded machine, short enough that a hang fails its test, not the whole
// go test run at -timeout.
const ContextTimeout = 3 * time.Minute

// PollInterval is how often Eventually checks.
const PollInterval = 200 * time.Millisecond

// Must fails tb at once if err is not nil.
func Must(tb testing.TB, err error) {
	tb.Helper()
	if err != nil {
		tb.Fatal(err)
	}
}

// MustValue returns v, or fails tb at once if err is not nil.
func MustValue[T any](tb testing.TB, v T, err error) T {
	tb.Helper()
	Must(tb, err)
	return v
}

// Context is tb's context, ended after ContextTimeout. It is done before
// tb's Cleanup functions run (as tb.Context() is): a clean-up makes a
// context of its own.
func Context(tb testing.TB) context.Context {
	ctx, cancel := context.WithTimeout(tb.Context(), ContextTimeout)
	tb.Cleanup(cancel)
	return ctx
}

// Eventually calls check every PollInterval until it returns nil, and
// fails tb, naming what and check's last error, if it has not within
// timeout.
func Eventually(tb testing.TB, timeout time.Duration, what string, check func() error) {
	tb.Helper()
	EventuallyEvery(tb, timeout, PollInterval, what, check)
}

// EventuallyEvery is Eventually checking at once, then every after each
// check ends. Its deadline is its own, not tb's context's, so that it
// also works in a Cleanup function.
func EventuallyEvery(tb testing.TB, timeout, every time.Duration, what string, check func() error) {
	tb.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	var last error
	// immediate and sliding: check, then wait every, as a loop with a
	// sleep would; the condition never returns an error, so the wait ends
	// with success or the deadline.
	_ = wait.DelayFunc(func() time.Duration { return every }).Until(ctx, true, true,
		func(context.Context) (bool, error) {
			last = check()
			return last == nil, nil
		})
	if last != nil {
		tb.Fatalf("%s: not within %s: %v", what, timeout, last)
	}
}
