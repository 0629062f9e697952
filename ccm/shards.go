package ccm

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"os"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	v1 "k8s.io/api/core/v1"
	coreinformers "k8s.io/client-go/informers/core/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2"

	"github.com/example/cloud-provider-example/annotations"
	"github.com/example/cloud-provider-example/objectref"
	"github.com/example/cloud-provider-example/shard"
)

// shards is this replica's part when the load balancers are sharded
// (docs/adr/0017-shards-owned-by-leases.md): the Lease holder of its
// shards, whether it leads (the cluster-wide workspaces, the route set and
// the target pools, are the leader's), and the service controller's
// handlers, called again for the Services of a shard it takes. A nil
// *shards (sharding off) owns everything.
type shards struct {
	// current is the Lease holder (a holder), set once by StartShards
	// while the webhook may already be asking: read through holder().
	current atomic.Value
	leader  atomic.Bool
	// services is every Service (the informer's store, unfiltered): a
	// Service's group decides its shard.
	services cache.Indexer
	// admits tells whether group g of another namespace takes svc as a
	// member by the grants read so far, without waiting (nil: nobody
	// consents): a guest is sharded by its group's key only then.
	admits func(svc *v1.Service, g annotations.Group) bool
	// guests are where the guests were last placed (guestshards.go).
	guests guestShards

	// forget makes the engine forget the objects match says: those of the
	// shards lost, and of the shards taken (read from their records).
	forget func(match func(objectref.Ref) bool) int
	// taken hears that shards were taken: their records may have been
	// written by another replica since the start (the board reads them
	// again rather than from its List at start).
	taken func()
	// pools creates, on the leader, the pools Services ask for.
	pools *poolCreator

	// converged counts the shards' queues (shardqueue.go).
	converged converged

	mu       sync.Mutex
	handlers []cache.ResourceEventHandler
	// held is the shards held at the last look, with the generation each
	// was taken in.
	held map[int]uint64
}

// holder is the Lease holder, nil until StartShards sets it.
func (s *shards) holder() holder {
	h, _ := s.current.Load().(holder)
	return h
}

// holder is what shards asks of the Lease holder (shard.Holder): whether
// it owns a key now (to act on it) or holds it (to queue it), and the
// shards held by generation.
type holder interface {
	OwnsKey(key string) bool
	HoldsKey(key string) bool
	Held() map[int]uint64
	Shards() int
}

// shardPrefix names the Leases of the controller's shards.
const shardPrefix = shard.ControllerPrefix

// heldPoll is how often the shards held are compared with the last look:
// a shard taken (again, in a new generation) has its Services handed to
// the service controller again.
const heldPoll = time.Second

// shardRef is the object whose key decides svc's shard: the group it
// names once that group takes it as a member (every member of a group is
// one replica's), else itself.
func (s *shards) shardRef(svc *v1.Service) objectref.Ref {
	ref, _ := s.place(svc)
	return ref
}

