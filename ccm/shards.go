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
	// held is the Lease holder (a holder), set once by StartShards while
	// the webhook may already be asking: read through holder().
	held   atomic.Value
	leader atomic.Bool
	// services is every Service (the informer's store, unfiltered): a
	// Service's group decides its shard.
	services cache.Indexer

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
	owned    []int
}

// holder is the Lease holder, nil until StartShards sets it.
func (s *shards) holder() holder {
	h, _ := s.held.Load().(holder)
	return h
}

// holder is what shards asks of the Lease holder (shard.Holder).
type holder interface {
	OwnsKey(key string) bool
	Owned() []int
	Shards() int
}

// shardPrefix names the Leases of the controller's shards.
const shardPrefix = shard.ControllerPrefix

// ownedPoll is how often the owned shards are compared with the last
// look: a shard taken, or held again after a missed renewal, has its
// Services handed to the service controller again.
const ownedPoll = time.Second

// shardRef is the object whose key decides svc's shard: its group (every
// member of a group is one replica's) or itself.
func shardRef(svc *v1.Service) objectref.Ref {
	if g, err := annotations.ParseGroup(svc.Annotations); err == nil && g.Name != "" {
		g = g.In(svc.Namespace)
		return objectref.Group(g.Namespace, g.Name)
	}
	return objectref.Service(svc)
}

// owns tells whether this replica may plan and apply ref now (the
// engine's Options.Owns). A Service's own workspace goes with the shard
// the Service is in now: a group member's with its group's.
func (s *shards) owns(ref objectref.Ref) bool {
	if s == nil {
		return true
	}
	switch ref.Kind {
	case objectref.KindRouteSet, objectref.KindTargetPools:
		return s.leader.Load()
	case objectref.KindService:
		if svc := s.service(ref.Namespace, ref.Name); svc != nil {
			ref = shardRef(svc)
		}
	}
	h := s.holder()
	return h != nil && h.OwnsKey(ref.Key())
}

// shardOf is ref's shard (a Service's: its group's, for a member).
func (s *shards) shardOf(ref objectref.Ref) int {
	if ref.Kind == objectref.KindService {
		if svc := s.service(ref.Namespace, ref.Name); svc != nil {
			ref = shardRef(svc)
		}
	}
	return shard.Of(ref.Key(), s.holder().Shards())
}

// ownsService is owns of svc's shard.
func (s *shards) ownsService(svc *v1.Service) bool {
	if s == nil {
		return true
	}
	h := s.holder()
	return h != nil && h.OwnsKey(shardRef(svc).Key())
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

// ownsObject is ownsService of an informer's object (a Service, or the
// tombstone of one).
func (s *shards) ownsObject(obj any) bool {
	if t, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		obj = t.Obj
	}
	svc, ok := obj.(*v1.Service)
	return ok && s.ownsService(svc)
}

// watchOwned hands the service controller, every ownedPoll until ctx
// ends, the Services of each shard this replica has come to own, and
// counts the shards' queues.
func (s *shards) watchOwned(ctx context.Context) {
	t := time.NewTicker(ownedPoll)
	defer t.Stop()
	for {
		s.replayGained()
		s.countQueues(s.holder())
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

func (s *shards) replayGained() {
	h := s.holder()
	now := h.Owned()
	s.mu.Lock()
	var gained []int
	for _, i := range now {
		if !slices.Contains(s.owned, i) {
			gained = append(gained, i)
		}
	}
	lost := slices.ContainsFunc(s.owned, func(i int) bool { return !slices.Contains(now, i) })
	s.owned = now
	handlers := slices.Clone(s.handlers)
	s.mu.Unlock()
	if len(gained) > 0 && s.taken != nil {
		s.taken()
	}
	if s.forget != nil && (lost || len(gained) > 0) {
		n := s.forget(func(ref objectref.Ref) bool { return !s.owns(ref) || slices.Contains(gained, s.shardOf(ref)) })
		klog.V(2).InfoS("Shards moved: the engine forgets their objects", "taken", gained, "objects", n)
	}
	for i := range h.Shards() {
		v := 0.0
		if slices.Contains(now, i) {
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
		if !ok || !slices.Contains(gained, shard.Of(shardRef(svc).Key(), h.Shards())) {
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
// and, through watchOwned, of a shard's Services again when it is taken.
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
// filtered to the owned Services.
func (s *shards) filter(h cache.ResourceEventHandler) cache.ResourceEventHandler {
	s.mu.Lock()
	s.handlers = append(s.handlers, h)
	s.mu.Unlock()
	return ownedOnly{h: h, shards: s}
}

// ownedOnly passes on the events of the Services this replica owns.
type ownedOnly struct {
	h      cache.ResourceEventHandler
	shards *shards
}

func (o ownedOnly) OnAdd(obj any, initial bool) {
	if o.shards.ownsObject(obj) {
		o.h.OnAdd(obj, initial)
	}
}

func (o ownedOnly) OnUpdate(old, cur any) {
	if o.shards.ownsObject(old) || o.shards.ownsObject(cur) {
		o.h.OnUpdate(old, cur)
	}
}

func (o ownedOnly) OnDelete(obj any) {
	if o.shards.ownsObject(obj) {
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
