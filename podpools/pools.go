// Package podpools keeps the pod pools (docs/adr/0024-pod-targets.md):
// for each Service port a load balancer forwards to directly, a target
// pool of type ip in a workspace of its own whose targets follow the
// Service's EndpointSlices (package podtargets decides which), applied
// under the pools' policy once the slices settle, destroyed once no load
// balancer has used it for a while (Options.UnusedGrace); and the
// readiness gates of the pods it holds.
//
// The tour: pools.go (Use, what the front-ends call), sync.go (the
// worker: targets, settle, apply, destroy), first.go (a first plan waits
// for a new Service's first EndpointSlice), watch.go (informers and what
// their events touch), boundary.go (the pods by IP the tenant boundary
// reads), gates.go (readiness gates), sweep.go (the pools nobody uses
// since the start).
package podpools

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	corev1 "k8s.io/api/core/v1"
	kubeinformers "k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	corelisters "k8s.io/client-go/listers/core/v1"
	discoverylisters "k8s.io/client-go/listers/discovery/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/workqueue"

	"github.com/example/cloud-provider-example/annotations"
	"github.com/example/cloud-provider-example/engine"
	"github.com/example/cloud-provider-example/exampleapi"
	"github.com/example/cloud-provider-example/lbmodel"
	"github.com/example/cloud-provider-example/objectref"
	"github.com/example/cloud-provider-example/podtargets"
	"github.com/example/cloud-provider-example/review"
	"github.com/example/cloud-provider-example/tenancy"
)

// Engine is what pod pools need of the engine.
type Engine interface {
	ReconcilePodPool(ctx context.Context, p lbmodel.PodPool, rv engine.Review) (string, *engine.Outcome, error)
	DestroyPodPool(ctx context.Context, ref objectref.Ref, rv engine.Review) (*engine.Outcome, error)
	PodPoolWorkspace(ref objectref.Ref) (string, error)
	// PodPoolID is a pool's id as its workspace records it ("": none),
	// without a plan.
	PodPoolID(ctx context.Context, ref objectref.Ref) (string, error)
}

// Reviewer is what they need of review (a *review.Board).
type Reviewer interface {
	Run(ctx context.Context, s *review.Subject, pol annotations.ApplyPolicy, change review.Change) (*engine.Outcome, error)
	PodPoolSubject(ref objectref.Ref, svc *corev1.Service, workspace, kind string) review.Subject
	Eventf(s review.Subject, typ, reason, format string, args ...any)
}

var _ Reviewer = (*review.Board)(nil)

// Cloud is what pod pools read of the cloud (an *exampleapi.Client): what
// the load balancers make of a pool's targets (what a readiness gate
// waits for), and the pools there are (sweep.go).
type Cloud interface {
	TargetPoolHealth(ctx context.Context, id string) (*exampleapi.TargetPoolHealthResponse, error)
	ListTargetPools(ctx context.Context, f exampleapi.TargetPoolFilter) ([]exampleapi.TargetPool, error)
}

// Options are the cloud config's words for pod pools.
type Options struct {
	// Policy is the pools' apply policy (loadBalancer.targetPools.applyPolicy).
	Policy annotations.ApplyPolicy
	// Settle batches a pool's endpoint changes.
	Settle podtargets.Settle
	// GateRecheck is how often pods waiting on a readiness gate are
	// looked at again.
	GateRecheck time.Duration
	// InUseRetry is how soon a pool nobody uses is destroyed again after
	// the cloud refused because a load balancer still forwarded to it (its
	// front-end's apply that stops doing so is under way, or waits for
	// approval).
	InUseRetry time.Duration
	// NotTargetedGrace is how long after it starts the controller holds
	// the gated pods of a Service no load balancer forwards to, and
	// leaves the pools nobody said they use (sweep.go): the front-ends
	// say which Services they forward to as they reconcile, and until
	// they have, no Service is known to be untargeted.
	NotTargetedGrace time.Duration
	// ClusterID is the cluster's: the pools the sweep may destroy are
	// those tagged with it.
	ClusterID string
	// UnusedGrace is how long a pool nobody uses any more is kept while
	// its Service is there: a route re-created, a Gateway replaced or the
	// next route to the Service within it finds the pool (no destroy and
	// create to apply or approve: at most a plan of its targets), and the
	// apply that stops a load balancer forwarding to it has usually ended
	// by then (the cloud refuses its destroy before). A pool whose
	// Service is gone goes InUseRetry after its last user.
	UnusedGrace time.Duration
	// RefusedGrace is how long an address stays refused before its
	// Service is told: the pod informer can lag the EndpointSlice
	// controller's, and the pod then comes (touchAt) before anyone
	// should be warned.
	RefusedGrace time.Duration
}

// DefaultUnusedGrace is Options.UnusedGrace's default: longer than a
// front-end's apply, short enough that an unused pool is soon gone.
const DefaultUnusedGrace = time.Minute

