package servicelb

import (
	"slices"
	"sync"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/klog/v2"

	"github.com/example/cloud-provider-example/objectref"
	"github.com/example/cloud-provider-example/shard"
)

// guestShards is the shard each guest (a Service naming a group of
// another namespace) was last placed in, by the service controller's
// filter or by the last look. A guest's shard moves when its group's
// namespace gives or takes back its consent, or when the grants are
// first read, and no event of the Service's says so: each look hands a
// guest that moved into a shard held here to the service controller, as
// a Service moving between shards by an edit is heard on both sides.
type guestShards struct {
	mu sync.Mutex
	at map[types.UID]int
}

// heard is svc's shard object as the filter hears of it, svc's placement
// kept when it is a guest (n shards).
func (f *shardFeed) heard(svc *v1.Service, n int) objectref.Ref {
	s := f.shards
	f.guests.mu.Lock()
	defer f.guests.mu.Unlock()
	ref, guest := s.place(svc)
	if guest {
		f.guests.placed(svc.UID, shard.Of(ref.Key(), n))
	}
	return ref
}

// placed keeps guest uid's shard i; it tells whether the guest was
// placed elsewhere before (g.mu held).
func (g *guestShards) placed(uid types.UID, i int) (moved bool) {
	if g.at == nil {
		g.at = map[types.UID]int{}
	}
	last, ok := g.at[uid]
	g.at[uid] = i
	return ok && last != i
}

// moveGuests places every guest again: those that moved into a shard h
// holds are handed to the service controller; what is kept of Services
// gone, or no longer guests, goes.
func (f *shardFeed) moveGuests(h Holder) {
	s := f.shards
	if s.services == nil || h == nil {
		return
	}
	var moved []*v1.Service
	f.guests.mu.Lock()
	seen := map[types.UID]bool{}
	for _, obj := range s.services.List() {
		svc, ok := obj.(*v1.Service)
		if !ok {
			continue
		}
		ref, guest := s.place(svc)
		if !guest {
			continue
		}
		seen[svc.UID] = true
		if f.guests.placed(svc.UID, shard.Of(ref.Key(), h.Shards())) && h.HoldsKey(ref.Key()) {
			moved = append(moved, svc)
		}
	}
	for uid := range f.guests.at {
		if !seen[uid] {
			delete(f.guests.at, uid)
		}
	}
	f.guests.mu.Unlock()
	if len(moved) == 0 {
		return
	}
	f.mu.Lock()
	handlers := slices.Clone(f.handlers)
	f.mu.Unlock()
	for _, svc := range moved {
		klog.V(2).InfoS("A guest moved into a shard of this replica: its group's consent was given, taken back or first read", "service", klog.KObj(svc))
		for _, h := range handlers {
			h.OnAdd(svc, false)
		}
	}
}
