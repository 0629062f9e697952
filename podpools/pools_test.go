package podpools

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/client-go/kubernetes"
	kubefake "k8s.io/client-go/kubernetes/fake"
	"k8s.io/utils/ptr"

	"github.com/example/cloud-provider-example/annotations"
	"github.com/example/cloud-provider-example/engine"
	"github.com/example/cloud-provider-example/exampleapi"
	"github.com/example/cloud-provider-example/internal/testcluster"
	"github.com/example/cloud-provider-example/internal/testkit"
	"github.com/example/cloud-provider-example/lbmodel"
	"github.com/example/cloud-provider-example/objectref"
	"github.com/example/cloud-provider-example/podtargets"
	"github.com/example/cloud-provider-example/review"
)

// The decisions run against a real API server (Services, slices, pods,
// the gates' status patches); the engine, the review and the cloud's
// health are fakes here, whose real ones the e2e tests run.

// fakeEngine records the applies and destroys it is asked for.
type fakeEngine struct {
	mu       sync.Mutex
	applies  map[objectref.Ref][][]string
	destroys map[objectref.Ref]int
	// delay is each pool's last applied delay.
	delay map[objectref.Ref]*time.Duration
	// inUse refuses this many destroys first, as the cloud does while a
	// load balancer forwards to the pool.
	inUse int
	// recorded are the pools' ids as their workspaces record them (an
	// earlier leader's applies).
	recorded map[objectref.Ref]string
}

func (f *fakeEngine) PodPoolID(_ context.Context, ref objectref.Ref) (string, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.recorded[ref], nil
}

func (f *fakeEngine) ReconcilePodPool(_ context.Context, p lbmodel.PodPool, _ engine.Review) (string, *engine.Outcome, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.applies[p.Ref()] = append(f.applies[p.Ref()], slices.Clone(p.Targets))
	f.delay[p.Ref()] = p.Delay
	return "tp-" + p.Service, &engine.Outcome{}, nil
}

func (f *fakeEngine) DestroyPodPool(_ context.Context, ref objectref.Ref, _ engine.Review) (*engine.Outcome, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.destroys[ref]++
	if f.destroys[ref] <= f.inUse {
		return &engine.Outcome{}, fmt.Errorf("apply: %w", engine.ErrInUse)
	}
	return &engine.Outcome{}, nil
}

func (f *fakeEngine) PodPoolWorkspace(ref objectref.Ref) (string, error) {
	return "ws-" + ref.Name, nil
}

func (f *fakeEngine) appliesOf(ref objectref.Ref) [][]string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.applies[ref])
}

func (f *fakeEngine) destroysOf(ref objectref.Ref) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.destroys[ref]
}

// fakeReview runs every change under its policy and keeps the events.
type fakeReview struct {
	mu     sync.Mutex
	events []string
}

func (f *fakeReview) Run(_ context.Context, _ *review.Subject, pol annotations.ApplyPolicy, change review.Change) (*engine.Outcome, error) {
	return change(engine.Review{Policy: pol})
}

func (f *fakeReview) PodPoolSubject(objectref.Ref, *corev1.Service, string, string) review.Subject {
	return review.Subject{}
}

func (f *fakeReview) Eventf(_ review.Subject, typ, reason, format string, args ...any) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.events = append(f.events, typ+" "+reason+": "+fmt.Sprintf(format, args...))
}

func (f *fakeReview) said() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.events)
}

// fakeCloud answers each target's health, unused unless set, and lists
// pools.
type fakeCloud struct {
	mu     sync.Mutex
	health map[string]string
	pools  []exampleapi.TargetPool
}

func (f *fakeCloud) ListTargetPools(context.Context, exampleapi.TargetPoolFilter) ([]exampleapi.TargetPool, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.pools), nil
}

func (f *fakeCloud) TargetPoolHealth(_ context.Context, id string) (*exampleapi.TargetPoolHealthResponse, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	out := &exampleapi.TargetPoolHealthResponse{TargetPoolID: id}
	for t, h := range f.health {
		out.Targets = append(out.Targets, exampleapi.TargetHealth{ID: t, Health: h})
	}
	return out, nil
}

func (f *fakeCloud) set(target, health string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.health[target] = health
}

type fixture struct {
	kube   kubernetes.Interface
	ns     string
	pools  *Pools
	engine *fakeEngine
	review *fakeReview
	health *fakeCloud
}

