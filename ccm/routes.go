package ccm

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"k8s.io/apimachinery/pkg/types"
	cloudprovider "k8s.io/cloud-provider"
	"k8s.io/klog/v2"

	"github.com/example/cloud-provider-example/annotations"
	"github.com/example/cloud-provider-example/cloudconfig"
	"github.com/example/cloud-provider-example/engine"
	"github.com/example/cloud-provider-example/exampleapi"
	"github.com/example/cloud-provider-example/records"
)

// batchWindow is how long the first route change waits for others to join
// its plan: the route controller creates routes for many nodes at once, and
// one plan/apply for all of them beats one each.
const batchWindow = 250 * time.Millisecond

// routes implements cloudprovider.Routes over one route-set workspace for
// the cluster. Concurrent CreateRoute/DeleteRoute calls are coalesced into
// one plan and apply (group commit); each call returns when the apply that
// contains its change is done.
type routes struct {
	engine   routeEngine
	cfg      *cloudconfig.Config
	resolver nodeResolver
	board    routeReviewer

	once   sync.Once
	ctx    context.Context
	cancel context.CancelFunc
	kick   chan struct{}
	// gather lets the rest of a burst join a batch: batchWindow, or false
	// when stopped first.
	gather  func(ctx context.Context) bool
	mu      sync.Mutex
	pending []*routeOp
	// stopped is why run ended (set as it fails the last pending calls):
	// a later call fails at once instead of waiting for a batch that
	// never comes.
	stopped error
	// desired is the applied route set by destination; nil until read from
	// the state, and reset after a failed apply.
	desired map[string]engine.DesiredRoute
	// applies counts route-set plans run (for tests and benchmarks).
	applies atomic.Int64
}

// routeEngine is what routes needs of *engine.Engine: a seam, so that
// the batching is tested without terraform.
type routeEngine interface {
	Routes(ctx context.Context) ([]engine.Route, error)
	RoutesWorkspace() (string, error)
	RenderRoutes(routes []engine.DesiredRoute) (*engine.Module, engine.Job, error)
	ReconcileRoutes(ctx context.Context, routes []engine.DesiredRoute, rv engine.Review) ([]engine.Route, *engine.Outcome, error)
	ForceUnlock(ctx context.Context, job engine.Job, lockID string) error
}

var _ routeEngine = (*engine.Engine)(nil)

// nodeResolver maps node names to instances and back (metadata API,
// cached): instances implements it.
type nodeResolver interface {
	byName(ctx context.Context, name string) (*exampleapi.InstanceMetadata, error)
	byID(ctx context.Context, id string) (*exampleapi.InstanceMetadata, error)
}

type routeOp struct {
	create bool
	route  engine.DesiredRoute
	done   chan error
}

var _ cloudprovider.Routes = (*routes)(nil)

func newRoutes(e routeEngine, cfg *cloudconfig.Config, resolver nodeResolver, board routeReviewer) *routes {
	ctx, cancel := context.WithCancel(context.Background())
	return &routes{engine: e, cfg: cfg, resolver: resolver, board: board, ctx: ctx, cancel: cancel, kick: make(chan struct{}, 1),
		gather: gatherFor(batchWindow)}
}

// gatherFor waits d, or reports false when ctx ends first.
func gatherFor(d time.Duration) func(context.Context) bool {
	return func(ctx context.Context) bool {
		select {
		case <-time.After(d):
			return true
		case <-ctx.Done():
			return false
		}
	}
}

func (r *routes) stop() { r.cancel() }

// ListRoutes reads the applied routes from the recorded outputs or the
// state. A route whose instance is gone is reported as a blackhole, which
// the route controller then deletes.
func (r *routes) ListRoutes(ctx context.Context, _ string) ([]*cloudprovider.Route, error) {
	applied, err := r.engine.Routes(ctx)
	if err != nil {
		return nil, err
	}
	out := make([]*cloudprovider.Route, 0, len(applied))
	for _, a := range applied {
		rt := &cloudprovider.Route{Name: a.Destination, DestinationCIDR: a.Destination}
		md, err := r.resolver.byID(ctx, a.TargetInstanceID)
		switch {
		case exampleapi.IsNotFound(err) || a.Status == "blackhole":
			rt.Blackhole = true
		case err != nil:
			return nil, fmt.Errorf("list routes: instance %s: %w", a.TargetInstanceID, err)
		default:
			// Node names are instance names (the metadata hostname).
			rt.TargetNode = types.NodeName(md.Name)
		}
		out = append(out, rt)
	}
	return out, nil
}

