package servicelb

import (
	"context"
	"errors"
	"maps"
	"slices"
	"strconv"
	"testing"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/cache"

	"github.com/example/cloud-provider-example/annotations"
	"github.com/example/cloud-provider-example/objectref"
	"github.com/example/cloud-provider-example/shard"
)

// heldShards holds a fixed set of shards (a stand-in for shard.Holder,
// whose Leases shard's own tests run on a real API server): late ones are
// held with their renewal late (not owned); each shard newly in held
// gets a new generation.
type heldShards struct {
	n          int
	held, late []int

	taken      map[int]uint64
	generation uint64
}

func (h *heldShards) OwnsKey(key string) bool {
	i := shard.Of(key, h.n)
	return slices.Contains(h.held, i) && !slices.Contains(h.late, i)
}
func (h *heldShards) HoldsKey(key string) bool { return slices.Contains(h.held, shard.Of(key, h.n)) }
func (h *heldShards) Shards() int              { return h.n }

func (h *heldShards) Held() map[int]uint64 {
	next := map[int]uint64{}
	for _, i := range h.held {
		g, ok := h.taken[i]
		if !ok {
			h.generation++
			g = h.generation
		}
		next[i] = g
	}
	h.taken = next
	return maps.Clone(next)
}

// drop gives shard i back, so taking it again is a new generation
// (Holder.Held after a loss between two looks).
func (h *heldShards) drop(i int) {
	h.held = slices.DeleteFunc(h.held, func(j int) bool { return j == i })
	delete(h.taken, i)
}

// recorded records the events a handler hears, by Service name.
type recorded struct{ adds, updates, deletes []string }

func (r *recorded) OnAdd(obj any, _ bool) { r.adds = append(r.adds, obj.(*v1.Service).Name) }
func (r *recorded) OnUpdate(_, cur any)   { r.updates = append(r.updates, cur.(*v1.Service).Name) }
func (r *recorded) OnDelete(obj any)      { r.deletes = append(r.deletes, name(obj)) }
func name(obj any) string {
	if t, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		obj = t.Obj
	}
	return obj.(*v1.Service).Name
}

// noGrants places Services where no namespace consents to guests.
var noGrants = NewShards()

func shardedService(name, group string) *v1.Service {
	s := &v1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: name}}
	if group != "" {
		s.Annotations = map[string]string{string(annotations.LBGroup): group}
	}
	return s
}

// A Service's shard is its group's, or its own; the service controller's
// handlers hear of the Services of the shards held (of a Service moving
// between shards, on both sides), and again of a shard's Services when it
// is taken. The pools and the route set are the leader's.
func TestShardsFilterAndReplay(t *testing.T) {
	const n = 12
	a, b := shardedService("a", ""), shardedService("b", "")
	member := shardedService("m", "front")
	sa, sb := shard.Of(noGrants.shardRef(a).Key(), n), shard.Of(noGrants.shardRef(b).Key(), n)
	if sa == sb {
		t.Fatal("pick names in different shards")
	}
	if got, want := noGrants.shardRef(member), objectref.Group("shop", "front"); got != want {
		t.Fatalf("a member's shard object is %v, want its group %v", got, want)
	}
	h := &heldShards{n: n, held: []int{sa}}
	store := cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{})
	for _, s := range []*v1.Service{a, b, member} {
		if err := store.Add(s); err != nil {
			t.Fatal(err)
		}
	}
	s := NewShards()
	s.services = store
	s.current.Store(h)
	rec := &recorded{}
	f := s.feed.filter(rec)

	f.OnAdd(a, true)
	f.OnAdd(b, true)
	f.OnUpdate(b, a) // b's name to a's: of a shard held on one side
	f.OnDelete(cache.DeletedFinalStateUnknown{Key: "shop/b", Obj: b})
	f.OnDelete(a)
	if !slices.Equal(rec.adds, []string{"a"}) || !slices.Equal(rec.updates, []string{"a"}) || !slices.Equal(rec.deletes, []string{"a"}) {
		t.Fatalf("heard %+v, want a's events only", rec)
	}
	// The leader's objects: a pod pool of b's (in a shard nobody here
	// holds) is the leader's all the same, since the leader keeps them.
	set := objectref.RuleSet("infra", "gw", objectref.KindHTTPRoute, "shop", "a")
	pool := objectref.PodPool("shop", "b", 80, v1.ProtocolTCP)
	leaders := []objectref.Ref{objectref.TargetPools, objectref.RouteSet, set, pool}
	if !s.Owns(objectref.Service(a)) || s.Owns(objectref.Service(b)) || slices.ContainsFunc(leaders, s.Owns) {
		t.Fatal("owns: want a's Service, not b's, and the leader's objects only when leading")
	}
	s.leader.Store(true)
	for _, ref := range leaders {
		if !s.Owns(ref) {
			t.Fatalf("the leader does not own %s", ref.Describe())
		}
	}

	// b's shard is taken: its Services are heard again.
	s.feed.replayGained() // a's shard: already held at the first look
	rec.adds = nil
	h.held = append(h.held, sb)
	s.feed.replayGained()
	if !slices.Contains(rec.adds, "b") || slices.Contains(rec.adds, "a") {
		t.Fatalf("shard %d taken: heard %v, want b and not a", sb, rec.adds)
	}
	// Lost, then taken again: the engine forgets b's objects each time,
	// never a's.
	var forgot []string
	s.feed.forget = func(match func(objectref.Ref) bool) int {
		for _, svc := range []*v1.Service{a, b} {
			if match(objectref.Service(svc)) {
				forgot = append(forgot, svc.Name)
			}
		}
		return len(forgot)
	}
	h.drop(sb)
	s.feed.replayGained()
	h.held = []int{sa, sb}
	s.feed.replayGained()
	if !slices.Equal(forgot, []string{"b", "b"}) {
		t.Fatalf("shard %d lost and taken again: the engine forgot %v, want b twice", sb, forgot)
	}
	// Lost and taken again between two looks: a new generation, so its
	// Services are heard again and the engine forgets them.
	forgot, rec.adds = nil, nil
	h.drop(sb)
	h.held = append(h.held, sb)
	s.feed.replayGained()
	if !slices.Equal(forgot, []string{"b"}) || !slices.Equal(rec.adds, []string{"b"}) {
		t.Fatalf("shard %d lost and taken back between two looks: forgot %v, heard %v; want b once each", sb, forgot, rec.adds)
	}

	// A's shard with its renewal late: still held, so a's events are
	// heard and the engine keeps its objects, but not owned, so nothing
	// is planned for it until the renewal.
	h.late = []int{sa}
	forgot, rec.updates = nil, nil
	f.OnUpdate(a, a)
	s.feed.replayGained()
	if !slices.Equal(rec.updates, []string{"a"}) || len(forgot) > 0 {
		t.Fatalf("renewal late: heard %v, forgot %v; want a's update heard and nothing forgotten", rec.updates, forgot)
	}
	if s.Owns(objectref.Service(a)) || !s.holds(objectref.Service(a)) || !s.late(a) || s.late(b) {
		t.Fatal("renewal late: want a held, not owned, late; b neither")
	}
	// The service controller retries a's load balancer soon, and takes
	// neither a node set nor a deletion as done meanwhile.
	// (ccm's TestRenewalLateIsRetried: the adapter makes a retry of it.)
	l := &services{shared: &shared{shards: s}}
	if _, err := l.ensure(context.Background(), a, nil); !errors.Is(err, ErrRenewalLate) {
		t.Fatalf("ensure with the renewal late: %v; want %v", err, ErrRenewalLate)
	}
	if err := l.delete(context.Background(), a); !errors.Is(err, ErrRenewalLate) {
		t.Fatalf("delete with the renewal late: %v; want %v", err, ErrRenewalLate)
	}
}