func start(t *testing.T, opts ...func(*Options)) *fixture {
	cluster := testcluster.Start(t)
	kube, err := kubernetes.NewForConfig(cluster.Admin)
	testkit.Must(t, err)
	f := &fixture{kube: kube, ns: cluster.Namespace(t), engine: &fakeEngine{applies: map[objectref.Ref][][]string{}, destroys: map[objectref.Ref]int{}, delay: map[objectref.Ref]*time.Duration{}},
		review: &fakeReview{}, health: &fakeCloud{health: map[string]string{}}}
	o := Options{Policy: annotations.ApplyAuto,
		Settle: podtargets.Settle{Quiet: 300 * time.Millisecond, Longest: 3 * time.Second}, GateRecheck: 100 * time.Millisecond,
		InUseRetry: 200 * time.Millisecond, NotTargetedGrace: time.Hour, UnusedGrace: 100 * time.Millisecond}
	for _, set := range opts {
		set(&o)
	}
	f.pools = New(kube, f.engine, f.review, f.health, o)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); _ = f.pools.Run(ctx, 2) }()
	t.Cleanup(func() { cancel(); <-done })
	eventually(t, 10*time.Second, func() bool { return f.pools.hasSynced() == nil })
	return f
}

// service creates Service name of port 80 (8080 on the pods), selecting
// pods labelled selector (none given: its slices are written by hand).
func (f *fixture) service(t *testing.T, name string, selector ...string) lbmodel.ServicePort {
	svc := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: f.ns, Name: name},
		Spec: corev1.ServiceSpec{Ports: []corev1.ServicePort{{Name: "http", Port: 80, TargetPort: intstr.FromInt32(8080)}}}}
	if len(selector) > 0 {
		svc.Spec.Selector = map[string]string{"app": selector[0]}
	}
	_, err := f.kube.CoreV1().Services(f.ns).Create(testkit.Context(t), svc, metav1.CreateOptions{})
	testkit.Must(t, err)
	return lbmodel.ServicePort{Namespace: f.ns, Service: name, Port: 80, Protocol: corev1.ProtocolTCP}
}

// otherNamespace creates and names another team's namespace.
func (f *fixture) otherNamespace(t *testing.T) string {
	other := f.ns + "-other"
	_, err := f.kube.CoreV1().Namespaces().Create(testkit.Context(t), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: other}}, metav1.CreateOptions{})
	testkit.Must(t, err)
	return other
}

// pod creates a pod at ip in ns, with conditions set true and gates.
func (f *fixture) pod(t *testing.T, ns, name, ip string, conditions []corev1.PodConditionType, gates ...corev1.PodConditionType) {
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "example-echo"}}}}
	for _, g := range gates {
		pod.Spec.ReadinessGates = append(pod.Spec.ReadinessGates, corev1.PodReadinessGate{ConditionType: g})
	}
	ctx := testkit.Context(t)
	// No controller manager runs to make the namespace's service account.
	_, err := f.kube.CoreV1().ServiceAccounts(ns).Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "default"}}, metav1.CreateOptions{})
	if err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatal(err)
	}
	created, err := f.kube.CoreV1().Pods(ns).Create(ctx, pod, metav1.CreateOptions{})
	testkit.Must(t, err)
	created.Status = corev1.PodStatus{Phase: corev1.PodRunning, PodIP: ip, PodIPs: []corev1.PodIP{{IP: ip}}}
	for _, c := range conditions {
		created.Status.Conditions = append(created.Status.Conditions, corev1.PodCondition{Type: c, Status: corev1.ConditionTrue})
	}
	_, err = f.kube.CoreV1().Pods(ns).UpdateStatus(ctx, created, metav1.UpdateOptions{})
	testkit.Must(t, err)
}

// slice writes EndpointSlice name of Service svc with endpoints (address
// and whether ready), as a tenant may by hand.
func (f *fixture) slice(t *testing.T, svc, name string, eps map[string]bool) {
	s := &discoveryv1.EndpointSlice{ObjectMeta: metav1.ObjectMeta{Namespace: f.ns, Name: name, Labels: map[string]string{discoveryv1.LabelServiceName: svc}},
		AddressType: discoveryv1.AddressTypeIPv4,
		Ports:       []discoveryv1.EndpointPort{{Name: ptr.To("http"), Port: ptr.To[int32](8080), Protocol: ptr.To(corev1.ProtocolTCP)}}}
	for _, a := range slices.Sorted(func(yield func(string) bool) {
		for a := range eps {
			if !yield(a) {
				return
			}
		}
	}) {
		s.Endpoints = append(s.Endpoints, discoveryv1.Endpoint{Addresses: []string{a}, Conditions: discoveryv1.EndpointConditions{Ready: ptr.To(eps[a])}})
	}
	ctx := testkit.Context(t)
	cur, err := f.kube.DiscoveryV1().EndpointSlices(f.ns).Get(ctx, name, metav1.GetOptions{})
	if err == nil {
		s.ResourceVersion = cur.ResourceVersion
		_, err = f.kube.DiscoveryV1().EndpointSlices(f.ns).Update(ctx, s, metav1.UpdateOptions{})
	} else {
		_, err = f.kube.DiscoveryV1().EndpointSlices(f.ns).Create(ctx, s, metav1.CreateOptions{})
	}
	testkit.Must(t, err)
	// What the test does next reads the slice as written.
	eventually(t, 10*time.Second, func() bool {
		got, err := f.pools.slices.EndpointSlices(f.ns).Get(name)
		return err == nil && len(got.Endpoints) == len(s.Endpoints)
	})
}

