package servicelb

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	dynamicfake "k8s.io/client-go/dynamic/fake"
	"k8s.io/client-go/tools/cache"
	"k8s.io/cloud-provider/api"

	"github.com/example/cloud-provider-example/annotations"
	"github.com/example/cloud-provider-example/engine"
	"github.com/example/cloud-provider-example/exampleapi"
	"github.com/example/cloud-provider-example/internal/testkit"
	"github.com/example/cloud-provider-example/lbmodel"
	"github.com/example/cloud-provider-example/objectref"
	"github.com/example/cloud-provider-example/records"
	"github.com/example/cloud-provider-example/referencegrants"
	"github.com/example/cloud-provider-example/review/reviewtest"
)

// Fakes of the engine, one per part's interface (unit tests only): they
// run no terraform and record what they were asked. The board is the
// real one over client-go's fake clientset (board_test.go).

// fakeLBEngine is a Service's own load balancer (serviceEngine): reconcile
// answers lb, or err.
type fakeLBEngine struct {
	lb  *engine.LoadBalancer
	err error
	// check is CheckService's answer (the engine's own refusal).
	check error
	// reconciles counts the reconciles asked.
	reconciles int
	// onPool is the pool the last reconcile forwarded to ("" for its
	// nodes), onPods its pod pools (target type ip); nodes the nodes it
	// listed; removed the Services destroyed,
	// retained those handed over.
	onPool   string
	onPods   map[lbmodel.ServicePort]string
	nodes    []*v1.Node
	removed  []string
	retained []string
}

func (e *fakeLBEngine) ForceUnlock(context.Context, engine.Job, string) error { return nil }
func (e *fakeLBEngine) LoadBalancerName(in *annotations.Service) string       { return in.Name }
func (e *fakeLBEngine) CheckService(*annotations.Service) error               { return e.check }
func (e *fakeLBEngine) LoadBalancerWorkspace(in *annotations.Service) (engine.Job, error) {
	return engine.Job{Key: "prod-" + in.Namespace + "-" + in.Name}, nil
}
func (e *fakeLBEngine) GetLoadBalancer(context.Context, *annotations.Service) (*engine.LoadBalancer, bool, error) {
	return e.lb, e.lb != nil, nil
}
func (e *fakeLBEngine) ReconcileLoadBalancer(_ context.Context, in *annotations.Service, nodes []*v1.Node, _ engine.Review) (*engine.LoadBalancer, *engine.Outcome, error) {
	e.onPool, e.onPods, e.nodes, e.reconciles = "", nil, nodes, e.reconciles+1
	return e.lb, e.outcome(in), e.err
}
func (e *fakeLBEngine) ReconcileLoadBalancerOnPool(_ context.Context, in *annotations.Service, poolID string, _ engine.Review) (*engine.LoadBalancer, *engine.Outcome, error) {
	e.onPool, e.onPods, e.nodes, e.reconciles = poolID, nil, nil, e.reconciles+1
	return e.lb, e.outcome(in), e.err
}
func (e *fakeLBEngine) ReconcileLoadBalancerOnPods(_ context.Context, in *annotations.Service, pods map[lbmodel.ServicePort]string, _ engine.Review) (*engine.LoadBalancer, *engine.Outcome, error) {
	e.onPool, e.onPods, e.nodes, e.reconciles = "", pods, nil, e.reconciles+1
	return e.lb, e.outcome(in), e.err
}
func (e *fakeLBEngine) RemoveLoadBalancer(_ context.Context, in *annotations.Service, _ engine.Review) (*engine.Outcome, error) {
	e.removed = append(e.removed, in.Namespace+"/"+in.Name)
	return e.outcome(in), nil
}
func (e *fakeLBEngine) RetainLoadBalancer(_ context.Context, in *annotations.Service, _ engine.Review) (*engine.Outcome, error) {
	e.retained = append(e.retained, in.Namespace+"/"+in.Name)
	return e.outcome(in), nil
}

func (e *fakeLBEngine) outcome(in *annotations.Service) *engine.Outcome {
	return &engine.Outcome{Workspace: "prod-" + in.Namespace + "-" + in.Name}
}

// fakePoolEngine is the target pools (poolEngine): every selection's
// pool is "pool-" and its key once reconciled.
type fakePoolEngine struct {
	has        map[string]bool
	reconciled []string
}

var _ poolEngine = (*fakePoolEngine)(nil)