// A shard's queue is its load balancer Services not converged at their
// current spec and annotations, and those to delete; converging one takes
// it off, a change puts it back, and what is kept of Services gone goes.
func TestShardQueueLengths(t *testing.T) {
	const n = 12
	lb := func(name string) *v1.Service {
		s := shardedService(name, "")
		s.UID = types.UID("uid-" + name)
		s.Generation = 1
		s.Spec.Type = v1.ServiceTypeLoadBalancer
		return s
	}
	a, b, other := lb("a"), lb("b"), lb("c")
	clusterIP := shardedService("internal", "")
	sa := shard.Of(noGrants.shardRef(a).Key(), n)
	// b and internal in a's shard, c in another.
	for _, svc := range []*v1.Service{b, other, clusterIP} {
		base := svc.Name
		for k := 0; shard.Of(noGrants.shardRef(svc).Key(), n) == sa == (svc == other); k++ {
			svc.Name = base + "-" + strconv.Itoa(k)
		}
	}
	h := &heldShards{n: n, held: []int{sa}}
	store := cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{})
	for _, svc := range []*v1.Service{a, b, other, clusterIP} {
		if err := store.Add(svc); err != nil {
			t.Fatal(err)
		}
	}
	s := NewShards()
	s.services = store
	queue := func() int {
		got := s.feed.queueLengths(h)
		if len(got) != 1 {
			t.Fatalf("queue lengths for %d shards, want the one owned: %v", len(got), got)
		}
		return got[sa]
	}
	if got := queue(); got != 2 {
		t.Fatalf("queue %d before any reconcile, want 2 (a and b; not the ClusterIP Service, not c of another shard)", got)
	}
	s.reconciled(a)
	s.reconciled(b)
	if got := queue(); got != 0 {
		t.Fatalf("queue %d with both converged, want 0", got)
	}

	a2 := a.DeepCopy()
	a2.Annotations = map[string]string{string(annotations.LBType): "lb21"}
	b2 := b.DeepCopy()
	b2.Generation = 2
	for _, svc := range []*v1.Service{a2, b2} {
		if err := store.Update(svc); err != nil {
			t.Fatal(err)
		}
	}
	if got := queue(); got != 2 {
		t.Fatalf("queue %d after an annotation and a spec change, want 2", got)
	}
	s.reconciled(a2)
	if got := queue(); got != 1 {
		t.Fatalf("queue %d with a converged again, want 1", got)
	}

	// b is deleted: its cleanup waits in the queue until the Service goes.
	b3 := b2.DeepCopy()
	now := metav1.Now()
	b3.DeletionTimestamp = &now
	b3.Finalizers = []string{"service.kubernetes.io/load-balancer-cleanup"}
	s.reconciled(b3)
	if err := store.Update(b3); err != nil {
		t.Fatal(err)
	}
	if got := queue(); got != 1 {
		t.Fatalf("queue %d with b deleting, want 1", got)
	}
	if err := store.Delete(b3); err != nil {
		t.Fatal(err)
	}
	if got := queue(); got != 0 {
		t.Fatalf("queue %d with b gone, want 0", got)
	}
	if _, kept := s.feed.converged.at[b.UID]; kept || len(s.feed.converged.at) != 1 {
		t.Errorf("converged keeps %v after b went; want only a", s.feed.converged.at)
	}
}