// firstApply has Gateway infra/gw use port's pool, and fails unless that
// applied it once, as tp-<Service>, with targets want (what they are).
func (f *fixture) firstApply(t *testing.T, port lbmodel.ServicePort, what string, want ...string) {
	t.Helper()
	ids, err := f.pools.Use(testkit.Context(t), "gateway:infra/gw", []lbmodel.ServicePort{port})
	testkit.Must(t, err)
	if ids[port] != "tp-"+port.Service {
		t.Fatalf("ids %v", ids)
	}
	if got := f.engine.appliesOf(port.Ref()); len(got) != 1 || !slices.Equal(got[0], want) {
		t.Fatalf("applies %v, want one of %s", got, what)
	}
}

// leave has user forward to no pool.
func (f *fixture) leave(t *testing.T, user string) {
	t.Helper()
	_, err := f.pools.Use(testkit.Context(t), user, nil)
	testkit.Must(t, err)
}

var ready = []corev1.PodConditionType{corev1.ContainersReady, corev1.PodReady}

// A pool holds the Service's ready endpoints that pass the boundary (a
// hand-written slice naming another namespace's pod or an address no pod
// holds: each told once, both after RefusedGrace, never targeted); a
// burst of slice changes is one apply once they settle; a user that
// stops using it has it destroyed, again after the cloud refused while a
// load balancer forwarded to it.
func TestPoolsFollowSlices(t *testing.T) {
	f := start(t, func(o *Options) { o.RefusedGrace = 3 * time.Second })
	ctx := testkit.Context(t)
	web := f.service(t, "web")
	other := f.otherNamespace(t)
	f.pod(t, f.ns, "web-a", "10.244.1.5", ready)
	f.pod(t, other, "theirs", "10.244.2.7", ready)
	f.slice(t, "web", "web-1", map[string]bool{"10.244.1.5": true, "10.244.2.7": true, "10.0.0.4": true})
	eventually(t, 10*time.Second, func() bool { _, ok := f.pools.podIn(other)("10.244.2.7"); return ok })

	f.firstApply(t, web, "the own pod only", "10.244.1.5:8080")
	if refused := f.review.said(); len(refused) != 0 {
		t.Fatalf("events %q: told at once; want both after the grace, so their timing says nothing of whose the address is", refused)
	}
	eventually(t, 10*time.Second, func() bool { return len(f.review.said()) == 2 })
	refused := f.review.said()
	if len(refused) != 2 || !strings.Contains(strings.Join(refused, "\n"), "lists 10.244.2.7: it is not the IP of a pod of namespace "+f.ns) ||
		!strings.Contains(strings.Join(refused, "\n"), "lists 10.0.0.4") || strings.Contains(strings.Join(refused, "\n"), other) {
		t.Fatalf("events %q: want each refused address told once, naming no other namespace", refused)
	}

	// A burst: two pods join in three slice writes; one apply, once still.
	f.pod(t, f.ns, "web-b", "10.244.1.6", ready)
	f.pod(t, f.ns, "web-c", "10.244.1.7", ready)
	f.slice(t, "web", "web-1", map[string]bool{"10.244.1.5": true, "10.244.1.6": true, "10.244.2.7": true, "10.0.0.4": true})
	f.slice(t, "web", "web-2", map[string]bool{"10.244.1.7": false})
	f.slice(t, "web", "web-2", map[string]bool{"10.244.1.7": true})
	want := []string{"10.244.1.5:8080", "10.244.1.6:8080", "10.244.1.7:8080"}
	eventually(t, 10*time.Second, func() bool {
		got := f.engine.appliesOf(web.Ref())
		return len(got) > 1 && slices.Equal(got[len(got)-1], want)
	})
	time.Sleep(time.Second)
	if got := f.engine.appliesOf(web.Ref()); len(got) != 2 {
		t.Errorf("applies %v: want the burst applied once", got)
	}
	if n := len(f.review.said()); n != 2 {
		t.Errorf("%d events: the refused addresses are told again", n)
	}

	// The user moves on: destroyed, after one refusal (in use).
	f.engine.mu.Lock()
	f.engine.inUse = 1
	f.engine.mu.Unlock()
	_, err := f.pools.Use(ctx, "gateway:infra/gw", nil)
	testkit.Must(t, err)
	eventually(t, 10*time.Second, func() bool { return f.engine.destroysOf(web.Ref()) == 2 })
	eventually(t, 5*time.Second, func() bool { return len(f.pools.Users()) == 0 })
}

