package sleep

import (
	"context"
	"testing"
	"time"
)

// For waits its time, or returns false at once when ctx has ended.
func TestFor(t *testing.T) {
	if !For(context.Background(), time.Millisecond) {
		t.Error("For ended early without a cancel")
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if For(ctx, time.Hour) {
		t.Error("For waited out its time after a cancel")
	}
}
