package shard

import (
	"fmt"
	"slices"
	"testing"
	"time"
)

// TestDecide: what a replica does with the Leases it sees.
func TestDecide(t *testing.T) {
	now := time.Date(2026, 11, 27, 12, 0, 0, 0, time.UTC)
	const d = 10 * time.Second
	fresh, stale := now.Add(-time.Second), now.Add(-d-time.Second)
	shards := func(holders ...string) []seen {
		out := make([]seen, len(holders))
		for i, h := range holders {
			out[i] = seen{holder: h, since: fresh}
		}
		return out
	}
	for _, c := range []struct {
		name               string
		live               int
		shards             []seen
		renew, take, give  int // how many
		renewSet, notTaken []int
	}{
		{name: "alone, nothing held: takes every shard", live: 1, shards: shards("", "", "", ""), take: 4},
		{name: "one of two, nothing held: takes its half", live: 2, shards: shards("", "", "", ""), take: 2},
		{name: "one of three, 4 shards: its share is 2", live: 3, shards: shards("", "", "", ""), take: 2},
		{name: "holds its share: renews only", live: 2, shards: shards("me", "other", "me", "other"), renew: 2, renewSet: []int{0, 2}},
		{name: "a replica joined: gives the extra back", live: 2, shards: shards("me", "me", "me", "me"), renew: 2, give: 2},
		{name: "others' fresh shards are not free", live: 1, shards: shards("me", "other", "other", ""), renew: 1, take: 1, notTaken: []int{1, 2}},
		{name: "a stale holder's shard is free", live: 1,
			shards: []seen{{holder: "me", since: fresh}, {holder: "dead", since: stale}}, renew: 1, take: 1},
		{name: "its own lease, however old, is renewed", live: 1,
			shards: []seen{{holder: "me", since: stale}}, renew: 1},
	} {
		t.Run(c.name, func(t *testing.T) {
			a := decide(view{self: "me", now: now, duration: d, live: c.live, shards: c.shards})
			if len(a.renew) != c.renew || len(a.take) != c.take || len(a.give) != c.give {
				t.Fatalf("renew %v, take %v, give %v; want %d, %d, %d", a.renew, a.take, a.give, c.renew, c.take, c.give)
			}
			if c.renewSet != nil && !slices.Equal(a.renew, c.renewSet) {
				t.Errorf("renews %v; want %v", a.renew, c.renewSet)
			}
			for _, i := range c.notTaken {
				if slices.Contains(a.take, i) {
					t.Errorf("takes shard %d, held fresh by another", i)
				}
			}
			for _, i := range append(slices.Clone(a.take), a.give...) {
				if slices.Contains(a.renew, i) {
					t.Errorf("shard %d both renewed and taken or given", i)
				}
			}
		})
	}
}

// TestDecideSpreadsFreshReplicas: replicas starting together on free
// shards try different ones first, so few of their takes race.
func TestDecideSpreadsFreshReplicas(t *testing.T) {
	free := make([]seen, 12)
	counts := map[int]int{}
	for r := range 3 {
		a := decide(view{self: fmt.Sprintf("replica-%d", r), now: time.Now(), duration: time.Second, live: 3, shards: free})
		for _, i := range a.take {
			counts[i]++
		}
	}
	overlap := 0
	for _, n := range counts {
		overlap += n - 1
	}
	if overlap > 4 {
		t.Errorf("three fresh replicas want the same shards %d times out of 12: %v", overlap, counts)
	}
}

// TestOf: keys spread over the shards, and a key's shard is stable.
func TestOf(t *testing.T) {
	const n, keys = 12, 12000
	count := make([]int, n)
	for k := range keys {
		count[Of(fmt.Sprintf("e2e-service-default-svc-%d", k), n)]++
	}
	for i, c := range count {
		if c < keys/n*8/10 || c > keys/n*12/10 {
			t.Errorf("shard %d has %d of %d keys: want within 20%% of %d", i, c, keys, keys/n)
		}
	}
	// Stable across processes and releases: records and Leases outlive
	// both.
	if got := Of("e2e-service-default-web", n); got != 8 {
		t.Errorf("Of(e2e-service-default-web) = %d; it must not change", got)
	}
}