func (e *fakePoolEngine) HasTargetPool(_ context.Context, sel string) (bool, error) {
	return e.has[sel], nil
}
func (e *fakePoolEngine) TargetPoolID(_ context.Context, sel string) (string, error) {
	if !e.has[sel] {
		return "", nil
	}
	return "pool-" + engine.PoolKey(sel), nil
}
func (e *fakePoolEngine) RenderTargetPools([]lbmodel.Pool) (*engine.Module, engine.Job, error) {
	return nil, engine.Job{Key: "prod-targetpools"}, nil
}
func (e *fakePoolEngine) ReconcileTargetPools(_ context.Context, sel string, _ engine.PoolMembers, _ engine.Review) (string, *engine.Outcome, error) {
	if e.has == nil {
		e.has = map[string]bool{}
	}
	e.has[sel] = true
	e.reconciled = append(e.reconciled, sel)
	return "pool-" + engine.PoolKey(sel), &engine.Outcome{Workspace: "prod-targetpools"}, nil
}
func (e *fakePoolEngine) SyncTargetPools(context.Context, engine.PoolMembers, engine.Review) (*engine.Outcome, error) {
	return &engine.Outcome{Workspace: "prod-targetpools"}, nil
}
func (e *fakePoolEngine) PruneTargetPools(context.Context, []string, engine.PoolMembers, engine.Review) (engine.Prune, *engine.Outcome, error) {
	return engine.Prune{}, &engine.Outcome{Workspace: "prod-targetpools"}, nil
}

// fakeGroupEngine is the load balancer groups (groupEngine): every
// group's load balancer is lb, its members all rendered, but for the
// listeners conflicts names.
type fakeGroupEngine struct {
	lb *engine.LoadBalancer
	// conflicts are the listeners every rendering leaves out, an earlier
	// member having them (the engine's decision, answered here).
	conflicts []engine.ListenerConflict
	// own is a member's load balancer of its own (nil: none had one, or
	// it was released); releaseErr its release's answer, released those
	// asked.
	own        *engine.LoadBalancer
	releaseErr error
	released   []string
	// reconciled are the members of each reconcile, pools the pool each
	// forwarded to, policies the policy each ran under, removed the
	// groups destroyed; live the groups (by workspace) whose load
	// balancer exists.
	reconciled [][]string
	pools      []string
	policies   []annotations.ApplyPolicy
	removed    []string
	live       map[string]bool
}

var _ groupEngine = (*fakeGroupEngine)(nil)

func (e *fakeGroupEngine) ForceUnlock(context.Context, engine.Job, string) error { return nil }
func (e *fakeGroupEngine) GetLoadBalancer(context.Context, *annotations.Service) (*engine.LoadBalancer, bool, error) {
	return e.own, e.own != nil, nil
}
func (e *fakeGroupEngine) GetGroupLoadBalancer(_ context.Context, g lbmodel.Group) (*engine.LoadBalancer, bool, error) {
	if !e.live[e.workspace(g)] {
		return nil, false, nil
	}
	return e.lb, true, nil
}
func (e *fakeGroupEngine) ReleaseLoadBalancer(_ context.Context, in *annotations.Service, rv engine.Review) (*engine.Outcome, error) {
	if e.own == nil {
		return nil, errors.New("fakeGroupEngine: nothing to release")
	}
	e.released = append(e.released, in.Namespace+"/"+in.Name)
	out := &engine.Outcome{Workspace: "prod-" + in.Namespace + "-" + in.Name, Policy: rv.Policy}
	if waiting := (*engine.AwaitingApprovalError)(nil); errors.As(e.releaseErr, &waiting) {
		// A fresh plan waits, as the engine's outcome says it.
		out.Awaiting = &engine.Plan{ID: waiting.PlanID}
		out.Planned = out.Awaiting
	}
	if e.releaseErr == nil {
		e.own = nil
	}
	return out, e.releaseErr
}
func (e *fakeGroupEngine) GroupPrimary(g lbmodel.Group) *v1.Service {
	if len(g.Members) == 0 {
		return nil
	}
	return g.Members[0]
}
func (e *fakeGroupEngine) RenderGroup(g lbmodel.Group, _ []*v1.Node, _ string) (*engine.Module, *engine.GroupReport, engine.Job, error) {
	return nil, &engine.GroupReport{Members: g.Members}, engine.Job{Key: e.workspace(g)}, nil
}
func (e *fakeGroupEngine) ReconcileGroup(_ context.Context, g lbmodel.Group, _ []*v1.Node, poolID string, rv engine.Review) (*engine.LoadBalancer, *engine.GroupReport, *engine.Outcome, error) {
	var names []string
	for _, m := range g.Members {
		names = append(names, m.Name)
	}
	e.reconciled, e.pools, e.policies = append(e.reconciled, names), append(e.pools, poolID), append(e.policies, rv.Policy)
	if e.live == nil {
		e.live = map[string]bool{}
	}
	e.live[e.workspace(g)] = true
	rep := &engine.GroupReport{Members: g.Members, Conflicts: e.conflicts}
	return e.lb, rep, &engine.Outcome{Workspace: e.workspace(g), Result: &engine.Result{}}, nil
}
func (e *fakeGroupEngine) RemoveGroup(_ context.Context, g lbmodel.Group, _ engine.Review) (*engine.Outcome, error) {
	e.removed = append(e.removed, g.Namespace+"/"+g.Name)
	delete(e.live, e.workspace(g))
	destroy := &engine.Plan{ID: "plan-destroy", Destroy: true, HasChanges: true}
	return &engine.Outcome{Workspace: e.workspace(g), Planned: destroy, Applied: destroy, Result: &engine.Result{}}, nil
}

