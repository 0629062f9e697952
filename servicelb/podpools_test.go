package servicelb

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/cloud-provider/api"

	"github.com/example/cloud-provider-example/annotations"
	"github.com/example/cloud-provider-example/engine"
	"github.com/example/cloud-provider-example/lbmodel"
)

// fakePodPools are pod pools (PodPools) in memory: Use makes a pool for a
// port without one, each pool's id is "tp-" and its port; users are kept
// as package podpools keeps them.
type fakePodPools struct {
	mu    sync.Mutex
	ids   map[lbmodel.ServicePort]string
	users map[string][]lbmodel.ServicePort
	// refuse makes Use fail with it.
	refuse error
}

func (f *fakePodPools) Use(_ context.Context, user string, ports []lbmodel.ServicePort) (map[lbmodel.ServicePort]string, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.refuse != nil {
		return nil, f.refuse
	}
	if f.ids == nil {
		f.ids, f.users = map[lbmodel.ServicePort]string{}, map[string][]lbmodel.ServicePort{}
	}
	f.users[user] = ports
	if len(ports) == 0 {
		delete(f.users, user)
	}
	out := map[lbmodel.ServicePort]string{}
	for _, sp := range ports {
		if f.ids[sp] == "" {
			f.ids[sp] = "tp-" + sp.Ref().Name
		}
		out[sp] = f.ids[sp]
	}
	return out, nil
}

func (f *fakePodPools) Want(user string, ports []lbmodel.ServicePort) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.users == nil {
		f.ids, f.users = map[lbmodel.ServicePort]string{}, map[string][]lbmodel.ServicePort{}
	}
	f.users[user] = ports
	if len(ports) == 0 {
		delete(f.users, user)
	}
}

func (f *fakePodPools) Known(_ context.Context, ports []lbmodel.ServicePort) (map[lbmodel.ServicePort]string, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	out := map[lbmodel.ServicePort]string{}
	for _, sp := range ports {
		if id := f.ids[sp]; id != "" {
			out[sp] = id
		}
	}
	return out, nil
}

func (f *fakePodPools) usersOf() map[string][]lbmodel.ServicePort {
	f.mu.Lock()
	defer f.mu.Unlock()
	return maps.Clone(f.users)
}

// podService is lbService of target type ip, its second port udp and with
// no node port (none is needed).
func podService() *v1.Service {
	svc := lbService(2, map[string]string{string(annotations.LBTargetType): annotations.TargetTypeIP})
	svc.Spec.Ports[1].Protocol = v1.ProtocolUDP
	for i := range svc.Spec.Ports {
		svc.Spec.Ports[i].NodePort = 0
	}
	return svc
}

func podPorts(svc *v1.Service) []lbmodel.ServicePort {
	return []lbmodel.ServicePort{
		{Namespace: svc.Namespace, Service: svc.Name, Port: 1000, Protocol: v1.ProtocolTCP},
		{Namespace: svc.Namespace, Service: svc.Name, Port: 1001, Protocol: v1.ProtocolUDP},
	}
}

// On the leader, a Service of target type ip uses a pod pool per port,
// made at once, and its load balancer forwards to them: no node, no
// target pool of nodes.
func TestPodTargetsOnTheLeader(t *testing.T) {
	lbs, eng, _ := lbsOverFakes(t, testConfig(t, ""))
	eng.fakeLBEngine.lb = &engine.LoadBalancer{ID: "lb-1", Status: "active", IPv4: "192.0.2.1"}
	pools := &fakePodPools{}
	lbs.KeepPodPools(pools)
	svc := podService()
	node := &v1.Node{ObjectMeta: metav1.ObjectMeta{Name: "a"}}
	if _, err := lbs.Ensure(t.Context(), svc, []*v1.Node{node}); err != nil {
		t.Fatal(err)
	}
	ports := podPorts(svc)
	if got := pools.usersOf()["shop/web"]; !slices.Equal(got, ports) {
		t.Fatalf("the Service uses %v, want %v", got, ports)
	}
	want := map[lbmodel.ServicePort]string{ports[0]: "tp-web-1000-tcp", ports[1]: "tp-web-1001-udp"}
	if !maps.Equal(eng.onPods, want) || eng.onPool != "" || eng.nodes != nil {
		t.Fatalf("reconciled on pods %v, pool %q, nodes %v; want pods %v alone", eng.onPods, eng.onPool, eng.nodes, want)
	}
	if got := eng.fakePoolEngine.reconciled; len(got) != 0 {
		t.Fatalf("target pools of nodes reconciled for a Service of target type ip: %v", got)
	}

	// A pool awaiting approval (the pools' policy manual) is a retry,
	// and no reconcile.
	pools.refuse = fmt.Errorf("pod pool: %w", &engine.AwaitingApprovalError{PlanID: "p1", Policy: annotations.ApplyManual})
	before := eng.reconciles
	_, err := lbs.Ensure(t.Context(), svc, nil)
	if retry := (*api.RetryError)(nil); !errors.As(err, &retry) || eng.reconciles != before {
		t.Fatalf("err %v (%T), %d reconciles; want a RetryError and none", err, err, eng.reconciles-before)
	}
}

