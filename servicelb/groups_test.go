package servicelb

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/cache"
	"k8s.io/cloud-provider/api"

	"github.com/example/cloud-provider-example/annotations"
	"github.com/example/cloud-provider-example/engine"
	"github.com/example/cloud-provider-example/internal/testkit"
	"github.com/example/cloud-provider-example/lbmodel"
	"github.com/example/cloud-provider-example/objectref"
	"github.com/example/cloud-provider-example/records"
	"github.com/example/cloud-provider-example/review/reviewtest"
	"github.com/example/cloud-provider-example/tenancy"
)

// svc is a LoadBalancer Service created minute minutes in, in group
// (none if ""), with TCP ports (node port 30000+port, or 31000+port for
// names starting with "b").
func groupSvc(ns, name string, minute int, group string, ports ...int32) *v1.Service {
	s := &v1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, UID: types.UID("uid-" + ns + "-" + name),
		CreationTimestamp: metav1.NewTime(time.Date(2025, 1, 1, 0, minute, 0, 0, time.UTC))},
		Spec: v1.ServiceSpec{Type: v1.ServiceTypeLoadBalancer}}
	if group != "" {
		s.Annotations = map[string]string{string(annotations.LBGroup): group}
	}
	base := int32(30000)
	if strings.HasPrefix(name, "b") {
		base = 31000
	}
	for _, p := range ports {
		s.Spec.Ports = append(s.Spec.Ports, v1.ServicePort{Name: fmt.Sprint("p", p), Protocol: v1.ProtocolTCP, Port: p, NodePort: base + p})
	}
	return s
}

