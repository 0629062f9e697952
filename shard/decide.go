package shard

import (
	"slices"
	"time"
)

// seen is one shard's Lease as a replica last saw it.
type seen struct {
	holder string
	// since is when, on this replica's clock, the Lease last changed
	// (holder or renewal) as far as this replica saw.
	since time.Time
}

// view is what a replica knows when it decides.
type view struct {
	self     string
	now      time.Time
	duration time.Duration
	// live is the number of replicas whose Leases are renewed, self
	// included.
	live   int
	shards []seen
}

// actions is what a replica does next with the shard Leases.
type actions struct {
	renew, take, give []int
}

// share is a replica's fair share of n shards among live replicas.
func share(n, live int) int {
	live = max(live, 1)
	return (n + live - 1) / live
}

// free tells whether a shard may be taken: no holder, or one that has
// not renewed for a lease duration on this replica's clock.
func (v view) free(s seen) bool {
	return s.holder == "" || s.holder != v.self && v.now.Sub(s.since) > v.duration
}

// decide is what self does: renew what it holds; past its share, give
// back the extra (those it ranks last); under it, take free shards (those
// it ranks first).
func decide(v view) actions {
	var a actions
	var free []int
	for i, s := range v.shards {
		switch {
		case s.holder == v.self:
			a.renew = append(a.renew, i)
		case v.free(s):
			free = append(free, i)
		}
	}
	byRank := func(x, y int) int {
		rx, ry := rank(v.self, x), rank(v.self, y)
		switch {
		case rx < ry:
			return -1
		case rx > ry:
			return 1
		}
		return 0
	}
	fair := share(len(v.shards), v.live)
	switch {
	case len(a.renew) > fair:
		slices.SortFunc(a.renew, byRank)
		a.give = slices.Clone(a.renew[fair:])
		a.renew = a.renew[:fair]
	case len(a.renew) < fair:
		slices.SortFunc(free, byRank)
		a.take = free[:min(len(free), fair-len(a.renew))]
	}
	slices.Sort(a.renew)
	slices.Sort(a.take)
	slices.Sort(a.give)
	return a
}