// A replica that does not lead reads the pools as their state records
// them: it waits (a retry) while the leader has not made one, then
// forwards to them; it makes none.
func TestPodTargetsOffTheLeader(t *testing.T) {
	cfg := testConfig(t, "")
	recorded := &fakePodPools{}
	lbs, eng, _ := lbsOverFakes(t, cfg)
	eng.fakeLBEngine.lb = &engine.LoadBalancer{ID: "lb-1", Status: "active", IPv4: "192.0.2.1"}
	lbs.podPools.recorded = recorded
	svc := podService()
	_, err := lbs.Ensure(t.Context(), svc, nil)
	if retry := (*api.RetryError)(nil); !errors.As(err, &retry) || !strings.Contains(err.Error(), "the leader creates it") {
		t.Fatalf("err %v, want a retry while the leader creates the pool", err)
	}
	if eng.reconciles != 0 || len(recorded.usersOf()) != 0 {
		t.Fatalf("%d reconciles, users %v before the pools exist", eng.reconciles, recorded.usersOf())
	}
	// The leader made them.
	if _, err := recorded.Use(t.Context(), "leader", podPorts(svc)); err != nil {
		t.Fatal(err)
	}
	if _, err := lbs.Ensure(t.Context(), svc, nil); err != nil {
		t.Fatal(err)
	}
	if len(eng.onPods) != 2 {
		t.Fatalf("reconciled on pods %v, want both ports' pools", eng.onPods)
	}
}

// The leader learns who uses the pools from every Service it sees: a
// Service of target type ip uses its ports' pools, of another replica's
// shard too; one that turns to target type node, or is deleted, uses
// none (its pools then go once no load balancer forwards to them).
func TestPodPoolUsersFollowTheServices(t *testing.T) {
	pools := &fakePodPools{}
	p := &podPools{}
	p.kept.Store(new(PodPoolKeeper(pools)))
	inf := cache.NewSharedIndexInformer(&cache.ListWatch{}, &v1.Service{}, 0, cache.Indexers{})
	u, err := newPodUsers(p, inf, func() bool { return true })
	if err != nil {
		t.Fatal(err)
	}
	store := inf.GetStore()
	svc := podService()
	sync := func(want []lbmodel.ServicePort) {
		t.Helper()
		if err := u.sync(t.Context(), "shop/web"); err != nil {
			t.Fatal(err)
		}
		if got := pools.usersOf()["shop/web"]; !slices.Equal(got, want) {
			t.Fatalf("uses %v, want %v", got, want)
		}
	}
	testNoError(t, store.Add(svc))
	sync(podPorts(svc))

	// A refused Service keeps what it used until it is fixed.
	bad := svc.DeepCopy()
	bad.Annotations[string(annotations.LBNodeSelector)] = "pool=ingress"
	testNoError(t, store.Update(bad))
	sync(podPorts(svc))

	node := svc.DeepCopy()
	node.Annotations[string(annotations.LBTargetType)] = annotations.TargetTypeNode
	testNoError(t, store.Update(node))
	sync(nil)

	testNoError(t, store.Update(svc))
	sync(podPorts(svc))
	leaving := svc.DeepCopy()
	leaving.DeletionTimestamp = &metav1.Time{Time: time.Now()}
	testNoError(t, store.Update(leaving))
	sync(nil)

	testNoError(t, store.Update(svc))
	sync(podPorts(svc))
	testNoError(t, store.Delete(svc))
	sync(nil)
}

func testNoError(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