// Services join a group (one of them moving off a load balancer of its
// own, released once the group serves it), conflict over a port, are
// refused from another namespace, and leave; members applied before
// follow the group's load balancer when it is replaced; the last one
// leaving destroys it. Over the fakes: what servicelb asks of the engine
// and tells; the listeners and the replacements are the engine's (its
// TestGroupLifecycle, renderer's TestGroupReport; end to end
// TestServiceGroup).
func TestGroupMembersJoinMoveLeave(t *testing.T) {
	f := newFakeServices(t, "")
	f.services.client = f.client // members applied before follow the group's address
	a := groupSvc("shop", "a", 0, "", 80)
	ipA, err := f.ensure(t, a)
	testkit.Must(t, err)
	b := groupSvc("shop", "b", 1, "front", 80, 8080)
	ipG, err := f.ensure(t, b)
	testkit.Must(t, err)
	if ipG == ipA {
		t.Fatal("the group has a's address")
	}

	// a joins: it is older, so port 80 is a's (the engine's report says
	// so); b is told. a's own load balancer is released once the group
	// serves it.
	f.groups.own = f.lbs.lb
	a = a.DeepCopy()
	a.Annotations = map[string]string{string(annotations.LBGroup): "front"}
	f.groups.conflicts = []engine.ListenerConflict{{Service: b, Listener: "tcp/80", Winner: a}}
	if ip, err := f.ensure(t, a); err != nil || ip != ipG {
		t.Fatalf("a joins: %s %v, want %s", ip, err, ipG)
	}
	if got := f.groups.reconciled[len(f.groups.reconciled)-1]; !slices.Equal(got, []string{"a", "b"}) || !slices.Equal(f.groups.released, []string{"shop/a"}) {
		t.Fatalf("group reconciled with %q, released %q: want a first, and a's own released", got, f.groups.released)
	}
	evs := f.takeEvents()
	conflict := slices.IndexFunc(evs, func(e reviewtest.Event) bool { return e.Reason == "ListenerConflict" })
	if conflict < 0 || !strings.Contains(evs[conflict].Message, "tcp/80") || !strings.Contains(evs[conflict].Message, "shop/a") {
		t.Fatalf("no conflict event naming a: %v", evs)
	}
	ws := f.groups.workspace(lbmodel.Group{Namespace: "shop", Name: "front"})
	rec := f.get(t, ws)
	if rec == nil || rec.Object.Kind != objectref.KindServiceGroup || len(rec.Members) != 2 || rec.Members[0].Name != "a" {
		t.Fatalf("group record %+v", rec)
	}
	// Asking again says nothing again; a is read as the group's.
	if ip, err := f.ensure(t, b); err != nil || ip != ipG {
		t.Fatal(ip, err)
	}
	if evs := f.takeEvents(); slices.Contains(reviewtest.Reasons(evs), "ListenerConflict") {
		t.Fatalf("conflict reported again: %v", evs)
	}
	if st, exists, err := f.services.get(t.Context(), a); err != nil || !exists || st.Ingress[0].IP != ipG {
		t.Fatalf("get a: %+v %v %v", st, exists, err)
	}

	// The primary's change replaces the group's load balancer: b, a
	// member applied before, follows its new address (the service
	// controller sets b's status only on b's own calls).
	f.groups.lb = &engine.LoadBalancer{ID: "lb-g2", Status: "active", IPv4: "10.255.0.2"}
	a = a.DeepCopy()
	a.Annotations[string(annotations.LBInternal)] = "true"
	if ip, err := f.ensure(t, a); err != nil || ip != "10.255.0.2" {
		t.Fatalf("internal primary: %s %v", ip, err)
	}
	if in := f.status(t, "shop", "b"); len(in) != 1 || in[0].IP != "10.255.0.2" {
		t.Fatalf("b's status did not follow the group's new address: %v", in)
	}

	// A Service of another namespace, without shop's consent, is
	// refused: not added.
	reconciles := len(f.groups.reconciled)
	_, err = f.ensure(t, groupSvc("edge", "c", 2, "shop/front", 9090))
	var refused *tenancy.RefusedError
	if !errors.As(err, &refused) || !slices.Contains(reviewtest.Reasons(f.takeEvents()), "ReferenceRefused") {
		t.Fatalf("cross-namespace member: %v", err)
	}
	if len(f.groups.reconciled) != reconciles {
		t.Fatalf("the refused member was reconciled into the group: %q", f.groups.reconciled[reconciles:])
	}

	// a is deleted: the group goes on with b alone, its load balancer
	// replaced again, and b follows.
	f.groups.conflicts = nil
	f.groups.lb = &engine.LoadBalancer{ID: "lb-g3", Status: "active", IPv4: "203.0.113.30"}
	a = a.DeepCopy()
	now := metav1.Now()
	a.DeletionTimestamp = &now
	f.put(t, a)
	testkit.Must(t, f.services.delete(t.Context(), a))
	if got := f.groups.reconciled[len(f.groups.reconciled)-1]; !slices.Equal(got, []string{"b"}) {
		t.Fatalf("after a left, the group reconciled with %q, want b", got)
	}
	if in := f.status(t, "shop", "b"); len(in) != 1 || in[0].IP != "203.0.113.30" {
		t.Fatalf("b's status after the internal primary left: %v", in)
	}
	if rec := f.get(t, ws); len(rec.Members) != 1 || rec.Members[0].Name != "b" {
		t.Fatalf("members after a left: %+v", rec.Members)
	}

	// b leaves the group for a load balancer of its own: the group had
	// no other member, so it is destroyed once b's own serves (b's
	// status shows the group's address still: its own is read from the
	// cloud).
	b, err = f.client.CoreV1().Services("shop").Get(t.Context(), "b", metav1.GetOptions{})
	testkit.Must(t, err)
	b.Annotations = nil
	f.cloud.serve(f.cfg, b, f.lbs.lb.ID, f.lbs.lb.IPv4)
	reconciles = f.lbs.reconciles
	if ip, err := f.ensure(t, b); err != nil || ip != f.lbs.lb.IPv4 || f.lbs.reconciles != reconciles+1 {
		t.Fatalf("b's own load balancer: %s %v, %d reconciles", ip, err, f.lbs.reconciles-reconciles)
	}
	if !slices.Equal(f.groups.removed, []string{"shop/front"}) {
		t.Fatalf("removed %q, want the group's load balancer once its last member left", f.groups.removed)
	}
	if rec := f.get(t, ws); rec != nil {
		t.Fatalf("the group's record survived it: %+v", rec)
	}
}

