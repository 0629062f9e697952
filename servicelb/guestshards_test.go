package servicelb

import (
	"context"
	"errors"
	"slices"
	"strconv"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/tools/cache"
	cloudprovider "k8s.io/cloud-provider"
	gatewayv1beta1 "sigs.k8s.io/gateway-api/apis/v1beta1"

	"github.com/example/cloud-provider-example/internal/testkit"
	"github.com/example/cloud-provider-example/objectref"
	"github.com/example/cloud-provider-example/shard"
	"github.com/example/cloud-provider-example/tenancy"
)

// A guest is its group's replica's only once the group's namespace
// consents, as read now: before the grants' first list (without waiting
// for it), without a grant, or naming a group no grant covers, it is
// sharded by its own key and the group's replica never hears of it; the
// grant read, it moves to the group's shard and that replica hears of it
// at its next look (once); the grant deleted or unreadable, it moves back.
// A Service of the group's own namespace is the group's whatever the
// grants.
func TestGuestShardFollowsConsent(t *testing.T) {
	const n = 12
	f := newGrantsFixtureWith(t, time.Hour, 0) // team-a's grant: Services of team-b may join front
	group := objectref.Group("team-a", "front")
	inGroup := shard.Of(group.Key(), n)
	guest := groupSvc("team-b", "guest", 0, "team-a/front", 80)
	for k := 0; shard.Of(objectref.Service(guest).Key(), n) == inGroup; k++ {
		guest.Name = "guest-" + strconv.Itoa(k)
	}
	stray := groupSvc("team-b", "stray", 0, "team-a/back", 80) // back: no grant
	home := groupSvc("team-a", "home", 0, "front", 80)
	store := cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{})
	for _, svc := range []*v1.Service{guest, stray, home} {
		testkit.Must(t, store.Add(svc))
	}
	h := &heldShards{n: n, held: []int{inGroup}} // the group's replica
	s := NewShards()
	s.services = store
	s.admits = f.refs.admitsNow
	s.current.Store(h)
	rec := &recorded{}
	filter := s.feed.filter(rec)

	start := time.Now()
	for _, svc := range []*v1.Service{guest, stray, home} {
		filter.OnAdd(svc, true)
	}
	if waited := time.Since(start); waited > 10*time.Second {
		t.Fatalf("the filter waited %s for the grants' first list", waited)
	}
	if got := s.shardRef(guest); got != objectref.Service(guest) {
		t.Fatalf("before the grants are read, the guest is sharded by %v, want its own key", got)
	}
	if !slices.Equal(rec.adds, []string{"home"}) {
		t.Fatalf("before the grants are read, the group's replica heard %v, want its home member only", rec.adds)
	}

	// The grants read: the guest is the group's, heard at the next look.
	testkit.Must(t, f.list(t))
	rec.adds = nil
	s.feed.moveGuests(h)
	s.feed.moveGuests(h)
	if got := s.shardRef(guest); got != group || !s.Owns(objectref.Service(guest)) {
		t.Fatalf("granted, the guest is sharded by %v (owned here: %v), want its group %v", got, s.Owns(objectref.Service(guest)), group)
	}
	if !slices.Equal(rec.adds, []string{guest.Name}) {
		t.Fatalf("granted, the group's replica heard %v, want the guest once", rec.adds)
	}
	if got := s.shardRef(stray); got != objectref.Service(stray) {
		t.Fatalf("a Service naming a group no grant covers is sharded by %v, want its own key", got)
	}

	// Taken back: its own again, and nothing more heard here.
	testkit.Must(t, f.w.Delete(grantObject(t, "team-a", "team-b", "front")))
	rec.adds, rec.updates = nil, nil
	s.feed.moveGuests(h)
	filter.OnUpdate(guest, guest)
	if got := s.shardRef(guest); got != objectref.Service(guest) || len(rec.adds)+len(rec.updates) > 0 {
		t.Fatalf("consent taken back: sharded by %v, heard %+v; want its own key, nothing heard", got, rec)
	}

	// Given again, then unreadable (a refused watch): own again.
	testkit.Must(t, f.w.Add(grantObject(t, "team-a", "team-b", "front")))
	s.feed.moveGuests(h)
	if !slices.Equal(rec.adds, []string{guest.Name}) {
		t.Fatalf("granted again, heard %v, want the guest", rec.adds)
	}
	restore := f.failWith("watch", forbidden)
	defer restore()
	if _, err := f.lw.WatchWithContext(t.Context(), metav1.ListOptions{}); err == nil {
		t.Fatal("a refused watch opened")
	}
	if got := s.shardRef(guest); got != objectref.Service(guest) {
		t.Fatalf("grants unreadable: sharded by %v, want its own key", got)
	}
	if got := s.shardRef(home); got != group {
		t.Fatalf("a home member is sharded by %v, want its group %v", got, group)
	}

	// Services gone are forgotten.
	for _, svc := range []*v1.Service{guest, stray} {
		testkit.Must(t, store.Delete(svc))
	}
	s.feed.moveGuests(h)
	if len(s.feed.guests.at) != 0 {
		t.Errorf("placements kept of Services gone: %v", s.feed.guests.at)
	}
}

// A guest reconciled on its own shard's replica because its consent was
// not read yet, whose consent the reconcile's authorization then reads
// (it waits for the grants' first list), is left to its group's replica:
// nothing is planned for it here.
func TestGuestReadAsGrantedIsLeftToItsGroupsReplica(t *testing.T) {
	const n = 12
	guest := groupSvc("team-b", "guest", 0, "team-a/front", 80)
	for k := 0; shard.Of(objectref.Service(guest).Key(), n) == shard.Of(objectref.Group("team-a", "front").Key(), n); k++ {
		guest.Name = "guest-" + strconv.Itoa(k)
	}
	grant := grantObject(t, "team-a", "team-b", "front")
	var g gatewayv1beta1.ReferenceGrant
	testkit.Must(t, runtime.DefaultUnstructuredConverter.FromUnstructured(grant.Object, &g))
	// The grants' first list: what a read that may wait (a live context)
	// waits for, and answers from afterwards.
	listed := false
	refs := &references{authorizer: &tenancy.Authorizer{Sources: tenancy.Sources{
		Grants: func(ctx context.Context, _ string) ([]gatewayv1beta1.ReferenceGrant, error) {
			listed = listed || ctx.Err() == nil
			if !listed {
				return nil, tenancy.ErrGrantsUnreadable
			}
			return []gatewayv1beta1.ReferenceGrant{g}, nil
		}}}}
	store := cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{})
	testkit.Must(t, store.Add(guest))
	own := shard.Of(objectref.Service(guest).Key(), n)
	s := NewShards()
	s.services = store
	s.admits = refs.admitsNow
	s.current.Store(&heldShards{n: n, held: []int{own}})
	b := newBoardFixture(t, "")
	sh := &shared{cfg: b.cfg, board: b.board, groups: newGroups(b.cfg), refs: refs, shards: s}
	l := &services{shared: sh, groupLBs: &groupLoadBalancers{shared: sh}}
	_, err := l.ensure(t.Context(), guest, nil)
	if !errors.Is(err, cloudprovider.ImplementedElsewhere) {
		t.Fatalf("EnsureLoadBalancer of a guest read as granted off its group's shard: %v, want %v", err, cloudprovider.ImplementedElsewhere)
	}
}
