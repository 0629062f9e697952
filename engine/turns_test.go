package engine

import (
	"context"
	"errors"
	"testing"
	"time"
)

func TestTurns(t *testing.T) {
	var tr turns
	ctx := context.Background()
	release, err := tr.take(ctx, "a")
	if err != nil {
		t.Fatal(err)
	}
	// Another object's turn does not wait.
	other, err := tr.take(ctx, "b")
	if err != nil {
		t.Fatal(err)
	}
	other()
	// The same object's waits for the release, or gives up with ctx.
	short, cancel := context.WithTimeout(ctx, 20*time.Millisecond)
	defer cancel()
	if _, err := tr.take(short, "a"); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("a second turn of a held object: %v", err)
	}
	got := make(chan error)
	go func() {
		r, err := tr.take(ctx, "a")
		if err == nil {
			r()
		}
		got <- err
	}()
	select {
	case err := <-got:
		t.Fatalf("the turn was taken while held: %v", err)
	case <-time.After(20 * time.Millisecond):
	}
	release()
	if err := <-got; err != nil {
		t.Fatal(err)
	}
	if n := tr.len(); n != 0 {
		t.Fatalf("%d turns kept after every release", n)
	}
}