// A slice may name a pod before the controller's informer has seen it
// (it lags the EndpointSlice controller's): the address is refused then,
// untold (RefusedGrace, 30 s), and a target once the pod is known, with
// no slice change to say so.
func TestRefusedAddressDecidedAgainWhenItsPodIsKnown(t *testing.T) {
	f := start(t)
	web := f.service(t, "web")
	f.pod(t, f.ns, "web-a", "10.244.1.5", ready)
	f.slice(t, "web", "web-1", map[string]bool{"10.244.1.5": true, "10.244.1.9": true})
	eventually(t, 10*time.Second, func() bool { _, ok := f.pools.podIn(f.ns)("10.244.1.5"); return ok })
	f.firstApply(t, web, "the known pod only", "10.244.1.5:8080")
	f.pod(t, f.ns, "web-b", "10.244.1.9", ready)
	eventually(t, 10*time.Second, func() bool {
		got := f.engine.appliesOf(web.Ref())
		return slices.Equal(got[len(got)-1], []string{"10.244.1.5:8080", "10.244.1.9:8080"})
	})
	if said := f.review.said(); len(said) != 0 {
		t.Errorf("events %q: the Service was warned of a pod on its way", said)
	}
}

// A target's pod that ends (its phase Succeeded, or deleted) leaves the
// pool at once, with no slice change to say so: a hand-written slice
// would keep its IP a target until the resync, and the tenant's load
// balancer would reach the pod of another namespace given that IP.
func TestTargetDecidedAgainWhenItsPodEnds(t *testing.T) {
	f := start(t)
	ctx := testkit.Context(t)
	web := f.service(t, "web")
	other := f.otherNamespace(t)
	f.pod(t, f.ns, "web-a", "10.244.1.5", ready)
	f.pod(t, f.ns, "web-b", "10.244.1.6", ready)
	f.slice(t, "web", "web-1", map[string]bool{"10.244.1.5": true, "10.244.1.6": true})
	eventually(t, 10*time.Second, func() bool { _, ok := f.pools.podIn(f.ns)("10.244.1.6"); return ok })
	f.firstApply(t, web, "both pods", "10.244.1.5:8080", "10.244.1.6:8080")
	last := func() []string {
		got := f.engine.appliesOf(web.Ref())
		return got[len(got)-1]
	}

	pod, err := f.kube.CoreV1().Pods(f.ns).Get(ctx, "web-b", metav1.GetOptions{})
	testkit.Must(t, err)
	pod.Status.Phase = corev1.PodSucceeded
	_, err = f.kube.CoreV1().Pods(f.ns).UpdateStatus(ctx, pod, metav1.UpdateOptions{})
	testkit.Must(t, err)
	eventually(t, 5*time.Second, func() bool { return slices.Equal(last(), []string{"10.244.1.5:8080"}) })

	testkit.Must(t, f.kube.CoreV1().Pods(f.ns).Delete(ctx, "web-a", metav1.DeleteOptions{GracePeriodSeconds: ptr.To[int64](0)}))
	f.pod(t, other, "theirs", "10.244.1.5", ready)
	eventually(t, 5*time.Second, func() bool { return len(last()) == 0 })
}

// Who uses a pool is told when this process first applies it (a
// Gateway holding a route for it looks again at once), not at its later
// changes.
func TestOnAppliedTellsTheUsers(t *testing.T) {
	f := start(t)
	var mu sync.Mutex
	var told [][]string
	f.pools.OnApplied(func(users []string) {
		mu.Lock()
		defer mu.Unlock()
		told = append(told, users)
	})
	web := f.service(t, "web")
	f.pod(t, f.ns, "web-a", "10.244.1.5", ready)
	f.slice(t, "web", "web-1", map[string]bool{"10.244.1.5": true})
	eventually(t, 10*time.Second, func() bool { _, ok := f.pools.podIn(f.ns)("10.244.1.5"); return ok })
	f.firstApply(t, web, "the pod", "10.244.1.5:8080")
	f.pod(t, f.ns, "web-b", "10.244.1.6", ready)
	f.slice(t, "web", "web-2", map[string]bool{"10.244.1.6": true})
	eventually(t, 10*time.Second, func() bool { return len(f.engine.appliesOf(web.Ref())) == 2 })
	mu.Lock()
	defer mu.Unlock()
	if len(told) != 1 || !slices.Equal(told[0], []string{"gateway:infra/gw"}) {
		t.Errorf("told %v, want the Gateway once", told)
	}
}

