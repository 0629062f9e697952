package servicelb

import (
	"context"
	"slices"
	"strconv"
	"sync"
	"time"

	v1 "k8s.io/api/core/v1"
	coreinformers "k8s.io/client-go/informers/core/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2"

	"github.com/example/cloud-provider-example/objectref"
)

// shardFeed is what the service controller of a sharded replica hears:
// the handlers it adds, filtered to the Services of the shards held and
// called again for the Services of a shard taken (or of a guest moved
// into one), and the shards' queues it leaves.
type shardFeed struct {
	shards *Shards
	// forget makes the engine forget the objects match says: those of the
	// shards lost, and of the shards taken (read from their records).
	forget func(match func(objectref.Ref) bool) int
	// taken hears that shards were taken: their records may have been
	// written by another replica since the start (the board reads them
	// again rather than from its List at start).
	taken func()
	// pools creates, on the leader, the pools Services ask for.
	pools *poolCreator
	// guests are where the guests were last placed (guestshards.go).
	guests guestShards
	// converged counts the shards' queues (shardqueue.go).
	converged converged

	mu       sync.Mutex
	handlers []cache.ResourceEventHandler
	// held is the shards held at the last look, with the generation each
	// was taken in.
	held map[int]uint64
}

// holdsObject is holdsService of an informer's object (a Service, or the
// tombstone of one), as the service controller hears of it: where a
// guest was placed is kept (guestShards).
func (f *shardFeed) holdsObject(obj any) bool {
	s := f.shards
	if t, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		obj = t.Obj
	}
	svc, ok := obj.(*v1.Service)
	h := s.holder()
	if !ok || h == nil {
		return false
	}
	return h.HoldsKey(f.heard(svc, h.Shards()).Key())
}

// watchHeld hands the service controller, every heldPoll until ctx ends,
// the Services of each shard this replica has taken since the last look,
// and counts the shards' queues.
func (f *shardFeed) watchHeld(ctx context.Context) {
	s := f.shards
	t := time.NewTicker(heldPoll)
	defer t.Stop()
	for {
		f.replayGained()
		f.moveGuests(s.holder())
		f.countQueues(s.holder())
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
func (f *shardFeed) replayGained() {
	s := f.shards
	h := s.holder()
	now := h.Held()
	f.mu.Lock()
	var gained []int
	for i, g := range now {
		if last, ok := f.held[i]; !ok || last != g {
			gained = append(gained, i)
		}
	}
	slices.Sort(gained)
	lost := false
	for i := range f.held {
		lost = lost || now[i] == 0
	}
	f.held = now
	handlers := slices.Clone(f.handlers)
	f.mu.Unlock()
	if len(gained) > 0 && f.taken != nil {
		f.taken()
	}
	if f.forget != nil && (lost || len(gained) > 0) {
		n := f.forget(func(ref objectref.Ref) bool { return !s.holds(ref) || slices.Contains(gained, s.shardOf(ref)) })
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
	feed *shardFeed
}

func (i shardedServices) Informer() cache.SharedIndexInformer {
	return shardedInformer{SharedIndexInformer: i.ServiceInformer.Informer(), feed: i.feed}
}

type shardedInformer struct {
	cache.SharedIndexInformer
	feed *shardFeed
}

func (i shardedInformer) AddEventHandler(h cache.ResourceEventHandler) (cache.ResourceEventHandlerRegistration, error) {
	return i.SharedIndexInformer.AddEventHandler(i.feed.filter(h))
}

func (i shardedInformer) AddEventHandlerWithResyncPeriod(h cache.ResourceEventHandler, resync time.Duration) (cache.ResourceEventHandlerRegistration, error) {
	return i.SharedIndexInformer.AddEventHandlerWithResyncPeriod(i.feed.filter(h), resync)
}

func (i shardedInformer) AddEventHandlerWithOptions(h cache.ResourceEventHandler, o cache.HandlerOptions) (cache.ResourceEventHandlerRegistration, error) {
	return i.SharedIndexInformer.AddEventHandlerWithOptions(i.feed.filter(h), o)
}

// filter keeps h, to call again for a shard taken, and returns it
// filtered to the Services of the shards held (a late renewal drops no
// event: EnsureLoadBalancer retries until the shard is owned again).
func (f *shardFeed) filter(h cache.ResourceEventHandler) cache.ResourceEventHandler {
	f.mu.Lock()
	f.handlers = append(f.handlers, h)
	f.mu.Unlock()
	return heldOnly{h: h, feed: f}
}

// heldOnly passes on the events of the Services of the shards held.
type heldOnly struct {
	h    cache.ResourceEventHandler
	feed *shardFeed
}

func (o heldOnly) OnAdd(obj any, initial bool) {
	if o.feed.holdsObject(obj) {
		o.h.OnAdd(obj, initial)
	}
}

func (o heldOnly) OnUpdate(old, cur any) {
	if o.feed.holdsObject(old) || o.feed.holdsObject(cur) {
		o.h.OnUpdate(old, cur)
	}
}

func (o heldOnly) OnDelete(obj any) {
	if o.feed.holdsObject(obj) {
		o.h.OnDelete(obj)
	}
}