func (e *fakeGroupEngine) workspace(g lbmodel.Group) string {
	return "prod-group-" + g.Namespace + "-" + g.Name
}

// fakeServices is a Service's own load balancing over one fake engine,
// each part through its own fake (a member's own load balancer, as the
// groups see it, is the groups' fake's own), with the board fixture, the
// cloud the addresses read, and the Service informer's indexer filled by
// the test.
type fakeServices struct {
	*boardFixture
	services *services
	lbs      *fakeLBEngine
	pools    *fakePoolEngine
	groups   *fakeGroupEngine
	addrs    *fakeAddressEngine
	cloud    *fakeCloud
}

// granting gives f's Services and groups references that read the
// addresses' owners from its cloud and these ReferenceGrants.
func (f *fakeServices) granting(t *testing.T, grants ...runtime.Object) *references {
	t.Helper()
	refs := newReferences(f.cfg, f.cloud)
	refs.watchGrants(t.Context(), dynamicfake.NewSimpleDynamicClientWithCustomListKinds(runtime.NewScheme(),
		map[schema.GroupVersionResource]string{referencegrants.Resource: "ReferenceGrantList"}, grants...))
	f.services.refs, f.services.groups.refs = refs, refs
	return refs
}

func newFakeServices(t *testing.T, extra string) *fakeServices {
	t.Helper()
	f := &fakeServices{boardFixture: newBoardFixture(t, extra), cloud: &fakeCloud{}}
	eng := newFakeEngine(f.cfg, f.cloud)
	eng.fakeLBEngine.lb = &engine.LoadBalancer{ID: "lb-1", Status: "active", IPv4: "203.0.113.10"}
	eng.fakeGroupEngine.lb = &engine.LoadBalancer{ID: "lb-g", Status: "active", IPv4: "203.0.113.20"}
	f.lbs, f.pools, f.groups, f.addrs = eng.fakeLBEngine, eng.fakePoolEngine, eng.fakeGroupEngine, eng.fakeAddressEngine
	sh := &shared{cfg: f.cfg, board: f.board, groups: newGroups(f.cfg), lifecycle: newNodeLifecycle(f.cfg)}
	sh.groups.services = cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{groupIndex: groupIndexFunc})
	sh.groups.records = f.board.Records
	pools := &targetPools{shared: sh, engine: f.pools}
	f.services = &services{shared: sh, engine: eng, pools: pools,
		groupLBs: &groupLoadBalancers{shared: sh, engine: f.groups, pools: pools}, addresses: &addresses{shared: sh, engine: eng, api: f.cloud}}
	return f
}

// put stores svc as the API server and the informer have it.
func (f *fakeServices) put(t *testing.T, svc *v1.Service) {
	t.Helper()
	testkit.Must(t, f.services.groups.services.Update(svc))
	if _, err := f.client.CoreV1().Services(svc.Namespace).Update(t.Context(), svc, metav1.UpdateOptions{}); err != nil {
		_, err = f.client.CoreV1().Services(svc.Namespace).Create(t.Context(), svc, metav1.CreateOptions{})
		testkit.Must(t, err)
	}
}