// A slice relabelled for another Service leaves its former Service's pool
// at once, not at the resync.
func TestRelabelledSliceLeavesItsFormerService(t *testing.T) {
	f := start(t)
	ctx := testkit.Context(t)
	web := f.service(t, "web")
	f.service(t, "api")
	f.pod(t, f.ns, "web-a", "10.244.1.5", ready)
	f.slice(t, "web", "web-1", map[string]bool{"10.244.1.5": true})
	eventually(t, 10*time.Second, func() bool { _, ok := f.pools.podIn(f.ns)("10.244.1.5"); return ok })
	f.firstApply(t, web, "the pod", "10.244.1.5:8080")

	s, err := f.kube.DiscoveryV1().EndpointSlices(f.ns).Get(ctx, "web-1", metav1.GetOptions{})
	testkit.Must(t, err)
	s.Labels[discoveryv1.LabelServiceName] = "api"
	_, err = f.kube.DiscoveryV1().EndpointSlices(f.ns).Update(ctx, s, metav1.UpdateOptions{})
	testkit.Must(t, err)
	eventually(t, 5*time.Second, func() bool {
		got := f.engine.appliesOf(web.Ref())
		return len(got[len(got)-1]) == 0
	})
}

// A pool's first plan waits for the EndpointSlice controller's first
// slice of a Service just made, rather than planning an empty pool that
// one with the endpoints supersedes within seconds (a plan to review in
// vain, 503s); a Service whose slice never comes gets its pool after the
// settle's quiet time, empty.
func TestFirstPlanAwaitsTheSlices(t *testing.T) {
	f := start(t)
	ctx := testkit.Context(t)
	api := f.service(t, "api", "api")
	f.pod(t, f.ns, "api-a", "10.244.1.9", ready)
	eventually(t, 10*time.Second, func() bool { _, ok := f.pools.podIn(f.ns)("10.244.1.9"); return ok })
	eventually(t, 10*time.Second, func() bool { return f.pools.service(api) != nil })
	written := make(chan error, 1)
	go func() {
		// What the EndpointSlice controller writes, moments after.
		time.Sleep(100 * time.Millisecond)
		_, err := f.kube.DiscoveryV1().EndpointSlices(f.ns).Create(ctx, &discoveryv1.EndpointSlice{
			ObjectMeta:  metav1.ObjectMeta{Name: "api-x1", Labels: map[string]string{discoveryv1.LabelServiceName: "api"}},
			AddressType: discoveryv1.AddressTypeIPv4,
			Ports:       []discoveryv1.EndpointPort{{Name: ptr.To("http"), Port: ptr.To[int32](8080), Protocol: ptr.To(corev1.ProtocolTCP)}},
			Endpoints:   []discoveryv1.Endpoint{{Addresses: []string{"10.244.1.9"}, Conditions: discoveryv1.EndpointConditions{Ready: ptr.To(true)}}},
		}, metav1.CreateOptions{})
		written <- err
	}()
	ids, err := f.pools.Use(ctx, "service:"+f.ns+"/api", []lbmodel.ServicePort{api})
	testkit.Must(t, err)
	testkit.Must(t, <-written)
	if got := f.engine.appliesOf(api.Ref()); ids[api] == "" || len(got) != 1 || !slices.Equal(got[0], []string{"10.244.1.9:8080"}) {
		t.Fatalf("ids %v, applies %v; want one, of the pod the slice lists", ids, got)
	}

	lonely := f.service(t, "lonely", "nobody")
	eventually(t, 10*time.Second, func() bool { return f.pools.service(lonely) != nil })
	if _, err := f.pools.Use(ctx, "service:"+f.ns+"/lonely", []lbmodel.ServicePort{lonely}); err != nil {
		t.Fatal(err)
	}
	if got := f.engine.appliesOf(lonely.Ref()); len(got) != 1 || len(got[0]) != 0 {
		t.Fatalf("applies %v; want one, empty", got)
	}
}

