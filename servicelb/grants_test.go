package servicelb

import (
	"context"
	"errors"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"
	dynamicfake "k8s.io/client-go/dynamic/fake"
	k8stesting "k8s.io/client-go/testing"
	"k8s.io/client-go/tools/cache"

	"github.com/example/cloud-provider-example/annotations"
	"github.com/example/cloud-provider-example/internal/testkit"
	"github.com/example/cloud-provider-example/objectref"
	"github.com/example/cloud-provider-example/records"
	"github.com/example/cloud-provider-example/referencegrants"
	"github.com/example/cloud-provider-example/tenancy"
)

// grantsFixture is a grant watch driven by hand: its list-watch over a
// fake API server whose answers the test chooses, the reflector's store
// calls made by the test; what the listener is told is kept.
type grantsFixture struct {
	w    *referencegrants.Watch
	dyn  *dynamicfake.FakeDynamicClient
	lw   *cache.ListWatch
	refs *references
	told []string
}

func newGrantsFixture(t *testing.T) *grantsFixture {
	// A read before the first list does not wait for it here.
	return newGrantsFixtureWith(t, time.Millisecond, 0)
}

// newGrantsFixtureWith is newGrantsFixture with a read waiting firstList
// for the first list, and watches bounded by recheck (0: the default).
func newGrantsFixtureWith(t *testing.T, firstList, recheck time.Duration) *grantsFixture {
	f := &grantsFixture{w: referencegrants.New(referencegrants.Options{Name: "referencegrants", Consents: "guests", FirstList: firstList, Recheck: recheck}),
		dyn: grantsClient(t, "team-a", "team-b", "front")}
	f.w.OnChange(func(ns string) { f.told = append(f.told, ns) })
	f.lw = f.w.ListWatch(referencegrants.FromDynamic(f.dyn))
	f.refs = &references{grants: f.w, authorizer: &tenancy.Authorizer{Sources: tenancy.Sources{Grants: f.w.Read}}}
	return f
}

// list is the reflector's list: the list-watch's List, stored when it
// succeeds.
func (f *grantsFixture) list(t *testing.T) error {
	t.Helper()
	obj, err := f.lw.ListWithContext(t.Context(), metav1.ListOptions{})
	if err != nil {
		return err
	}
	items, err := meta.ExtractList(obj)
	testkit.Must(t, err)
	list := make([]any, len(items))
	for i, item := range items {
		list[i] = item
	}
	return f.w.Replace(list, "")
}

// failWith makes the fake API server answer verb on ReferenceGrants with
// err until the returned func is called.
func (f *grantsFixture) failWith(verb string, err error) (restore func()) {
	if verb == "watch" {
		f.dyn.PrependWatchReactor("referencegrants", func(k8stesting.Action) (bool, watch.Interface, error) { return true, nil, err })
		return func() { f.dyn.WatchReactionChain = f.dyn.WatchReactionChain[1:] }
	}
	f.dyn.PrependReactor(verb, "referencegrants", func(k8stesting.Action) (bool, runtime.Object, error) { return true, nil, err })
	return func() { f.dyn.ReactionChain = f.dyn.ReactionChain[1:] }
}

// joins decides whether team-b's Service may join team-a/front now: nil,
// or the refusal's text.
func (f *grantsFixture) joins(t *testing.T) error {
	t.Helper()
	guest := groupSvc("team-b", "guest", 0, "team-a/front", 80)
	err := f.refs.authorize(t.Context(), annotations.Read(guest))
	var refused *tenancy.RefusedError
	if err != nil && !errors.As(err, &refused) {
		t.Fatalf("grants decided nothing (an error, not a refusal): %v", err)
	}
	return err
}

func (f *grantsFixture) takeTold() []string {
	out := f.told
	f.told = nil
	return out
}

