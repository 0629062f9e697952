// Package sleep waits a while unless a context ends first: the waits
// between retries, polls and batches of the controller and the simulator.
package sleep

import (
	"context"
	"time"
)

// For waits d, or until ctx ends; it reports whether it waited all of d.
// Its timer is stopped on return, so a cancelled wait leaves none behind.
func For(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	}
}
