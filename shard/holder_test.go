package shard

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"net/http"
	"os"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	clocktesting "k8s.io/utils/clock/testing"
	"k8s.io/utils/ptr"

	"github.com/example/cloud-provider-example/internal/testcluster"
)

// The tests on an API server share one (testcluster.Shared), each with its
// Leases in a namespace of its own.
func TestMain(m *testing.M) { os.Exit(testcluster.Main(m)) }

// replica is one Holder under test, with a connection that can be cut
// (a replica that dies: it stops renewing and gives nothing back).
type replica struct {
	id     string
	h      *Holder
	cut    atomic.Bool
	cancel context.CancelFunc
	done   chan struct{}
}

// cutTransport fails every request once its replica is cut.
type cutTransport struct {
	next http.RoundTripper
	cut  *atomic.Bool
}

func (c cutTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	if c.cut.Load() {
		return nil, errors.New("replica is dead")
	}
	return c.next.RoundTrip(r)
}

type set struct {
	t         *testing.T
	cluster   *testcluster.Cluster
	namespace string // of the Leases
	shards    int
	lease     time.Duration

	mu       sync.Mutex
	replicas []*replica
	// moves are the OnMove calls heard, "shard from->to".
	moves []string
}

func (s *set) start(id string) *replica {
	s.t.Helper()
	r := &replica{id: id, done: make(chan struct{})}
	cfg := rest.CopyConfig(s.cluster.Admin)
	cfg.WrapTransport = func(rt http.RoundTripper) http.RoundTripper { return cutTransport{next: rt, cut: &r.cut} }
	client, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		s.t.Fatal(err)
	}
	r.h, err = New(Config{Client: client, Namespace: s.namespace, Prefix: "ccm", Identity: id, Shards: s.shards,
		LeaseDuration: s.lease, RenewPeriod: s.lease / 6, Leads: func() bool { return id == "replica-a" },
		OnMove: func(i int, from, to string) {
			s.mu.Lock()
			s.moves = append(s.moves, fmt.Sprintf("%d %s->%s", i, from, to))
			s.mu.Unlock()
		}})
	if err != nil {
		s.t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	r.cancel = cancel
	go func() { defer close(r.done); r.h.Run(ctx) }()
	s.mu.Lock()
	s.replicas = append(s.replicas, r)
	s.mu.Unlock()
	s.t.Cleanup(func() { cancel(); <-r.done })
	return r
}

// live are the replicas neither cut nor stopped.
func (s *set) live() []*replica {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []*replica
	for _, r := range s.replicas {
		select {
		case <-r.done:
		default:
			if !r.cut.Load() {
				out = append(out, r)
			}
		}
	}
	return out
}

// balanced waits until the live replicas own every shard between them,
// each its fair share or one less; it returns how long that took.
func (s *set) balanced(within time.Duration, what string) time.Duration {
	s.t.Helper()
	start := time.Now()
	var last string
	for time.Since(start) < within {
		live := s.live()
		fair := share(s.shards, len(live))
		owned, ok := map[int]bool{}, true
		last = ""
		for _, r := range live {
			mine := r.h.Owned()
			last += fmt.Sprintf("%s:%v ", r.id, mine)
			ok = ok && len(mine) <= fair && len(mine) >= fair-1
			for _, i := range mine {
				owned[i] = true
			}
		}
		if ok && len(owned) == s.shards {
			return time.Since(start)
		}
		time.Sleep(50 * time.Millisecond)
	}
	s.t.Fatalf("%s: not balanced within %s: %s", what, within, last)
	return 0
}

// readersAgree: what ReadOwners reads from the Leases (examplectl status)
// names, for keys of every shard, the live replica that owns the key, and
// replica-a as the leader.
func (s *set) readersAgree(what string) {
	s.t.Helper()
	client, err := kubernetes.NewForConfig(s.cluster.Admin)
	if err != nil {
		s.t.Fatal(err)
	}
	o, err := ReadOwners(context.Background(), client, s.namespace, "ccm", time.Now())
	if err != nil || o == nil {
		s.t.Fatalf("%s: ReadOwners = %v, %v; want the set's owners", what, o, err)
	}
	if o.Leader != "replica-a" {
		s.t.Errorf("%s: ReadOwners says the leader is %q, want replica-a", what, o.Leader)
	}
	for k := range 60 {
		key := fmt.Sprintf("Service/ns/svc-%d", k)
		var owner string
		for _, r := range s.live() {
			if r.h.OwnsKey(key) {
				owner = r.id
			}
		}
		if got := o.Of(key); got != owner {
			s.t.Errorf("%s: ReadOwners says %s holds %s; the replicas say %q", what, got, key, owner)
		}
	}
}