// Pools keeps the pod pools.
type Pools struct {
	engine Engine
	review Reviewer
	cloud  Cloud
	kube   kubernetes.Interface
	opts   Options
	now    func() time.Time
	// started is when Run started.
	started time.Time

	factory  kubeinformers.SharedInformerFactory
	services corelisters.ServiceLister
	slices   discoverylisters.EndpointSliceLister
	pods     cache.Indexer
	synced   []cache.InformerSynced
	// auth decides every address a Service's slices list (tenancy
	// PodTarget), from the pods by IP.
	auth *tenancy.Authorizer

	queue workqueue.TypedRateLimitingInterface[objectref.Ref]
	gates workqueue.TypedRateLimitingInterface[serviceKey]

	mu    sync.Mutex
	pools map[objectref.Ref]*pool

	// applied is told the users of each pool this process applies first
	// (OnApplied).
	applied atomic.Pointer[func(users []string)]
}

// OnApplied has f told, after this process applies a pool for the first
// time, who uses it: a user that does not wait for a new pool (Want) and
// holds what forwards to it looks again at once, not at its next retry.
func (p *Pools) OnApplied(f func(users []string)) { p.applied.Store(&f) }

// tellApplied tells OnApplied's f st's users.
func (p *Pools) tellApplied(st *pool) {
	f := p.applied.Load()
	if f == nil {
		return
	}
	p.mu.Lock()
	users := slices.Sorted(maps.Keys(st.users))
	p.mu.Unlock()
	(*f)(users)
}

// serviceKey names a Service.
type serviceKey struct{ namespace, name string }

// pool is one pod pool's state: who uses it, what was applied, what has
// changed since.
type pool struct {
	port lbmodel.ServicePort
	// users are the load balancers forwarding to it, by their front-end's
	// key ("gateway:infra/gw").
	users map[string]bool
	// apply is held while the pool is applied or destroyed.
	apply sync.Mutex
	// id and targets are the applied pool's (the fields below are
	// Pools.mu's); a pod event at a target decides it again (watch.go).
	id      string
	targets []string
	delay   *time.Duration
	// first and last are when its slices changed since its last apply
	// (zero: unchanged).
	first, last time.Time
	// said are the refused addresses its Service was told of; refused,
	// those its last decision refused, decided again when a pod at one
	// changes (watch.go).
	said, refused map[string]bool
	// refusedAt are when each refused address not told yet was first
	// refused: it is told after Options.RefusedGrace.
	refusedAt map[string]time.Time
	// awaited: its first plan waited for the Service's first slice
	// (first.go), which it does once.
	awaited bool
	// unusedSince is when its last user went (zero: used, or unused since
	// before this process knew it, as a swept pool): it is destroyed
	// Options.UnusedGrace later (keptFor).
	unusedSince time.Time
	// stale: a user came back to it applied and unused, its targets not
	// followed meanwhile; nobody gets its id until they are decided again
	// (sync).
	stale bool
}

// New keeps pod pools through eng under rv, reading the cloud through c
// and the cluster through kube; Run starts it.
func New(kube kubernetes.Interface, eng Engine, rv Reviewer, c Cloud, opts Options) *Pools {
	if opts.Settle == (podtargets.Settle{}) {
		opts.Settle = podtargets.DefaultSettle
	}
	if opts.GateRecheck == 0 {
		opts.GateRecheck = time.Second
	}
	if opts.InUseRetry == 0 {
		opts.InUseRetry = 5 * time.Second
	}
	if opts.NotTargetedGrace == 0 {
		opts.NotTargetedGrace = time.Minute
	}
	if opts.RefusedGrace == 0 {
		opts.RefusedGrace = 30 * time.Second
	}
	if opts.UnusedGrace == 0 {
		opts.UnusedGrace = DefaultUnusedGrace
	}
	p := &Pools{engine: eng, review: rv, cloud: c, kube: kube, opts: opts, now: time.Now, pools: map[objectref.Ref]*pool{},
		queue: workqueue.NewTypedRateLimitingQueueWithConfig(workqueue.DefaultTypedControllerRateLimiter[objectref.Ref](),
			workqueue.TypedRateLimitingQueueConfig[objectref.Ref]{Name: "pod-pools"}),
		gates: workqueue.NewTypedRateLimitingQueueWithConfig(workqueue.DefaultTypedControllerRateLimiter[serviceKey](),
			workqueue.TypedRateLimitingQueueConfig[serviceKey]{Name: "readiness-gates"}),
	}
	p.watch()
	p.auth = &tenancy.Authorizer{Sources: tenancy.Sources{PodAt: p.podAt}}
	return p
}

