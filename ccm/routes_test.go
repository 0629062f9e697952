package ccm

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/types"
	cloudprovider "k8s.io/cloud-provider"

	"github.com/example/cloud-provider-example/engine"
	"github.com/example/cloud-provider-example/exampleapi"
	"github.com/example/cloud-provider-example/internal/testkit"
	"github.com/example/cloud-provider-example/review"
	"github.com/example/cloud-provider-example/review/reviewtest"
)

// fakeRouteEngine is the route set without terraform (routeEngine): its
// cloud holds routes, each reconcile makes it the list given unless an
// error is queued for it. The terraform-backed route set is the e2e's.
type fakeRouteEngine struct {
	mu      sync.Mutex
	cloud   map[string]engine.Route // by destination
	reads   int                     // Routes calls
	applied [][]string              // each reconcile's routes, "dest>instance", sorted
	errs    []error                 // of the next reconciles; nil succeeds
	readErr error                   // of the next Routes call
}

func newFakeRouteEngine(routes ...string) *fakeRouteEngine {
	e := &fakeRouteEngine{cloud: map[string]engine.Route{}}
	for _, r := range routes {
		dest, id, _ := strings.Cut(r, ">")
		e.cloud[dest] = engine.Route{Destination: dest, TargetInstanceID: id, Status: "active"}
	}
	return e
}

const routesWS = "prod-routes-cluster"

func (e *fakeRouteEngine) Routes(context.Context) ([]engine.Route, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.reads++
	if err := e.readErr; err != nil {
		e.readErr = nil
		return nil, err
	}
	var out []engine.Route
	for _, d := range slices.Sorted(maps.Keys(e.cloud)) {
		out = append(out, e.cloud[d])
	}
	return out, nil
}

func (e *fakeRouteEngine) RoutesWorkspace() (string, error) { return routesWS, nil }

func (e *fakeRouteEngine) RenderRoutes([]engine.DesiredRoute) (*engine.Module, engine.Job, error) {
	return nil, engine.Job{Key: routesWS}, nil
}

func (e *fakeRouteEngine) ReconcileRoutes(_ context.Context, routes []engine.DesiredRoute, rv engine.Review) ([]engine.Route, *engine.Outcome, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	var list []string
	for _, r := range routes {
		list = append(list, r.Destination+">"+r.TargetInstanceID)
	}
	slices.Sort(list)
	e.applied = append(e.applied, list)
	out := &engine.Outcome{Policy: rv.Policy, Workspace: routesWS}
	if len(e.errs) > 0 {
		err := e.errs[0]
		e.errs = e.errs[1:]
		if err != nil {
			return nil, out, err
		}
	}
	e.cloud = map[string]engine.Route{}
	for _, r := range routes {
		e.cloud[r.Destination] = engine.Route{Destination: r.Destination, TargetInstanceID: r.TargetInstanceID, Status: "active"}
	}
	p := &engine.Plan{ID: fmt.Sprintf("plan-%012d", len(e.applied)), Workspace: routesWS, HasChanges: true}
	out.Planned, out.Applied, out.Result = p, p, &engine.Result{Plan: p, Applied: true}
	return nil, out, nil
}

func (e *fakeRouteEngine) ForceUnlock(context.Context, engine.Job, string) error { return nil }

// fakeNodes resolves node n to instance i-n; "gone" nodes and instances
// are not found, "broken" ones fail.
type fakeNodes struct{}

func (fakeNodes) byName(_ context.Context, name string) (*exampleapi.InstanceMetadata, error) {
	return fakeNodes{}.byID(context.Background(), "i-"+name)
}

func (fakeNodes) byID(_ context.Context, id string) (*exampleapi.InstanceMetadata, error) {
	switch id {
	case "i-gone":
		return nil, fmt.Errorf("instance %s: %w", id, exampleapi.ErrNotFound)
	case "i-broken":
		return nil, errors.New("metadata API: 503")
	}
	return &exampleapi.InstanceMetadata{ID: id, Name: strings.TrimPrefix(id, "i-")}, nil
}

// batchedRoutes is routes over e whose batches start when release gets a
// value (not after a window): the test queues a batch's calls, then lets
// it go.
func batchedRoutes(t *testing.T, e *fakeRouteEngine) (*routes, chan<- struct{}) {
	t.Helper()
	r := newRoutes(e, reviewtest.Config(t, ""), fakeNodes{}, review.New(reviewtest.Config(t, ""), nil))
	release := make(chan struct{})
	r.gather = func(ctx context.Context) bool {
		select {
		case <-release:
			return true
		case <-ctx.Done():
			return false
		}
	}
	t.Cleanup(r.stop)
	return r, release
}

// call is one CreateRoute or DeleteRoute in flight.
type call struct {
	name string
	done chan error
}