// Moving into a group: the group is created at once, but the destroy
// of the Service's own load balancer waits for approval; meanwhile the
// call is retried and both serve. Over the fakes: that the default rules
// hold a destroy for approval is the engine's (its review tests); what
// servicelb does with the wait is tested here.
func TestGroupMoveWaitsForTheOldDestroy(t *testing.T) {
	f := newFakeServices(t, "")
	nodes := []*v1.Node{{}}
	a := groupSvc("shop", "a", 0, "", 80)
	_, err := f.services.ensure(t.Context(), a, nodes)
	testkit.Must(t, err)
	f.groups.own, f.groups.releaseErr = f.lbs.lb, &engine.AwaitingApprovalError{PlanID: "p1", Policy: annotations.ApplyAuto}
	a = a.DeepCopy()
	a.Annotations = map[string]string{string(annotations.LBGroup): "front"}
	testkit.Must(t, f.services.groups.services.Add(a))
	_, err = f.services.ensure(t.Context(), a, nodes)
	var retry *api.RetryError
	if !errors.As(err, &retry) || !strings.Contains(err.Error(), "awaiting approval") {
		t.Fatalf("move: %v, want a retry awaiting approval; events %v", err, f.takeEvents())
	}
	if !slices.Equal(f.groups.released, []string{"shop/a"}) || len(f.lbs.removed) != 0 {
		t.Fatalf("released %q, removed %q: want a's own asked once, and kept while it waits", f.groups.released, f.lbs.removed)
	}
	if !slices.EqualFunc(f.groups.reconciled, [][]string{{"a"}}, slices.Equal) {
		t.Fatalf("group reconciled with %q, want it created with a at once", f.groups.reconciled)
	}
	evs := f.takeEvents()
	i := slices.IndexFunc(evs, func(e reviewtest.Event) bool { return e.Reason == "AwaitingApproval" })
	if i < 0 || !strings.Contains(evs[i].Message, "examplectl approve shop/a") {
		t.Fatalf("events %v", evs)
	}
}

// Membership without terraform: a group's members from the informer (the
// call's own Service wins over its cached copy), refusals, and what a
// controller that starts reads from the records.
func TestGroupMembership(t *testing.T) {
	cfg := testConfig(t, "")
	gs := newGroups(cfg)
	idx := cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{groupIndex: groupIndexFunc})
	gs.services = idx
	front := annotations.Group{Namespace: "shop", Name: "front"}
	a, b := groupSvc("shop", "a", 0, "front", 80), groupSvc("shop", "b", 1, "shop/front", 81)
	gone := groupSvc("shop", "gone", 2, "front", 82)
	now := metav1.Now()
	gone.DeletionTimestamp = &now
	plain := groupSvc("shop", "plain", 3, "front", 83)
	plain.Spec.Type = v1.ServiceTypeClusterIP
	guest := groupSvc("edge", "guest", 4, "shop/front", 84)
	// mallory's: annotations that parse, made an error by
	// spec.loadBalancerIP on an internal load balancer; no grant.
	sly := groupSvc("edge", "sly", 6, "shop/front", 86)
	sly.Annotations[string(annotations.LBInternal)] = "true"
	sly.Spec.LoadBalancerIP = "203.0.113.7"
	for _, s := range []*v1.Service{a, b, gone, plain, guest, sly} {
		testkit.Must(t, idx.Add(s))
	}
	names := func(ss []*v1.Service) []string {
		var out []string
		for _, s := range engine.SortMembers("shop", ss) {
			out = append(out, s.Namespace+"/"+s.Name)
		}
		return out
	}
	if got := names(gs.members(front, nil, false)); !slices.Equal(got, []string{"shop/a", "shop/b"}) {
		t.Errorf("members %v", got)
	}
	if got := names(gs.members(front, a, true)); !slices.Equal(got, []string{"shop/b"}) {
		t.Errorf("a leaving: %v", got)
	}
	fresh := groupSvc("shop", "new", 5, "front", 85) // not in the informer yet
	if got := names(gs.members(front, fresh, false)); !slices.Equal(got, []string{"shop/a", "shop/b", "shop/new"}) {
		t.Errorf("the call's Service: %v", got)
	}
	if _, err := gs.of(guest); err == nil {
		t.Error("a guest was accepted without a ReferenceGrant")
	}
	if _, err := gs.of(sly); err == nil {
		t.Error("a guest whose annotations are in error was accepted without a ReferenceGrant")
	}
	if g, err := gs.of(groupSvc("shop", "x", 0, "Bad_Name", 1)); err == nil || g.Name != "" {
		t.Errorf("an invalid annotation: %+v %v", g, err)
	}
	cross := newGroups(testConfig(t, ""))
	cross.services = idx
	cross.refs = granting(t, "shop", "edge", "front")
	if got := names(cross.members(front, nil, false)); !slices.Equal(got, []string{"shop/a", "shop/b", "edge/guest", "edge/sly"}) {
		t.Errorf("with shop's ReferenceGrant: %v (guests after the home members; sly a member the renderer leaves out)", got)
	}

	// A controller that starts reads which groups each Service was in.
	lists := 0
	gs.records = func(context.Context) ([]*records.Record, error) {
		lists++
		return []*records.Record{
			{Object: objectref.Ref{Kind: objectref.KindServiceGroup, Namespace: "shop", Name: "front"}, Members: memberRefs([]*v1.Service{a, b})},
			{Object: objectref.Ref{Kind: objectref.KindService, Namespace: "shop", Name: "a"}},
		}, nil
	}
	if got := gs.formerOf(t.Context(), a); !slices.Equal(got, []annotations.Group{front}) {
		t.Errorf("a was in %v", got)
	}
	other := a.DeepCopy()
	other.UID = "uid-another-a"
	if got := gs.formerOf(t.Context(), other); len(got) != 0 {
		t.Errorf("a new Service of a's name was in %v", got)
	}
	// A plan waiting keeps the members it would remove; applied, they go.
	gs.remember(front, []*v1.Service{b}, false)
	if !gs.appliedMember(t.Context(), front, a) {
		t.Error("a was forgotten while the plan removing it waits")
	}
	if got := gs.followers(front, []*v1.Service{a, b}, b); len(got) != 1 || got[0] != a {
		t.Errorf("followers %v", got)
	}
	gs.remember(front, []*v1.Service{b}, true)
	if gs.appliedMember(t.Context(), front, a) {
		t.Error("a is still a member once the plan without it applied")
	}
	gs.remember(front, nil, true)
	if len(gs.formerOf(t.Context(), b)) != 0 || lists != 1 {
		t.Errorf("after the group went: %v, %d lists", gs.formerOf(t.Context(), b), lists)
	}
}

