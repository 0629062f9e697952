package servicelb

import (
	"strconv"
	"sync/atomic"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/client-go/tools/cache"

	"github.com/example/cloud-provider-example/annotations"
	"github.com/example/cloud-provider-example/objectref"
	"github.com/example/cloud-provider-example/shard"
)

// Shards is this replica's part when the load balancers are sharded
// (docs/adr/0017-shards-owned-by-leases.md): the Lease holder of its
// shards and whether it leads (the cluster-wide workspaces, the route set
// and the target pools, are the leader's). What the service controller
// hears of them is the feed's (shardfeed.go). A nil *Shards (sharding
// off) owns everything.
type Shards struct {
	// current is the Lease holder (a holder), set once by Hold while the
	// webhook may already be asking: read through holder().
	current atomic.Value
	leader  atomic.Bool
	// services is every Service (the informer's store, unfiltered): a
	// Service's group decides its shard.
	services cache.Indexer
	// admits tells whether group g of another namespace takes svc as a
	// member by the grants read so far, without waiting (nil: nobody
	// consents): a guest is sharded by its group's key only then.
	admits func(svc *v1.Service, g annotations.Group) bool
	// feed is what the service controller hears of the shards.
	feed *shardFeed
}

// NewShards is this replica's part in a sharded controller, holding no
// shard until Hold.
func NewShards() *Shards {
	s := &Shards{}
	s.feed = &shardFeed{shards: s}
	return s
}

// Hold gives the shards their Lease holder h; forget makes the engine
// forget the objects a match says (of the shards lost, and of those
// taken), taken hears that shards were taken (their records may have been
// written by another replica since the start).
func (s *Shards) Hold(h Holder, forget func(match func(objectref.Ref) bool) int, taken func()) {
	s.feed.forget, s.feed.taken = forget, taken
	s.current.Store(h)
}

// Leads tells whether this replica leads (shard.Config.Leads).
func (s *Shards) Leads() bool { return s.leader.Load() }

// holder is the Lease holder, nil until Hold sets it.
func (s *Shards) holder() Holder {
	h, _ := s.current.Load().(Holder)
	return h
}

// Holder is what the shards ask of the Lease holder (a *shard.Holder): whether
// it owns a key now (to act on it) or holds it (to queue it), and the
// shards held by generation.
type Holder interface {
	OwnsKey(key string) bool
	HoldsKey(key string) bool
	Held() map[int]uint64
	Shards() int
}

// heldPoll is how often the shards held are compared with the last look:
// a shard taken (again, in a new generation) has its Services handed to
// the service controller again.
const heldPoll = time.Second

// shardRef is the object whose key decides svc's shard: the group it
// names once that group takes it as a member (every member of a group is
// one replica's), else itself.
func (s *Shards) shardRef(svc *v1.Service) objectref.Ref {
	ref, _ := s.place(svc)
	return ref
}

// place is shardRef, and whether svc is a guest: it names a group of
// another namespace. A guest is its group's only while that namespace's
// consent, as read now, lets it in: naming a group it may not join (or
// before the grants are read) it loads its own shard's replica, never the
// group's (docs/tenancy.md, "Shards add no reference").
func (s *Shards) place(svc *v1.Service) (ref objectref.Ref, guest bool) {
	g, err := annotations.ParseGroup(svc.Annotations)
	if err != nil || g.Name == "" {
		return objectref.Service(svc), false
	}
	g = g.In(svc.Namespace)
	guest = g.Namespace != svc.Namespace
	if guest && (s == nil || s.admits == nil || !s.admits(svc, g)) {
		return objectref.Service(svc), true
	}
	return objectref.Group(g.Namespace, g.Name), guest
}

// Owns tells whether this replica may plan and apply ref now (the
// engine's Options.Owns). A Service's own workspace goes with the shard
// the Service is in now: a group member's with its group's.
func (s *Shards) Owns(ref objectref.Ref) bool { return s.has(ref, Holder.OwnsKey) }

// holds tells whether ref is this replica's to remember: its shard is
// held, owned or with a renewal late.
func (s *Shards) holds(ref objectref.Ref) bool { return s.has(ref, Holder.HoldsKey) }

// has is owns or holds, as in says of a shard's key.
func (s *Shards) has(ref objectref.Ref, in func(Holder, string) bool) bool {
	if s == nil {
		return true
	}
	switch ref.Kind {
	case objectref.KindRouteSet, objectref.KindTargetPools, objectref.KindGateway, objectref.KindRuleSet,
		objectref.KindAddress, objectref.KindPodPool:
		// The leader's: it runs the route and Gateway controllers (a
		// Gateway's routes' rule sets with it), decides which Service
		// holds each address (docs/addresses.md), and keeps the pod pools
		// (package podpools), a Service's and a Gateway's alike.
		return s.leader.Load()
	case objectref.KindService:
		if svc := s.service(ref.Namespace, ref.Name); svc != nil {
			ref = s.shardRef(svc)
		}
	}
	h := s.holder()
	return h != nil && in(h, ref.Key())
}

// shardOf is ref's shard (a Service's: its group's, for a member).
func (s *Shards) shardOf(ref objectref.Ref) int {
	if ref.Kind == objectref.KindService {
		if svc := s.service(ref.Namespace, ref.Name); svc != nil {
			ref = s.shardRef(svc)
		}
	}
	return shard.Of(ref.Key(), s.holder().Shards())
}

// shardOfService is svc's shard of n (its group's, for a member).
func (s *Shards) shardOfService(svc *v1.Service, n int) int {
	return shard.Of(s.shardRef(svc).Key(), n)
}

// ownsService is owns of svc's shard.
func (s *Shards) ownsService(svc *v1.Service) bool {
	if s == nil {
		return true
	}
	h := s.holder()
	return h != nil && h.OwnsKey(s.shardRef(svc).Key())
}

// holdsService is holds of svc's shard.
func (s *Shards) holdsService(svc *v1.Service) bool {
	if s == nil {
		return true
	}
	h := s.holder()
	return h != nil && h.HoldsKey(s.shardRef(svc).Key())
}

// late tells whether svc's shard is held but not owned now: its Lease
// renewal is late.
func (s *Shards) late(svc *v1.Service) bool {
	return s != nil && s.holdsService(svc) && !s.ownsService(svc)
}

func (s *Shards) service(ns, name string) *v1.Service {
	if s.services == nil {
		return nil
	}
	obj, ok, err := s.services.GetByKey(ns + "/" + name)
	if err != nil || !ok {
		return nil
	}
	svc, _ := obj.(*v1.Service)
	return svc
}

// applied counts a change applied to ref (a Service's: shardRef) in its
// shard's figure.
func (s *Shards) applied(ref objectref.Ref) {
	if s == nil {
		return
	}
	if h := s.holder(); h != nil {
		shardChanges.WithLabelValues(strconv.Itoa(shard.Of(ref.Key(), h.Shards()))).Inc()
	}
}