// place is shardRef, and whether svc is a guest: it names a group of
// another namespace. A guest is its group's only while that namespace's
// consent, as read now, lets it in: naming a group it may not join (or
// before the grants are read) it loads its own shard's replica, never the
// group's (docs/tenancy.md, "Shards add no reference").
func (s *shards) place(svc *v1.Service) (ref objectref.Ref, guest bool) {
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

// owns tells whether this replica may plan and apply ref now (the
// engine's Options.Owns). A Service's own workspace goes with the shard
// the Service is in now: a group member's with its group's.
func (s *shards) owns(ref objectref.Ref) bool { return s.has(ref, holder.OwnsKey) }

// holds tells whether ref is this replica's to remember: its shard is
// held, owned or with a renewal late.
func (s *shards) holds(ref objectref.Ref) bool { return s.has(ref, holder.HoldsKey) }

// has is owns or holds, as in says of a shard's key.
func (s *shards) has(ref objectref.Ref, in func(holder, string) bool) bool {
	if s == nil {
		return true
	}
	switch ref.Kind {
	case objectref.KindRouteSet, objectref.KindTargetPools, objectref.KindGateway, objectref.KindAddress:
		// The leader's: it runs the route and Gateway controllers, and
		// decides which Service holds each address (docs/addresses.md).
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
func (s *shards) shardOf(ref objectref.Ref) int {
	if ref.Kind == objectref.KindService {
		if svc := s.service(ref.Namespace, ref.Name); svc != nil {
			ref = s.shardRef(svc)
		}
	}
	return shard.Of(ref.Key(), s.holder().Shards())
}

// shardOfService is svc's shard of n (its group's, for a member).
func (s *shards) shardOfService(svc *v1.Service, n int) int {
	return shard.Of(s.shardRef(svc).Key(), n)
}

// ownsService is owns of svc's shard.
func (s *shards) ownsService(svc *v1.Service) bool {
	if s == nil {
		return true
	}
	h := s.holder()
	return h != nil && h.OwnsKey(s.shardRef(svc).Key())
}

// holdsService is holds of svc's shard.
func (s *shards) holdsService(svc *v1.Service) bool {
	if s == nil {
		return true
	}
	h := s.holder()
	return h != nil && h.HoldsKey(s.shardRef(svc).Key())
}

// late tells whether svc's shard is held but not owned now: its Lease
// renewal is late.
func (s *shards) late(svc *v1.Service) bool {
	return s != nil && s.holdsService(svc) && !s.ownsService(svc)
}

func (s *shards) service(ns, name string) *v1.Service {
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
func (s *shards) applied(ref objectref.Ref) {
	if s == nil {
		return
	}
	if h := s.holder(); h != nil {
		shardChanges.WithLabelValues(strconv.Itoa(shard.Of(ref.Key(), h.Shards()))).Inc()
	}
}

// holdsObject is holdsService of an informer's object (a Service, or the
// tombstone of one), as the service controller hears of it: where a
// guest was placed is kept (guestShards).
func (s *shards) holdsObject(obj any) bool {
	if t, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		obj = t.Obj
	}
	svc, ok := obj.(*v1.Service)
	h := s.holder()
	if !ok || h == nil {
		return false
	}
	return h.HoldsKey(s.heard(svc, h.Shards()).Key())
}

// watchHeld hands the service controller, every heldPoll until ctx ends,
// the Services of each shard this replica has taken since the last look,
// and counts the shards' queues.
func (s *shards) watchHeld(ctx context.Context) {
	t := time.NewTicker(heldPoll)
	defer t.Stop()
	for {
		s.replayGained()
		s.moveGuests(s.holder())
		s.countQueues(s.holder())
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// replayGained compares the shards held with the last look: the engine
// forgets the objects of the shards lost and of those taken (a shard lost
// and taken again between two looks comes in a new generation), and the
// service controller hears again of the Services of those taken.
func (s *shards) replayGained() {
	h := s.holder()
	now := h.Held()
	s.mu.Lock()
	var gained []int
	for i, g := range now {
		if last, ok := s.held[i]; !ok || last != g {
			gained = append(gained, i)
		}
	}
	slices.Sort(gained)
	lost := false
	for i := range s.held {
		lost = lost || now[i] == 0
	}
	s.held = now
	handlers := slices.Clone(s.handlers)
	s.mu.Unlock()
	if len(gained) > 0 && s.taken != nil {
		s.taken()
	}
	if s.forget != nil && (lost || len(gained) > 0) {
		n := s.forget(func(ref objectref.Ref) bool { return !s.holds(ref) || slices.Contains(gained, s.shardOf(ref)) })
		klog.V(2).InfoS("Shards moved: the engine forgets their objects", "taken", gained, "objects", n)
	}
	for i := range h.Shards() {
		v := 0.0
		if now[i] != 0 {
			v = 1
		}
		shardOwned.WithLabelValues(strconv.Itoa(i)).Set(v)
	}
	if len(gained) == 0 || s.services == nil {
		return
	}
	n := 0
	for _, obj := range s.services.List() {
		svc, ok := obj.(*v1.Service)
		if !ok || !slices.Contains(gained, s.shardOfService(svc, h.Shards())) {
			continue
		}
		n++
		for _, h := range handlers {
			h.OnAdd(svc, false)
		}
	}
	klog.InfoS("Shards taken: their Services go to the service controller", "shards", gained, "services", n)
}

// shardedServices is the Service informer a replica's service controller
// is given: the handlers it adds hear only of the Services of this
// replica's shards (of a Service moving between shards, on both sides),
// and, through watchHeld, of a shard's Services again when it is taken.
// The store and the lister are the informer's, unfiltered.
type shardedServices struct {
	coreinformers.ServiceInformer
	shards *shards
}

func (i shardedServices) Informer() cache.SharedIndexInformer {
	return shardedInformer{SharedIndexInformer: i.ServiceInformer.Informer(), shards: i.shards}
}

type shardedInformer struct {
	cache.SharedIndexInformer
	shards *shards
}

func (i shardedInformer) AddEventHandler(h cache.ResourceEventHandler) (cache.ResourceEventHandlerRegistration, error) {
	return i.SharedIndexInformer.AddEventHandler(i.shards.filter(h))
}

func (i shardedInformer) AddEventHandlerWithResyncPeriod(h cache.ResourceEventHandler, resync time.Duration) (cache.ResourceEventHandlerRegistration, error) {
	return i.SharedIndexInformer.AddEventHandlerWithResyncPeriod(i.shards.filter(h), resync)
}

func (i shardedInformer) AddEventHandlerWithOptions(h cache.ResourceEventHandler, o cache.HandlerOptions) (cache.ResourceEventHandlerRegistration, error) {
	return i.SharedIndexInformer.AddEventHandlerWithOptions(i.shards.filter(h), o)
}

// filter keeps h, to call again for a shard taken, and returns it
// filtered to the Services of the shards held (a late renewal drops no
// event: EnsureLoadBalancer retries until the shard is owned again).
func (s *shards) filter(h cache.ResourceEventHandler) cache.ResourceEventHandler {
	s.mu.Lock()
	s.handlers = append(s.handlers, h)
	s.mu.Unlock()
	return heldOnly{h: h, shards: s}
}

// heldOnly passes on the events of the Services of the shards held.
type heldOnly struct {
	h      cache.ResourceEventHandler
	shards *shards
}

func (o heldOnly) OnAdd(obj any, initial bool) {
	if o.shards.holdsObject(obj) {
		o.h.OnAdd(obj, initial)
	}
}

func (o heldOnly) OnUpdate(old, cur any) {
	if o.shards.holdsObject(old) || o.shards.holdsObject(cur) {
		o.h.OnUpdate(old, cur)
	}
}

func (o heldOnly) OnDelete(obj any) {
	if o.shards.holdsObject(obj) {
		o.h.OnDelete(obj)
	}
}

// replicaIdentity names this replica among the live ones: its pod's name
// (the chart sets POD_NAME) or host name, and a random suffix, so a
// restarted replica is a new one and never takes a dead one's renewals
// for its own.
func replicaIdentity() (string, error) {
	name := os.Getenv("POD_NAME")
	if name == "" {
		h, err := os.Hostname()
		if err != nil {
			return "", fmt.Errorf("replica identity: %w", err)
		}
		name = h
	}
	b := make([]byte, 4)
	if _, err := rand.Read(b); err != nil {
		return "", fmt.Errorf("replica identity: %w", err)
	}
	return name + "_" + hex.EncodeToString(b), nil
}