// A group belongs to its namespace: a guest alone waits (no load
// balancer), and a guest's plan-only policy governs nothing of the
// owner's (issue 19: a guest froze the owner's changes). Over the fakes:
// who governs is servicelb's decision; the listeners the engine renders
// for the members are its own (its group tests).
func TestGroupGuestsGovernNothing(t *testing.T) {
	f := newFakeServices(t, "review: {policy: {rules: []}}\n")
	refs := granting(t, "shop", "edge", "front")
	f.services.refs, f.services.groups.refs = refs, refs
	nodes := []*v1.Node{{}}

	guest := groupSvc("edge", "g", 1, "shop/front", 9090)
	guest.Annotations[string(annotations.LBApplyPolicy)] = string(annotations.ApplyPlanOnly)
	testkit.Must(t, f.services.groups.services.Add(guest))
	if _, err := f.services.ensure(t.Context(), guest, nodes); err == nil || !strings.Contains(err.Error(), "no member in its own namespace shop") {
		t.Fatalf("a guest alone: %v", err)
	}
	if !slices.Contains(reviewtest.Reasons(f.takeEvents()), "GroupWithoutHomeMember") {
		t.Fatal("the guest is not told why it waits")
	}
	if len(f.groups.reconciled) != 0 {
		t.Fatalf("a guest alone reconciled the group: %q", f.groups.reconciled)
	}

	// The owner joins: applied under the cluster's auto policy, the
	// guest's plan-only notwithstanding, with both members.
	owner := groupSvc("shop", "a", 2, "front", 80)
	testkit.Must(t, f.services.groups.services.Add(owner))
	if _, err := f.services.ensure(t.Context(), owner, nodes); err != nil {
		t.Fatalf("the owner, with a plan-only guest: %v", err)
	}
	if len(f.groups.reconciled) != 1 || !slices.Equal(f.groups.policies, []annotations.ApplyPolicy{annotations.ApplyAuto}) {
		t.Fatalf("group reconciled with %q under %q, want once under auto", f.groups.reconciled, f.groups.policies)
	}
	if got := f.groups.reconciled[0]; len(got) != 2 || !slices.Contains(got, "a") || !slices.Contains(got, "g") {
		t.Fatalf("members %q, want the owner and the guest", got)
	}
}