// ensure puts svc and converges it on a node; it returns the first
// address of its status.
func (f *fakeServices) ensure(t *testing.T, svc *v1.Service) (string, error) {
	t.Helper()
	f.put(t, svc)
	st, err := f.services.ensure(t.Context(), svc, []*v1.Node{{}})
	if err != nil {
		return "", err
	}
	return st.Ingress[0].IP, nil
}

// status is Service ns/name's ingress as the API server has it.
func (f *fakeServices) status(t *testing.T, ns, name string) []v1.LoadBalancerIngress {
	t.Helper()
	cur, err := f.client.CoreV1().Services(ns).Get(t.Context(), name, metav1.GetOptions{})
	testkit.Must(t, err)
	return cur.Status.LoadBalancer.Ingress
}

// A Service's own load balancer forwards to the pool of every node,
// created for it, and its status is the load balancer's address (VIP: a
// tcp listener passes packets through); the pool then carries its ask.
func TestEnsureOwnLoadBalancerOnThePoolOverFakes(t *testing.T) {
	f := newFakeServices(t, "")
	svc := lbService(1, nil)
	st, err := f.services.ensure(t.Context(), svc, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(st.Ingress) != 1 || st.Ingress[0].IP != "203.0.113.10" || st.Ingress[0].IPMode == nil || *st.Ingress[0].IPMode != v1.LoadBalancerIPModeVIP {
		t.Fatalf("status %+v", st)
	}
	if f.lbs.onPool != "pool-all" || len(f.pools.reconciled) != 1 || f.pools.reconciled[0] != "" {
		t.Fatalf("forwarded to pool %q; pools reconciled %q; want the pool of every node, created", f.lbs.onPool, f.pools.reconciled)
	}
	f.services.lifecycle.asks.mu.Lock()
	_, asked := f.services.lifecycle.asks.asks[objectref.Service(svc)]
	f.services.lifecycle.asks.mu.Unlock()
	if !asked {
		t.Error("the applied load balancer asks nothing of its pool")
	}
	// Destroyed, it asks nothing any more.
	if err := f.services.delete(t.Context(), svc); err != nil {
		t.Fatal(err)
	}
	if len(f.lbs.removed) != 1 {
		t.Fatalf("removed %v", f.lbs.removed)
	}
	f.services.lifecycle.asks.mu.Lock()
	defer f.services.lifecycle.asks.mu.Unlock()
	if _, asked := f.services.lifecycle.asks.asks[objectref.Service(svc)]; asked {
		t.Error("a destroyed load balancer still asks of its pool")
	}
}

// A node selection of its own causes no new pool under a reviewed policy
// (it would be created outside the Service's review): the Service lists
// its nodes in its own plan.
func TestOwnSelectionUnderReviewListsItsNodesOverFakes(t *testing.T) {
	f := newFakeServices(t, "")
	svc := lbService(1, map[string]string{string(annotations.LBNodeSelector): "role=edge", string(annotations.LBApplyPolicy): "manual"})
	nodes := []*v1.Node{{}}
	if _, err := f.services.ensure(t.Context(), svc, nodes); err != nil {
		t.Fatal(err)
	}
	if f.lbs.onPool != "" || len(f.lbs.nodes) != 1 || len(f.pools.reconciled) != 0 {
		t.Fatalf("on pool %q with %d nodes, pools reconciled %q; want its nodes and no pool", f.lbs.onPool, len(f.lbs.nodes), f.pools.reconciled)
	}
}

// A plan that waits for approval is the service controller's retry; a
// plan-only Service keeps serving what exists.
func TestWaitingPlanOverFakes(t *testing.T) {
	f := newFakeServices(t, "")
	f.lbs.err = &engine.AwaitingApprovalError{PlanID: "p1", Policy: annotations.ApplyManual}
	var retry *api.RetryError
	if _, err := f.services.ensure(t.Context(), lbService(1, nil), nil); !errors.As(err, &retry) || retry.RetryAfter() != approvalRetry {
		t.Fatalf("awaiting approval: %v; want a retry in %s", err, approvalRetry)
	}
	f.lbs.err = &engine.AwaitingApprovalError{PlanID: "p2", Policy: annotations.ApplyPlanOnly}
	st, err := f.services.ensure(t.Context(), lbService(1, map[string]string{string(annotations.LBApplyPolicy): "plan-only"}), nil)
	if err != nil || len(st.Ingress) != 1 || st.Ingress[0].IP != "203.0.113.10" {
		t.Fatalf("plan-only: %+v %v; want the active load balancer's address", st, err)
	}
}

// Members join a group one by one, each converging the group's load
// balancer with every member (on the pool of every node) and serving on
// its address; the last one leaving destroys it.
func TestGroupJoinAndLeaveOverFakes(t *testing.T) {
	f := newFakeServices(t, "")
	nodes := []*v1.Node{{}}
	a, b := groupSvc("shop", "a", 0, "front", 80), groupSvc("shop", "b", 1, "front", 81)
	for _, svc := range []*v1.Service{a, b} {
		testkit.Must(t, f.services.groups.services.Add(svc))
		st, err := f.services.ensure(t.Context(), svc, nodes)
		if err != nil || len(st.Ingress) != 1 || st.Ingress[0].IP != "203.0.113.20" {
			t.Fatalf("%s joins: %+v %v; want the group's address", svc.Name, st, err)
		}
	}
	for _, svc := range []*v1.Service{a, b} {
		testkit.Must(t, f.services.groups.services.Delete(svc))
		testkit.Must(t, f.services.delete(t.Context(), svc))
	}
	want := [][]string{{"a"}, {"a", "b"}, {"b"}}
	if !slices.EqualFunc(f.groups.reconciled, want, slices.Equal) {
		t.Errorf("group reconciled with %q, want %q", f.groups.reconciled, want)
	}
	if slices.ContainsFunc(f.groups.pools, func(p string) bool { return p != "pool-all" }) {
		t.Errorf("the group forwarded to %q, want the pool of every node", f.groups.pools)
	}
	if !slices.Equal(f.groups.removed, []string{"shop/front"}) {
		t.Errorf("removed %q, want the group's load balancer once its last member left", f.groups.removed)
	}
}

// A Service keeping its address waits while the leader reserves it, is
// refused past its namespace's cap (an event says so), and shows the
// reserved IP once its load balancer holds it.
func TestKeptAddressOverFakes(t *testing.T) {
	f := newFakeServices(t, "")
	f.cfg.LoadBalancer.Addresses.MaxPerNamespace = 2
	a, cloud := f.services.addresses, f.cloud
	in := annotations.Read(lbService(1, map[string]string{string(annotations.LBAddressKeep): "true"}))
	lb := &engine.LoadBalancer{ID: "lb-1", Status: "active", IPv4: "203.0.113.10"}
	st := status(lb, in, nil)
	subj := f.board.ServiceSubject(t.Context(), in, records.KindChange)
	tagged := func(id, name, ip, lbID string) exampleapi.Address {
		return exampleapi.Address{ObjectMeta: exampleapi.ObjectMeta{ID: id, Name: name, Region: "ex-west-1"}, Family: exampleapi.AddressFamilyIPv4, IP: ip, LoadBalancerID: lbID,
			Tags: map[string]string{exampleapi.TagClusterID: f.cfg.ClusterID, exampleapi.TagNamespace: "shop"}}
	}

	var retry *api.RetryError
	if _, err := a.addressed(t.Context(), subj, in, lb, st); !errors.As(err, &retry) || retry.RetryAfter() != addressWait {
		t.Fatalf("not reserved yet: %v; want a retry in %s while the leader reserves it", err, addressWait)
	}
	cloud.addresses = []exampleapi.Address{tagged("addr-1", "shop-a", "198.51.100.1", ""), tagged("addr-2", "shop-b", "198.51.100.2", "")}
	if _, err := a.addressed(t.Context(), subj, in, lb, st); err == nil || errors.As(err, &retry) || !strings.Contains(err.Error(), "its cap") {
		t.Fatalf("past the cap: %v; want a refusal naming the cap", err)
	}
	if evs := f.takeEvents(); !slices.ContainsFunc(evs, func(e reviewtest.Event) bool { return e.Reason == "AddressCapReached" }) {
		t.Errorf("events %v; want AddressCapReached", evs)
	}
	cloud.addresses = []exampleapi.Address{tagged("addr-3", "shop-web", "198.51.100.3", "lb-1")}
	got, err := a.addressed(t.Context(), subj, in, lb, st)
	if err != nil || len(got.Ingress) != 1 || got.Ingress[0].IP != "198.51.100.3" {
		t.Fatalf("held: %+v %v; want the reserved IP", got, err)
	}
}