// A pod held back only by its Service's readiness gate is a target, and
// Ready once every load balancer finds it healthy; one whose containers
// are not ready is neither.
func TestReadinessGates(t *testing.T) {
	f := start(t)
	ctx := testkit.Context(t)
	web := f.service(t, "web")
	gate := podtargets.Gate("web")
	f.pod(t, f.ns, "web-a", "10.244.1.5", []corev1.PodConditionType{corev1.ContainersReady}, gate)
	f.pod(t, f.ns, "web-b", "10.244.1.6", nil, gate)
	f.slice(t, "web", "web-1", map[string]bool{"10.244.1.5": false, "10.244.1.6": false})
	eventually(t, 10*time.Second, func() bool { _, ok := f.pools.podIn(f.ns)("10.244.1.6"); return ok })

	f.firstApply(t, web, "the gated pod only", "10.244.1.5:8080")
	gated := func(name string) bool {
		pod, err := f.kube.CoreV1().Pods(f.ns).Get(ctx, name, metav1.GetOptions{})
		testkit.Must(t, err)
		return passed(pod, gate)
	}
	time.Sleep(500 * time.Millisecond)
	if gated("web-a") {
		t.Fatal("the gate passed before any load balancer found the pod healthy")
	}
	f.health.set("10.244.1.5:8080", exampleapi.TargetHealthy)
	eventually(t, 10*time.Second, func() bool { return gated("web-a") })
	if gated("web-b") {
		t.Error("the gate of a pod whose containers are not ready passed")
	}
}

// eventually polls cond until timeout.
func eventually(t *testing.T, timeout time.Duration, cond func() bool) {
	t.Helper()
	testkit.Eventually(t, timeout, "the condition", func() error {
		if cond() {
			return nil
		}
		return errors.New("not yet")
	})
}

// A gated pod of a Service no load balancer forwards to is held only for
// the grace after the start, in which the front-ends say what they
// forward to; then it is Ready.
func TestGateOfAnUntargetedService(t *testing.T) {
	f := start(t, func(o *Options) { o.NotTargetedGrace = 3 * time.Second })
	ctx := testkit.Context(t)
	f.service(t, "web")
	f.pod(t, f.ns, "web-a", "10.244.1.5", []corev1.PodConditionType{corev1.ContainersReady}, podtargets.Gate("web"))
	begin := time.Now()
	eventually(t, 10*time.Second, func() bool {
		pod, err := f.kube.CoreV1().Pods(f.ns).Get(ctx, "web-a", metav1.GetOptions{})
		testkit.Must(t, err)
		return passed(pod, podtargets.Gate("web"))
	})
	if waited := time.Since(begin); waited < 2*time.Second {
		t.Errorf("passed after %v, within the grace", waited)
	}
}

// A replica that keeps no pools previews from what their workspaces
// hold, and makes none.
func TestRecorded(t *testing.T) {
	web := lbmodel.ServicePort{Namespace: "shop", Service: "web", Port: 80}
	api := lbmodel.ServicePort{Namespace: "shop", Service: "api", Port: 80}
	r := Recorded{Engine: recordedIDs{web.Ref(): "tp-web"}}
	got, err := r.Known(context.Background(), []lbmodel.ServicePort{web, api})
	if err != nil || len(got) != 1 || got[web] != "tp-web" {
		t.Fatalf("Known = %v, %v; want web's only", got, err)
	}
	if _, err := r.Use(context.Background(), "gateway:infra/gw", []lbmodel.ServicePort{web}); err == nil {
		t.Fatal("a preview's Use made a pool")
	}
	if _, err := r.Use(context.Background(), "gateway:infra/gw", nil); err != nil {
		t.Fatalf("using none: %v", err)
	}
}

// A new leader's Gateways find the pools an earlier leader applied by
// their records, before its worker applies them again: their routes do
// not wait for that. A pool never applied has no id.
func TestKnownReadsRecordedPools(t *testing.T) {
	web := lbmodel.ServicePort{Namespace: "shop", Service: "web", Port: 80}
	api := lbmodel.ServicePort{Namespace: "shop", Service: "api", Port: 80}
	eng := &fakeEngine{applies: map[objectref.Ref][][]string{}, recorded: map[objectref.Ref]string{web.Ref(): "tp-web"}}
	p := New(kubefake.NewClientset(), eng, &fakeReview{}, &fakeCloud{}, Options{})
	p.Want("gateway:infra/gw", []lbmodel.ServicePort{web, api})
	got, err := p.Known(context.Background(), []lbmodel.ServicePort{web, api})
	if err != nil || len(got) != 1 || got[web] != "tp-web" {
		t.Fatalf("Known = %v, %v; want web's recorded id only", got, err)
	}
	if len(eng.applies) != 0 {
		t.Errorf("Known applied %v", eng.applies)
	}
}

// recordedIDs are pod pools' ids as their workspaces hold them.
type recordedIDs map[objectref.Ref]string

func (r recordedIDs) PodPoolID(_ context.Context, ref objectref.Ref) (string, error) {
	return r[ref], nil
}

