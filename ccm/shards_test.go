package ccm

import (
	"slices"
	"testing"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/cache"

	"github.com/example/cloud-provider-example/annotations"
	"github.com/example/cloud-provider-example/objectref"
	"github.com/example/cloud-provider-example/shard"
)

// heldShards holds a fixed set of shards (a stand-in for shard.Holder,
// whose Leases shard's own tests run on a real API server).
type heldShards struct {
	n    int
	held []int
}

func (h *heldShards) OwnsKey(key string) bool { return slices.Contains(h.held, shard.Of(key, h.n)) }
func (h *heldShards) Owned() []int            { return slices.Clone(h.held) }
func (h *heldShards) Shards() int             { return h.n }

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
	sa, sb := shard.Of(shardRef(a).Key(), n), shard.Of(shardRef(b).Key(), n)
	if sa == sb {
		t.Fatal("pick names in different shards")
	}
	if got, want := shardRef(member), objectref.Group("shop", "front"); got != want {
		t.Fatalf("a member's shard object is %v, want its group %v", got, want)
	}
	h := &heldShards{n: n, held: []int{sa}}
	store := cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{})
	for _, s := range []*v1.Service{a, b, member} {
		if err := store.Add(s); err != nil {
			t.Fatal(err)
		}
	}
	s := &shards{services: store}
	s.held.Store(h)
	rec := &recorded{}
	f := s.filter(rec)

	f.OnAdd(a, true)
	f.OnAdd(b, true)
	f.OnUpdate(b, a) // b's name to a's: of a shard held on one side
	f.OnDelete(cache.DeletedFinalStateUnknown{Key: "shop/b", Obj: b})
	f.OnDelete(a)
	if !slices.Equal(rec.adds, []string{"a"}) || !slices.Equal(rec.updates, []string{"a"}) || !slices.Equal(rec.deletes, []string{"a"}) {
		t.Fatalf("heard %+v, want a's events only", rec)
	}
	if !s.owns(objectref.Service(a)) || s.owns(objectref.Service(b)) || s.owns(objectref.TargetPools) || s.owns(objectref.RouteSet) {
		t.Fatal("owns: want a's Service, not b's, and the cluster's workspaces only when leading")
	}
	s.leader.Store(true)
	if !s.owns(objectref.TargetPools) || !s.owns(objectref.RouteSet) {
		t.Fatal("the leader does not own the cluster's workspaces")
	}

	// b's shard is taken: its Services are heard again.
	s.replayGained() // a's shard: already held at the first look
	rec.adds = nil
	h.held = append(h.held, sb)
	s.replayGained()
	if !slices.Contains(rec.adds, "b") || slices.Contains(rec.adds, "a") {
		t.Fatalf("shard %d taken: heard %v, want b and not a", sb, rec.adds)
	}
	// Lost, then taken again: the engine forgets b's objects each time,
	// never a's.
	var forgot []string
	s.forget = func(match func(objectref.Ref) bool) int {
		for _, svc := range []*v1.Service{a, b} {
			if match(objectref.Service(svc)) {
				forgot = append(forgot, svc.Name)
			}
		}
		return len(forgot)
	}
	h.held = []int{sa}
	s.replayGained()
	h.held = []int{sa, sb}
	s.replayGained()
	if !slices.Equal(forgot, []string{"b", "b"}) {
		t.Fatalf("shard %d lost and taken again: the engine forgot %v, want b twice", sb, forgot)
	}
}