// Use says that user (a load balancer, by its front-end's key) forwards
// to ports now, and to no other: it returns each port's pool id, applying
// now, under the pools' review, those not applied yet. A pool nobody uses
// any more is destroyed by the worker once no load balancer forwards to
// it (the cloud refuses before).
func (p *Pools) Use(ctx context.Context, user string, ports []lbmodel.ServicePort) (map[lbmodel.ServicePort]string, error) {
	if err := p.hasSynced(); err != nil && len(ports) > 0 {
		return nil, err
	}
	ids := map[lbmodel.ServicePort]string{}
	for _, st := range p.want(user, ports) {
		id := p.appliedID(st)
		if id == "" {
			var err error
			if id, err = p.sync(ctx, st, true); err != nil {
				return ids, fmt.Errorf("%s: %w", st.port.Ref().Describe(), err)
			}
		}
		ids[st.port] = id
	}
	return ids, nil
}

// Want is Use without waiting: the pools not applied yet are the
// worker's to apply, at once. What tells the pools their users from the
// objects (package servicelb's, of every Service) calls it, so that no
// pool's apply holds up another's users.
func (p *Pools) Want(user string, ports []lbmodel.ServicePort) {
	for _, st := range p.want(user, ports) {
		if p.appliedID(st) == "" {
			p.queue.Add(st.port.Ref())
		}
	}
}

// want records that user forwards to ports and to no other, and returns
// ports' pools; a pool it no longer uses, and nobody else does, goes to
// the worker.
func (p *Pools) want(user string, ports []lbmodel.ServicePort) []*pool {
	p.mu.Lock()
	defer p.mu.Unlock()
	want := map[objectref.Ref]bool{}
	var todo []*pool
	for _, sp := range ports {
		ref := sp.Ref()
		want[ref] = true
		st := p.pools[ref]
		if st == nil {
			st = &pool{port: sp, users: map[string]bool{}, said: map[string]bool{}}
			p.pools[ref] = st
		}
		if len(st.users) == 0 && st.id != "" {
			st.stale = true
		}
		st.users[user], st.unusedSince = true, time.Time{}
		todo = append(todo, st)
	}
	for ref, st := range p.pools {
		if !want[ref] && st.users[user] {
			delete(st.users, user)
			if len(st.users) == 0 {
				st.unusedSince = p.now()
				p.queue.Add(ref)
			}
		}
	}
	return todo
}

// appliedID is st's applied pool id, "" before its first apply and while
// it is stale.
func (p *Pools) appliedID(st *pool) string {
	p.mu.Lock()
	defer p.mu.Unlock()
	if st.stale {
		return ""
	}
	return st.id
}

// Users are the users of every pool, by pool: what a test or a status
// reads.
func (p *Pools) Users() map[objectref.Ref][]string {
	p.mu.Lock()
	defer p.mu.Unlock()
	out := map[objectref.Ref][]string{}
	for ref, st := range p.pools {
		for u := range st.users {
			out[ref] = append(out[ref], u)
		}
		slices.Sort(out[ref])
	}
	return out
}

// Known are the ids of those of ports whose pools are applied, without
// applying any (what a preview, and a Gateway that does not wait for a
// new pool, read): by this process, or, not yet, by an earlier one (a
// new leader's pools are applied again by the worker, one at a time, and
// until then their routes would look unprogrammed), as recorded. A stale
// pool's id is not, until the worker has decided its targets again.
func (p *Pools) Known(ctx context.Context, ports []lbmodel.ServicePort) (map[lbmodel.ServicePort]string, error) {
	out := map[lbmodel.ServicePort]string{}
	var unknown []lbmodel.ServicePort
	p.mu.Lock()
	for _, sp := range ports {
		switch st := p.pools[sp.Ref()]; {
		case st == nil || st.id == "":
			unknown = append(unknown, sp)
		case !st.stale:
			out[sp] = st.id
		}
	}
	p.mu.Unlock()
	recorded, err := Recorded{Engine: p.engine}.Known(ctx, unknown)
	if err != nil {
		return nil, err
	}
	maps.Copy(out, recorded)
	return out, nil
}

// Recorded are the pod pools as their workspaces hold them, for the
// previews of a replica that keeps none (package gatewaycontroller's
// PodPools): Known reads each pool's id from its state, and Use makes
// nothing.
type Recorded struct {
	Engine interface {
		PodPoolID(ctx context.Context, ref objectref.Ref) (string, error)
	}
}

// Use refuses to make pools: a preview makes nothing (using none is
// nothing to do).
func (r Recorded) Use(_ context.Context, _ string, ports []lbmodel.ServicePort) (map[lbmodel.ServicePort]string, error) {
	if len(ports) > 0 {
		return nil, errors.New("pod pools: a preview makes none")
	}
	return nil, nil
}

// Known are the ids of those of ports whose pools exist.
func (r Recorded) Known(ctx context.Context, ports []lbmodel.ServicePort) (map[lbmodel.ServicePort]string, error) {
	out := map[lbmodel.ServicePort]string{}
	for _, sp := range ports {
		id, err := r.Engine.PodPoolID(ctx, sp.Ref())
		if err != nil {
			return nil, err
		}
		if id != "" {
			out[sp] = id
		}
	}
	return out, nil
}