// queue starts CreateRoute ("dest>node") or DeleteRoute ("-dest") and
// returns once it waits in the next batch, so that calls queue in order.
func queue(t *testing.T, r *routes, op string) call {
	t.Helper()
	r.mu.Lock()
	before := len(r.pending)
	r.mu.Unlock()
	c := call{name: op, done: make(chan error, 1)}
	go func() {
		if dest, ok := strings.CutPrefix(op, "-"); ok {
			c.done <- r.DeleteRoute(context.Background(), "c", &cloudprovider.Route{DestinationCIDR: dest})
			return
		}
		dest, node, _ := strings.Cut(op, ">")
		c.done <- r.CreateRoute(context.Background(), "c", "", &cloudprovider.Route{DestinationCIDR: dest, TargetNode: types.NodeName(node)})
	}()
	deadline := time.Now().Add(10 * time.Second)
	for {
		r.mu.Lock()
		n := len(r.pending)
		r.mu.Unlock()
		if n > before {
			return c
		}
		select {
		case err := <-c.done:
			t.Fatalf("%s returned %v before it was batched", op, err)
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s never queued", op)
		}
		runtime.Gosched()
	}
}

// wait is the error each call returned.
func wait(t *testing.T, calls ...call) []error {
	t.Helper()
	var errs []error
	for _, c := range calls {
		select {
		case err := <-c.done:
			errs = append(errs, err)
		case <-time.After(10 * time.Second):
			t.Fatalf("%s did not return", c.name)
		}
	}
	return errs
}

// TestRoutesBatches: calls queued together are one reconcile of the route
// set, each returns its batch's error, and a failed batch makes the next
// one read the applied routes again instead of trusting its own.
func TestRoutesBatches(t *testing.T) {
	errApply := errors.New("terraform apply: boom")
	type batch struct {
		ops     []string
		errs    []error  // the fake's answer to this batch's reconcile (and any retry)
		readErr error    // of the read of the applied routes
		applied []string // the route set reconciled; nil: none
		want    error    // what every call of the batch returns
		reads   int      // Routes calls so far
	}
	cases := []struct {
		name    string
		cloud   []string
		batches []batch
	}{{
		name:  "a burst is one reconcile",
		cloud: []string{"10.0.1.0/24>i-n1"},
		batches: []batch{{
			ops:     []string{"10.0.2.0/24>n2", "10.0.3.0/24>n3", "10.0.4.0/24>n4", "-10.0.1.0/24", "10.0.5.0/24>n5"},
			applied: []string{"10.0.2.0/24>i-n2", "10.0.3.0/24>i-n3", "10.0.4.0/24>i-n4", "10.0.5.0/24>i-n5"},
			reads:   1,
		}, {
			ops:     []string{"10.0.6.0/24>n6", "-10.0.2.0/24"},
			applied: []string{"10.0.3.0/24>i-n3", "10.0.4.0/24>i-n4", "10.0.5.0/24>i-n5", "10.0.6.0/24>i-n6"},
			reads:   1, // what the last batch applied is known
		}},
	}, {
		name:  "in a batch, the last call for a destination wins",
		cloud: []string{"10.0.1.0/24>i-n1"},
		batches: []batch{{
			ops:     []string{"-10.0.1.0/24", "10.0.1.0/24>n7", "10.0.2.0/24>n2", "-10.0.2.0/24"},
			applied: []string{"10.0.1.0/24>i-n7"},
			reads:   1,
		}},
	}, {
		name:  "a failed batch's calls fail; the next reads the truth again",
		cloud: []string{"10.0.1.0/24>i-n1"},
		batches: []batch{{
			ops:     []string{"10.0.2.0/24>n2", "-10.0.1.0/24"},
			errs:    []error{errApply},
			applied: []string{"10.0.2.0/24>i-n2"},
			want:    errApply,
			reads:   1,
		}, {
			ops:     []string{"10.0.3.0/24>n3"},
			applied: []string{"10.0.1.0/24>i-n1", "10.0.3.0/24>i-n3"}, // not the failed batch's
			reads:   2,
		}},
	}, {
		name:  "the applied routes cannot be read",
		cloud: []string{"10.0.1.0/24>i-n1"},
		batches: []batch{{
			ops:     []string{"10.0.2.0/24>n2"},
			readErr: errors.New("state backend down"),
			want:    errors.New("read applied routes: state backend down"),
			reads:   1,
		}, {
			ops:     []string{"10.0.3.0/24>n3"},
			applied: []string{"10.0.1.0/24>i-n1", "10.0.3.0/24>i-n3"},
			reads:   2,
		}},
	}}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			e := newFakeRouteEngine(c.cloud...)
			r, release := batchedRoutes(t, e)
			reconciles := 0
			for i, b := range c.batches {
				e.mu.Lock()
				e.errs, e.readErr = b.errs, b.readErr
				e.mu.Unlock()
				var calls []call
				for _, op := range b.ops {
					calls = append(calls, queue(t, r, op))
				}
				release <- struct{}{}
				for j, err := range wait(t, calls...) {
					if (err == nil) != (b.want == nil) || (err != nil && !errors.Is(err, b.want) && err.Error() != b.want.Error()) {
						t.Errorf("batch %d: %s returned %v; want %v", i+1, b.ops[j], err, b.want)
					}
				}
				e.mu.Lock()
				if b.applied != nil {
					reconciles++
				}
				if len(e.applied) != reconciles {
					t.Fatalf("batch %d: %d reconciles of the route set so far; want %d", i+1, len(e.applied), reconciles)
				}
				if b.applied != nil && !slices.Equal(e.applied[len(e.applied)-1], b.applied) {
					t.Errorf("batch %d reconciled %q; want %q", i+1, e.applied[len(e.applied)-1], b.applied)
				}
				if e.reads != b.reads {
					t.Errorf("batch %d: the applied routes were read %d times; want %d", i+1, e.reads, b.reads)
				}
				e.mu.Unlock()
			}
			successes := 0
			for _, b := range c.batches {
				if b.want == nil {
					successes++
				}
			}
			if n := r.applies.Load(); n != int64(successes) {
				t.Errorf("%d applies counted; want %d", n, successes)
			}
		})
	}
}