// awaitGrantChanges listens to refs' grant changes, which arrive from the
// watch's goroutine: the function returned waits for the next one and
// fails t, naming what, unless it is told for namespace ns within 10s.
func awaitGrantChanges(t *testing.T, refs *references, ns string) func(what string) {
	told := make(chan string, 10)
	refs.grants.OnChange(func(ns string) { told <- ns })
	return func(what string) {
		t.Helper()
		select {
		case got := <-told:
			if got != ns {
				t.Fatalf("%s: told %q", what, got)
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("%s: not told within 10s", what)
		}
	}
}

var (
	forbidden = apierrors.NewForbidden(schema.GroupResource{Group: "gateway.networking.k8s.io", Resource: "referencegrants"}, "", errors.New("RBAC: no rule"))
	notServed = apierrors.NewNotFound(schema.GroupResource{Group: "gateway.networking.k8s.io", Resource: "referencegrants"}, "")
)

// Consent follows what can be read: before the first list, after a failed
// list or watch, nobody consents (a refusal, never the grants read
// before); a list stored, or a watch that opens again, makes the grants
// count again; each flip of readability reconciles every group with
// guests; without the API nobody consents, quietly, until it is served.
func TestGrantsReadability(t *testing.T) {
	f := newGrantsFixture(t)
	if err := f.joins(t); err == nil || !strings.Contains(err.Error(), "cannot read the ReferenceGrants of namespace team-a") {
		t.Fatalf("before the first list: %v, want a refusal", err)
	}
	testkit.Must(t, f.list(t))
	if err := f.joins(t); err != nil {
		t.Fatalf("granted and listed: %v", err)
	}
	if told := f.takeTold(); len(told) != 0 {
		t.Errorf("the first list told %q: every Service is reconciled after a start anyway", told)
	}

	// RBAC taken away: the watch reopens (it does every recheck) and is
	// refused; the grant still exists, but cannot be read.
	restore := f.failWith("watch", forbidden)
	if _, err := f.lw.WatchWithContext(t.Context(), metav1.ListOptions{}); err == nil {
		t.Fatal("a refused watch opened")
	}
	if err := f.joins(t); err == nil || !strings.Contains(err.Error(), "cannot read") {
		t.Fatalf("after a refused watch: %v, want a refusal", err)
	}
	if told := f.takeTold(); !slices.Equal(told, []string{""}) {
		t.Errorf("unreadable told %q, want every namespace", told)
	}
	// The reflector lists then: refused too, still unreadable, said once.
	restoreList := f.failWith("list", forbidden)
	if err := f.list(t); err == nil {
		t.Fatal("a refused list succeeded")
	}
	if err := f.joins(t); err == nil {
		t.Fatal("after a refused list, the grant read before still allows")
	}
	if told := f.takeTold(); len(told) != 0 {
		t.Errorf("unreadable again told %q", told)
	}
	// RBAC given back: the next list counts.
	restore()
	restoreList()
	testkit.Must(t, f.list(t))
	if err := f.joins(t); err != nil {
		t.Fatalf("readable again: %v", err)
	}
	if told := f.takeTold(); !slices.Equal(told, []string{""}) {
		t.Errorf("readable again told %q, want every namespace", told)
	}

	// A watch that fails and opens again (a connection refused, retried
	// from where it was): readable again, without a list.
	restore = f.failWith("watch", apierrors.NewInternalError(errors.New("etcd down")))
	_, err := f.lw.WatchWithContext(t.Context(), metav1.ListOptions{})
	restore()
	if err == nil || f.joins(t) == nil {
		t.Fatalf("a failed watch: %v, and the grant still allows", err)
	}
	w, err := f.lw.WatchWithContext(t.Context(), metav1.ListOptions{})
	testkit.Must(t, err)
	w.Stop()
	if err := f.joins(t); err != nil {
		t.Fatalf("the watch open again: %v", err)
	}
	f.takeTold()

	// The grant deleted (a watch event to the store): refused, and its
	// namespace's groups are told.
	testkit.Must(t, f.w.Delete(grantObject(t, "team-a", "team-b", "front")))
	if err := f.joins(t); err == nil || !strings.Contains(err.Error(), "has no ReferenceGrant") {
		t.Fatalf("after the grant's deletion: %v", err)
	}
	testkit.Must(t, f.w.Add(grantObject(t, "team-a", "team-b", "front")))
	if err := f.joins(t); err != nil {
		t.Fatalf("granted again: %v", err)
	}
	if told := f.takeTold(); !slices.Equal(told, []string{"team-a", "team-a"}) {
		t.Errorf("a deletion and an addition told %q", told)
	}
	// A list that differs in one namespace tells that namespace only.
	_, err = f.dyn.Resource(referencegrants.Resource).Namespace("team-c").Create(t.Context(), grantObject(t, "team-c", "team-b", ""), metav1.CreateOptions{})
	testkit.Must(t, err)
	testkit.Must(t, f.list(t))
	if told := f.takeTold(); !slices.Equal(told, []string{"team-c"}) {
		t.Errorf("a list with a new grant in team-c told %q", told)
	}
}

// Without the ReferenceGrant API nobody consents, in the words of a
// missing grant; the watch waits quietly (no error for the reflector to
// log) and, once the API is served, has the reflector list anew.
func TestGrantsWithoutTheAPI(t *testing.T) {
	f := newGrantsFixtureWith(t, time.Millisecond, time.Hour) // the idle watch is stopped by the test
	restoreList := f.failWith("list", notServed)
	testkit.Must(t, f.list(t))
	if err := f.joins(t); err == nil || !strings.Contains(err.Error(), "has no ReferenceGrant") {
		t.Fatalf("without the API: %v, want a refusal for want of a grant", err)
	}
	restoreWatch := f.failWith("watch", notServed)
	w, err := f.lw.WatchWithContext(t.Context(), metav1.ListOptions{})
	if err != nil {
		t.Fatalf("the watch without the API: %v, want a quiet one", err)
	}
	w.Stop()
	if _, open := <-w.ResultChan(); open {
		t.Fatal("the idle watch sent an event")
	}
	// Installed: the watch opens, and is turned into a fresh list.
	restoreList()
	restoreWatch()
	if _, err := f.lw.WatchWithContext(t.Context(), metav1.ListOptions{}); !apierrors.IsResourceExpired(err) {
		t.Fatalf("the API served again: %v, want an expired watch (a new list)", err)
	}
	testkit.Must(t, f.list(t))
	if err := f.joins(t); err != nil {
		t.Fatalf("the API and the grant served: %v", err)
	}
	if told := f.takeTold(); !slices.Equal(told, []string{""}) {
		t.Errorf("the API served told %q, want every namespace", told)
	}
}

// The watch itself, over the fake API server: a grant deleted and
// created is followed, and told to the listener.
func TestGrantsFollowTheWatch(t *testing.T) {
	dyn := grantsClient(t, "team-a", "team-b", "front")
	// The fake API server tells a watch only what happens after it is
	// registered: the test changes grants once the reflector watches.
	watching := make(chan struct{})
	var once sync.Once
	dyn.PrependWatchReactor("referencegrants", func(a k8stesting.Action) (bool, watch.Interface, error) {
		w, err := dyn.Tracker().Watch(a.GetResource(), a.GetNamespace())
		once.Do(func() { close(watching) })
		return true, w, err
	})
	refs := newReferences(testConfig(t, ""), nil)
	wait := awaitGrantChanges(t, refs, "team-a")
	refs.watchGrants(t.Context(), dyn)
	guest := groupSvc("team-b", "guest", 0, "team-a/front", 80)
	if err := refs.authorize(t.Context(), annotations.Read(guest)); err != nil {
		t.Fatalf("listed grant: %v", err)
	}
	select {
	case <-watching:
	case <-time.After(10 * time.Second):
		t.Fatal("the grants were not watched within 10s")
	}
	grants := dyn.Resource(referencegrants.Resource).Namespace("team-a")
	testkit.Must(t, grants.Delete(t.Context(), "g", metav1.DeleteOptions{}))
	wait("deleted")
	var refused *tenancy.RefusedError
	if err := refs.authorize(t.Context(), annotations.Read(guest)); !errors.As(err, &refused) {
		t.Fatalf("after the grant's deletion: %v, want a refusal", err)
	}
	_, err := grants.Create(t.Context(), grantObject(t, "team-a", "team-b", "front"), metav1.CreateOptions{})
	testkit.Must(t, err)
	wait("created")
	if err := refs.authorize(t.Context(), annotations.Read(guest)); err != nil {
		t.Fatalf("granted again: %v", err)
	}
}

// A grant change in a namespace queues the groups of that namespace that
// have a guest (a Service of another namespace naming them) or had one
// (applied with it); a flip of readability those of every namespace.
func TestGrantChangeQueuesGroupsWithGuests(t *testing.T) {
	gs := newGroups(testConfig(t, ""))
	idx := cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{groupIndex: groupIndexFunc})
	gs.services = idx
	// shop/front has a guest now; shop/back home members only; shop/side
	// had a guest (applied, below) that is gone; edge/edge-group is
	// another namespace's group, with a guest from shop.
	for _, s := range []*v1.Service{
		groupSvc("shop", "a", 0, "front", 80), groupSvc("edge", "g", 1, "shop/front", 81),
		groupSvc("shop", "b", 2, "back", 82),
		groupSvc("shop", "c", 3, "side", 83),
		groupSvc("edge", "x", 4, "edge-group", 84), groupSvc("shop", "y", 5, "edge/edge-group", 85),
	} {
		testkit.Must(t, idx.Add(s))
	}
	gs.records = func(context.Context) ([]*records.Record, error) {
		return []*records.Record{{
			Object:  objectref.Ref{Kind: objectref.KindServiceGroup, Namespace: "shop", Name: "side"},
			Members: []objectref.Ref{{Namespace: "shop", Name: "c"}, {Namespace: "edge", Name: "old"}},
		}}, nil
	}
	l := &groupLoadBalancers{shared: &shared{groups: gs}, consent: newConsentQueue()}
	queued := func(key annotations.Group) []string {
		l.consentOnce(t.Context(), key)
		var out []string
		for l.consent.Len() > 0 {
			g, _ := l.consent.Get()
			out = append(out, g.String())
			l.consent.Forget(g)
			l.consent.Done(g)
		}
		slices.Sort(out)
		return out
	}
	if got := queued(annotations.Group{Namespace: "shop"}); !slices.Equal(got, []string{"shop/front", "shop/side"}) {
		t.Errorf("a grant change in shop queued %v", got)
	}
	if got := queued(annotations.Group{Namespace: "edge"}); !slices.Equal(got, []string{"edge/edge-group"}) {
		t.Errorf("a grant change in edge queued %v", got)
	}
	if got := queued(annotations.Group{Namespace: "nobody"}); len(got) != 0 {
		t.Errorf("a grant change in a namespace without groups queued %v", got)
	}
	if got := queued(annotations.Group{}); !slices.Equal(got, []string{"edge/edge-group", "shop/front", "shop/side"}) {
		t.Errorf("a flip of readability queued %v", got)
	}
}