// A pod pool of the cluster in the cloud that no front-end says it uses
// once NotTargetedGrace has passed since the start (its last user went
// while no leader kept the pools) is destroyed; one a front-end uses,
// another cluster's, and a pool of instances are not.
func TestSweepAfterTheStart(t *testing.T) {
	f := start(t, func(o *Options) { o.NotTargetedGrace, o.ClusterID = time.Second, "prod" })
	web := f.service(t, "web")
	gone := lbmodel.ServicePort{Namespace: f.ns, Service: "gone", Port: 53, Protocol: corev1.ProtocolUDP}
	tags := func(sp lbmodel.ServicePort, cluster string) map[string]string {
		return map[string]string{lbmodel.TagManagedBy: lbmodel.ManagedBy, lbmodel.TagClusterID: cluster,
			lbmodel.TagServiceNamespace: sp.Namespace, lbmodel.TagServiceName: sp.Service, lbmodel.TagServicePort: sp.Tag()}
	}
	other := lbmodel.ServicePort{Namespace: f.ns, Service: "theirs", Port: 80, Protocol: corev1.ProtocolTCP}
	nodes := lbmodel.ServicePort{Namespace: f.ns, Service: "nodes", Port: 80, Protocol: corev1.ProtocolTCP}
	f.health.mu.Lock()
	f.health.pools = []exampleapi.TargetPool{
		{ObjectMeta: exampleapi.ObjectMeta{ID: "tp-web"}, TargetType: exampleapi.TargetTypeIP, Tags: tags(web, "prod")},
		{ObjectMeta: exampleapi.ObjectMeta{ID: "tp-gone"}, TargetType: exampleapi.TargetTypeIP, Tags: tags(gone, "prod")},
		{ObjectMeta: exampleapi.ObjectMeta{ID: "tp-theirs"}, TargetType: exampleapi.TargetTypeIP, Tags: tags(other, "staging")},
		{ObjectMeta: exampleapi.ObjectMeta{ID: "tp-nodes"}, Tags: tags(nodes, "prod")},
	}
	f.health.mu.Unlock()
	if _, err := f.pools.Use(testkit.Context(t), "gateway:infra/gw", []lbmodel.ServicePort{web}); err != nil {
		t.Fatal(err)
	}
	eventually(t, 10*time.Second, func() bool { return f.engine.destroysOf(gone.Ref()) == 1 })
	time.Sleep(500 * time.Millisecond) // anything else would have gone by now
	for _, sp := range []lbmodel.ServicePort{web, other, nodes} {
		if n := f.engine.destroysOf(sp.Ref()); n != 0 {
			t.Errorf("%s destroyed %d times", sp, n)
		}
	}
	if _, ok := f.pools.Users()[gone.Ref()]; ok {
		t.Errorf("the swept pool is still kept: %v", f.pools.Users())
	}
}

// Want says a user's ports without waiting: the worker applies a new
// pool at once, and destroys it once its last user wants it no more.
func TestWantLeavesTheApplyToTheWorker(t *testing.T) {
	f := start(t)
	web := f.service(t, "web")
	f.pools.Want("shop/web", []lbmodel.ServicePort{web})
	if got := f.pools.Users()[web.Ref()]; !slices.Equal(got, []string{"shop/web"}) {
		t.Fatalf("users %v", got)
	}
	eventually(t, 10*time.Second, func() bool { return len(f.engine.appliesOf(web.Ref())) == 1 })
	f.pools.Want("shop/web", nil)
	eventually(t, 10*time.Second, func() bool { return f.engine.destroysOf(web.Ref()) == 1 })
}

// A pod pool drains for its Service's deregistration-delay annotation,
// and is applied again when the annotation changes, its targets the
// same; without one, for the cluster's (nil).
func TestPoolDelayIsTheService(t *testing.T) {
	f := start(t)
	web := f.service(t, "web")
	if _, err := f.pools.Use(testkit.Context(t), "gateway:infra/gw", []lbmodel.ServicePort{web}); err != nil {
		t.Fatal(err)
	}
	delayOf := func() *time.Duration {
		f.engine.mu.Lock()
		defer f.engine.mu.Unlock()
		return f.engine.delay[web.Ref()]
	}
	if d := delayOf(); d != nil {
		t.Fatalf("delay %v without the annotation, want the cluster's (nil)", *d)
	}
	svc, err := f.kube.CoreV1().Services(f.ns).Get(testkit.Context(t), "web", metav1.GetOptions{})
	testkit.Must(t, err)
	svc.Annotations = map[string]string{string(annotations.LBDeregistrationDelay): "45s"}
	_, err = f.kube.CoreV1().Services(f.ns).Update(testkit.Context(t), svc, metav1.UpdateOptions{})
	testkit.Must(t, err)
	eventually(t, 10*time.Second, func() bool { d := delayOf(); return d != nil && *d == 45*time.Second })
	if n := len(f.engine.appliesOf(web.Ref())); n != 2 {
		t.Errorf("%d applies, want 2: the first, and the delay's", n)
	}
}