// CreateRoute adds a node's pod CIDR route in the next batch.
func (r *routes) CreateRoute(ctx context.Context, _ string, _ string, route *cloudprovider.Route) error {
	md, err := r.resolver.byName(ctx, string(route.TargetNode))
	if err != nil {
		return fmt.Errorf("create route %s: node %s: %w", route.DestinationCIDR, route.TargetNode, err)
	}
	return r.submit(ctx, &routeOp{create: true, route: engine.DesiredRoute{Destination: route.DestinationCIDR, TargetInstanceID: md.ID, NodeName: string(route.TargetNode)}})
}

// DeleteRoute removes a route in the next batch.
func (r *routes) DeleteRoute(ctx context.Context, _ string, route *cloudprovider.Route) error {
	return r.submit(ctx, &routeOp{route: engine.DesiredRoute{Destination: route.DestinationCIDR}})
}

// submit queues op and waits for the apply that carries it.
func (r *routes) submit(ctx context.Context, op *routeOp) error {
	r.once.Do(func() { go r.run() })
	op.done = make(chan error, 1)
	r.mu.Lock()
	if err := r.stopped; err != nil {
		r.mu.Unlock()
		return err
	}
	r.pending = append(r.pending, op)
	r.mu.Unlock()
	select {
	case r.kick <- struct{}{}:
	default:
	}
	select {
	case err := <-op.done:
		return err
	case <-ctx.Done():
		return ctx.Err() // the change may still be applied with its batch
	}
}

// run applies batches until stopped.
func (r *routes) run() {
	for {
		select {
		case <-r.ctx.Done():
			r.failPending(fmt.Errorf("routes stopped: %w", r.ctx.Err()))
			return
		case <-r.kick:
		}
		if !r.gather(r.ctx) {
			continue
		}
		r.mu.Lock()
		batch := r.pending
		r.pending = nil
		r.mu.Unlock()
		if len(batch) > 0 {
			r.apply(batch)
		}
	}
}

// failPending fails the calls waiting, and every later one, with err.
func (r *routes) failPending(err error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, op := range r.pending {
		op.done <- err
	}
	r.pending, r.stopped = nil, err
}

// apply converges the route set to desired + batch in one plan/apply.
func (r *routes) apply(batch []*routeOp) {
	err := r.applyBatch(batch)
	for _, op := range batch {
		op.done <- err
	}
}

func (r *routes) applyBatch(batch []*routeOp) error {
	ctx := r.ctx
	if r.desired == nil {
		applied, err := r.engine.Routes(ctx)
		if err != nil {
			return fmt.Errorf("read applied routes: %w", err)
		}
		r.desired = map[string]engine.DesiredRoute{}
		for _, a := range applied {
			r.desired[a.Destination] = engine.DesiredRoute{Destination: a.Destination, TargetInstanceID: a.TargetInstanceID}
		}
	}
	next := make(map[string]engine.DesiredRoute, len(r.desired)+len(batch))
	for k, v := range r.desired {
		next[k] = v
	}
	for _, op := range batch {
		if op.create {
			next[op.route.Destination] = op.route
		} else {
			delete(next, op.route.Destination)
		}
	}
	list := make([]engine.DesiredRoute, 0, len(next))
	for _, rt := range next {
		list = append(list, rt)
	}
	start := time.Now()
	ws, err := r.engine.RoutesWorkspace()
	if err != nil {
		return err
	}
	subj := r.board.RouteSetSubject(ws, records.KindChange)
	r.board.Unlock(ctx, r.engine, subj, func() (engine.Job, error) {
		_, job, err := r.engine.RenderRoutes(list)
		return job, err
	})
	out, err := r.board.Run(ctx, &subj, annotations.ApplyPolicy(r.cfg.Terraform.ApplyPolicy), func(rv engine.Review) (out *engine.Outcome, err error) {
		_, out, err = r.engine.ReconcileRoutes(ctx, list, rv)
		return out, err
	})
	if err != nil {
		r.desired = nil // re-read the truth before the next batch
		return err
	}
	r.desired = next
	if out.Applied != nil {
		r.applies.Add(1)
		klog.InfoS("route set converged", "changes", len(batch), "routes", len(next), "plan", out.Applied.ID, "took", time.Since(start).Round(time.Millisecond))
	}
	return nil
}
