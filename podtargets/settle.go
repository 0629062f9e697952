package podtargets

import "time"

// Settle batches a pool's endpoint changes (ADR 24): they are applied
// once the pool's slices have been still for Quiet, or Longest after the
// first change not yet applied, whichever comes first, so a rollout is a
// few applies of its pool, not one per pod, and a steady trickle of
// changes still lands.
type Settle struct {
	Quiet, Longest time.Duration
}

// DefaultSettle is what the controller ships with.
var DefaultSettle = Settle{Quiet: 2 * time.Second, Longest: 10 * time.Second}

// Due is when changes first made at first, last made at last, are
// applied.
func (s Settle) Due(first, last time.Time) time.Time {
	return minTime(last.Add(s.Quiet), first.Add(s.Longest))
}

func minTime(a, b time.Time) time.Time {
	if b.Before(a) {
		return b
	}
	return a
}