// TestRoutesStop: a stop fails the calls waiting for a batch, and every
// later call at once (the route controller's own contexts never end).
func TestRoutesStop(t *testing.T) {
	t.Run("calls waiting", func(t *testing.T) {
		e := newFakeRouteEngine()
		r, _ := batchedRoutes(t, e)
		calls := []call{queue(t, r, "10.0.1.0/24>n1"), queue(t, r, "-10.0.2.0/24")}
		r.stop()
		for i, err := range wait(t, calls...) {
			if !errors.Is(err, context.Canceled) {
				t.Errorf("%s returned %v; want it cancelled", calls[i].name, err)
			}
		}
		e.mu.Lock()
		if len(e.applied) != 0 {
			t.Errorf("reconciled after the stop: %q", e.applied)
		}
		e.mu.Unlock()
		checkStopped(t, r)
	})
	t.Run("before the first call", func(t *testing.T) {
		r, _ := batchedRoutes(t, newFakeRouteEngine())
		r.stop()
		checkStopped(t, r)
	})
}

// checkStopped: calls on stopped routes fail at once.
func checkStopped(t *testing.T, r *routes) {
	t.Helper()
	for range 3 {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		err := r.CreateRoute(ctx, "c", "", &cloudprovider.Route{DestinationCIDR: "10.0.9.0/24", TargetNode: "n9"})
		cancel()
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("a call after the stop returned %v; want it to fail at once, cancelled", err)
		}
	}
}

// TestListRoutes: routes whose instance is gone (or the cloud says so)
// are blackholes, which the route controller deletes; a lookup that fails
// otherwise fails the list.
func TestListRoutes(t *testing.T) {
	e := newFakeRouteEngine("10.0.1.0/24>i-n1", "10.0.2.0/24>i-gone", "10.0.3.0/24>i-n3")
	e.cloud["10.0.3.0/24"] = engine.Route{Destination: "10.0.3.0/24", TargetInstanceID: "i-n3", Status: "blackhole"}
	r, _ := batchedRoutes(t, e)
	got, err := r.ListRoutes(context.Background(), "c")
	testkit.Must(t, err)
	var list []string
	for _, rt := range got {
		list = append(list, fmt.Sprintf("%s %s %v", rt.DestinationCIDR, rt.TargetNode, rt.Blackhole))
	}
	if want := []string{"10.0.1.0/24 n1 false", "10.0.2.0/24  true", "10.0.3.0/24  true"}; !slices.Equal(list, want) {
		t.Errorf("routes %q; want %q", list, want)
	}
	e.cloud["10.0.4.0/24"] = engine.Route{Destination: "10.0.4.0/24", TargetInstanceID: "i-broken"}
	if _, err := r.ListRoutes(context.Background(), "c"); err == nil || !strings.Contains(err.Error(), "i-broken") {
		t.Errorf("a failed lookup: %v; want an error naming the instance", err)
	}
	// A node that cannot be resolved is not queued.
	if err := r.CreateRoute(context.Background(), "c", "", &cloudprovider.Route{DestinationCIDR: "10.0.5.0/24", TargetNode: "broken"}); err == nil ||
		!strings.Contains(err.Error(), "node broken") {
		t.Errorf("CreateRoute for an unknown node: %v", err)
	}
	if len(r.pending) != 0 {
		t.Errorf("queued: %d", len(r.pending))
	}
}