// TestShardsOverReplicas, on a real API server: three replicas share 12
// shards; one dies (stops renewing) and the others take its shards after
// the lease; one joins and gets its share; one stops and gives its shards
// back at once. Throughout, no shard is owned by two replicas at the same
// moment.
func TestShardsOverReplicas(t *testing.T) {
	cluster := testcluster.Shared(t)
	s := &set{t: t, cluster: cluster, namespace: cluster.Namespace(t), shards: 12, lease: 3 * time.Second}
	// The invariant, sampled all along: never two owners.
	stop := make(chan struct{})
	var doubles atomic.Int64
	var sampled sync.WaitGroup
	sampled.Add(1)
	go func() {
		defer sampled.Done()
		for {
			select {
			case <-stop:
				return
			case <-time.After(5 * time.Millisecond):
			}
			owners := map[int]string{}
			for _, r := range s.live() {
				for _, i := range r.h.Owned() {
					if o, ok := owners[i]; ok {
						t.Errorf("shard %d owned by %s and %s at once", i, o, r.id)
						doubles.Add(1)
					}
					owners[i] = r.id
				}
			}
		}
	}()
	defer func() { close(stop); sampled.Wait() }()

	a, b, c := s.start("replica-a"), s.start("replica-b"), s.start("replica-c")
	s.balanced(15*time.Second, "three replicas")
	for _, r := range []*replica{a, b, c} {
		if n := len(r.h.Owned()); n != 4 {
			t.Errorf("%s owns %d shards; want 4 of 12", r.id, n)
		}
	}
	s.readersAgree("three replicas")

	// c dies: a and b take its shards once its Leases are a lease old.
	held := c.h.Owned()
	c.cut.Store(true)
	took := s.balanced(s.lease+10*time.Second, "after replica-c died")
	t.Logf("replica-c's %d shards taken %s after it died (lease %s)", len(held), took.Round(10*time.Millisecond), s.lease)
	if took < s.lease-s.lease/10 {
		t.Errorf("replica-c's shards were taken after %s, before its lease of %s ran out", took, s.lease)
	}
	s.mu.Lock()
	for _, i := range held {
		if !slices.ContainsFunc(s.moves, func(m string) bool {
			return m == fmt.Sprintf("%d replica-c->replica-a", i) || m == fmt.Sprintf("%d replica-c->replica-b", i)
		}) {
			t.Errorf("no move of shard %d from replica-c to a or b was heard: %v", i, s.moves)
		}
	}
	s.mu.Unlock()

	s.readersAgree("after replica-c died")

	// d joins: it gets its share from a and b.
	s.start("replica-d")
	s.balanced(s.lease+10*time.Second, "after replica-d joined")

	// a stops: it gives its shards back, so they move well before a lease.
	a.cancel()
	<-a.done
	if took := s.balanced(s.lease+10*time.Second, "after replica-a stopped"); took > s.lease {
		t.Errorf("replica-a's shards moved %s after it stopped: a stopping replica gives them back", took)
	}
	if doubles.Load() > 0 {
		t.Fatalf("%d samples saw a shard owned twice", doubles.Load())
	}
}

// A renewal late past the owning margin (a slow API server): the shard is
// still held, with the generation it was taken in, but not owned until the
// next renewal. Taken by another replica, it is no longer held; taken back
// later, it comes with a new generation (the controller replays its
// objects then, however short the gap).
func TestHeldThroughALateRenewal(t *testing.T) {
	cluster := testcluster.Shared(t)
	ns := cluster.Namespace(t)
	client, err := kubernetes.NewForConfig(cluster.Admin)
	if err != nil {
		t.Fatal(err)
	}
	clk := clocktesting.NewFakePassiveClock(time.Now())
	h, err := New(Config{Client: client, Namespace: ns, Prefix: "late", Identity: "replica-a", Shards: 2,
		LeaseDuration: 4 * time.Second, Clock: clk})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	step := func(what string) {
		t.Helper()
		if err := h.step(ctx); err != nil {
			t.Fatalf("%s: %v", what, err)
		}
	}
	step("first round")
	first := h.Held()
	if len(first) != 2 || first[0] == first[1] || !h.Owns(0) || !h.HoldsKey(keyOf(t, 0, 2)) {
		t.Fatalf("after the first round: held %v, owns shard 0 %v; want both held, in different generations, and owned", first, h.Owns(0))
	}

	clk.SetTime(clk.Now().Add(4 * time.Second))
	if h.Owns(0) || !h.Holds(0) || !maps.Equal(h.Held(), first) {
		t.Fatalf("renewal late: owns %v, holds %v, held %v; want held as before, not owned", h.Owns(0), h.Holds(0), h.Held())
	}
	step("renewal")
	if !h.Owns(0) || !maps.Equal(h.Held(), first) {
		t.Fatalf("renewed: owns %v, held %v; want owned again, in the same generations %v", h.Owns(0), h.Held(), first)
	}

	// Another replica writes itself into shard 0's Lease.
	lease, err := client.CoordinationV1().Leases(ns).Get(ctx, h.LeaseName(0), metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	lease.Spec.HolderIdentity = ptr.To("replica-b")
	if _, err := client.CoordinationV1().Leases(ns).Update(ctx, lease, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	step("shard 0 taken by another")
	if h.Holds(0) || h.Owns(0) || h.Held()[1] != first[1] {
		t.Fatalf("shard 0 taken: holds %v, held %v; want shard 1 alone, as before", h.Holds(0), h.Held())
	}
	clk.SetTime(clk.Now().Add(5 * time.Second)) // replica-b never renews
	step("shard 0 free again")
	if again := h.Held(); again[0] == 0 || again[0] == first[0] || again[1] != first[1] {
		t.Fatalf("shard 0 taken back: held %v; want a new generation for shard 0 (was %v)", again, first)
	}
}

// keyOf is a key in shard i of n.
func keyOf(t *testing.T, i, n int) string {
	for k := range 1000 {
		if key := fmt.Sprintf("Service/ns/svc-%d", k); Of(key, n) == i {
			return key
		}
	}
	t.Fatalf("no key in shard %d of %d", i, n)
	return ""
}