// A pool nobody uses is kept for UnusedGrace while its Service is
// there: a user back within it finds the pool (no apply when its targets
// are the same; its targets, not followed meanwhile, decided again
// before anyone gets its id); left alone, it is destroyed once the grace
// has passed; its Service deleted, once InUseRetry has (the time the
// apply that stops a load balancer forwarding to it may take).
func TestUnusedPoolKeptForItsGrace(t *testing.T) {
	const grace = 5 * time.Second
	f := start(t, func(o *Options) { o.UnusedGrace = grace })
	ctx := testkit.Context(t)
	var told []string
	var mu sync.Mutex
	f.pools.OnApplied(func(users []string) { mu.Lock(); defer mu.Unlock(); told = append(told, users...) })
	const user = "gateway:infra/gw"
	web := f.service(t, "web")
	f.pod(t, f.ns, "web-a", "10.244.1.5", ready)
	f.slice(t, "web", "web-1", map[string]bool{"10.244.1.5": true})
	f.firstApply(t, web, "the pod", "10.244.1.5:8080")

	// Unused, the pool does not follow its Service's pods.
	f.leave(t, user)
	f.pod(t, f.ns, "web-b", "10.244.1.6", ready)
	f.slice(t, "web", "web-1", map[string]bool{"10.244.1.5": true, "10.244.1.6": true})
	time.Sleep(time.Second)
	if n, d := len(f.engine.appliesOf(web.Ref())), f.engine.destroysOf(web.Ref()); n != 1 || d != 0 {
		t.Fatalf("%d applies, %d destroys of a pool unused for a second; want 1 and 0", n, d)
	}
	// Back: its id waits until its targets are decided again, not even
	// from its workspace's record.
	f.engine.mu.Lock()
	f.engine.recorded = map[objectref.Ref]string{web.Ref(): "tp-web"}
	f.engine.mu.Unlock()
	f.pools.want(user, []lbmodel.ServicePort{web})
	if ids, err := f.pools.Known(ctx, []lbmodel.ServicePort{web}); err != nil || len(ids) != 0 {
		t.Fatalf("Known %v, %v of a pool back from unused: want nothing before its targets are decided again", ids, err)
	}
	ids, err := f.pools.Use(ctx, user, []lbmodel.ServicePort{web})
	testkit.Must(t, err)
	want := []string{"10.244.1.5:8080", "10.244.1.6:8080"}
	if got := f.engine.appliesOf(web.Ref()); ids[web] != "tp-web" || len(got) != 2 || !slices.Equal(got[1], want) {
		t.Fatalf("ids %v, applies %v: want the same pool applied with %v", ids, got, want)
	}
	mu.Lock()
	if !slices.Contains(told, user) {
		t.Errorf("users told %v: want %s, whose routes wait for the pool", told, user)
	}
	mu.Unlock()
	// Left and back at once, its targets the same: no apply at all.
	f.leave(t, user)
	if _, err := f.pools.Use(ctx, user, []lbmodel.ServicePort{web}); err != nil {
		t.Fatal(err)
	}
	if n, d := len(f.engine.appliesOf(web.Ref())), f.engine.destroysOf(web.Ref()); n != 2 || d != 0 {
		t.Fatalf("%d applies, %d destroys after a user came back to the same targets; want 2 and 0", n, d)
	}

	// Left alone: destroyed once the grace has passed, not before.
	left := time.Now()
	f.leave(t, user)
	eventually(t, grace+10*time.Second, func() bool { return f.engine.destroysOf(web.Ref()) == 1 })
	if took := time.Since(left); took < grace {
		t.Errorf("destroyed %s after its last user went; want the grace, %s", took, grace)
	}

	// Its Service deleted: InUseRetry (200 ms here) after its last user.
	api := f.service(t, "api")
	f.firstApply(t, api, "no target")
	f.leave(t, user)
	deleted := time.Now()
	testkit.Must(t, f.kube.CoreV1().Services(f.ns).Delete(ctx, "api", metav1.DeleteOptions{}))
	eventually(t, grace, func() bool { return f.engine.destroysOf(api.Ref()) == 1 })
	if took := time.Since(deleted); took > grace/2 {
		t.Errorf("destroyed %s after its Service was deleted; want InUseRetry after its last user", took)
	}
}
