// Package servicelb is the Service front-end beside gatewaycontroller: it
// decides what the engine reconciles for LoadBalancer Services, under
// review, and never changes the cloud itself (it reads it: reserved
// addresses and the load balancers holding them, the tags the tenancy
// rules read). Package ccm adapts it to k8s.io/cloud-provider.
//
// A tour, part by part, each seeing the engine through the few methods it
// needs (engines.go) and review through Reviewer (reviewer.go):
//
//   - loadbalancers.go: LoadBalancers, the parts wired together and what
//     the controller's process starts; shared.go what they share.
//   - services.go: a Service's own load balancer (EnsureLoadBalancer's
//     convergence, its status, deletion); certificates.go the TLS Secrets
//     Services name, read and resynced.
//   - groups.go, members.go, consent.go: load balancer groups, who is in
//     them, their convergence, and the ReferenceGrants that let guests in
//     (references.go, unread.go: the tenant boundary's reads; the
//     ReferenceGrants are package referencegrants').
//   - pools.go, asks.go, nodes.go, nodebatch.go, leaderpools.go,
//     gateways.go: the target pools, the delays their load balancers ask,
//     the nodes leaving them (their changes gathered into one apply), the
//     leader creating them when sharded, and the pool of every node the
//     Gateways forward to.
//   - podpools.go: the pod pools a Service of target type ip forwards to
//     (package podpools keeps them on the leader), and the Services the
//     leader tells them are their users.
//   - addresses.go, addresskeeper.go, handover.go: reserved addresses, the
//     leader's keeper deciding who holds each, and a retained load
//     balancer's hand-over; gatewayaddresses.go the reserved addresses a
//     Gateway names (spec.addresses), decided under the keeper's lock;
//     releases.go a kept address released on a reviewer's request.
//   - shards.go, shardfeed.go, shardqueue.go, guestshards.go: which
//     Services are this replica's when sharded, what its service
//     controller hears of them, their queues, and guests' placement.
//   - admission.go: the Services' admission webhooks (author, preview);
//     queues.go the work loop the queues share; servicequeue.go the queue
//     of what Services ask of the leader's keepers; metrics.go and memory.go
//     their figures.
package servicelb

import (
	"context"
	"sync"

	v1 "k8s.io/api/core/v1"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/informers"
	coreinformers "k8s.io/client-go/informers/core/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/record"
	"k8s.io/klog/v2"

	"github.com/example/cloud-provider-example/annotations"
	"github.com/example/cloud-provider-example/cloudconfig"
	"github.com/example/cloud-provider-example/exampleapi"
)

// Options are what New builds the Service load balancing from.
type Options struct {
	Config *cloudconfig.Config
	Engine Engine
	Board  Reviewer
	// API reads the cloud (nil: no reserved addresses, and the tenancy
	// rules refuse what they would read).
	API *exampleapi.Client
	// TLS reads the TLS Secrets Services name (the engine's TLS source).
	TLS *TLSSecrets
	// Shards is this replica's part when sharded; nil when off.
	Shards *Shards
	// PodPools reads the pod pools of Services of target type ip on any
	// replica (podpools.Recorded); the leader's keeper replaces it
	// (KeepPodPools).
	PodPools PodPools
}

// LoadBalancers is the Service load balancing: its parts, and what the
// controller's process wires into them (clients, informers, leadership).
type LoadBalancers struct {
	shared    *shared
	services  *services
	groupLBs  *groupLoadBalancers
	pools     *targetPools
	addresses *addresses
	tls       *TLSSecrets
	engine    Engine
	// keeper decides, on the leader, who holds each reserved address (nil
	// until SetInformers).
	keeper *addressKeeper
	// podPools are the Services' pod pools; podUsers tells the leader's
	// who uses them (nil until SetInformers).
	podPools *podPools
	podUsers *podUsers
	// leading ends when leadership does (nil until Lead): the leader's
	// address keeper runs under it. informed: SetInformers ran.
	leading  context.Context
	informed bool
	keeping  sync.Once
	podUsing sync.Once
	pruning  sync.Once
}

// New wires the parts of the Service load balancing together.
func New(o Options) *LoadBalancers {
	var api cloudReader
	if o.API != nil {
		api = o.API
	}
	sh := &shared{cfg: o.Config, board: o.Board, groups: newGroups(o.Config), lifecycle: newNodeLifecycle(o.Config), shards: o.Shards}
	sh.groups.records = o.Board.Records
	sh.groups.refs = newReferences(o.Config, api)
	sh.refs = sh.groups.refs
	pools := &targetPools{shared: sh, engine: o.Engine}
	groupLBs := &groupLoadBalancers{shared: sh, engine: o.Engine, pools: pools, consent: newConsentQueue()}
	addrs := &addresses{shared: sh, engine: o.Engine, api: api}
	pods := &podPools{recorded: o.PodPools}
	l := &LoadBalancers{shared: sh, pools: pools, groupLBs: groupLBs, addresses: addrs, tls: o.TLS, engine: o.Engine, podPools: pods,
		services: &services{shared: sh, engine: o.Engine, groupLBs: groupLBs, pools: pools, podPools: pods, addresses: addrs}}
	if o.Shards != nil {
		o.Shards.admits = sh.refs.admitsNow
	}
	return l
}

// Name is the name of in's load balancer: the annotation's, else a
// stable name of at most 32 characters derived from the cluster id and
// the Service's uid.
func (l *LoadBalancers) Name(in *annotations.Service) string { return l.engine.LoadBalancerName(in) }

// Get reads svc's load balancer from the recorded outputs or the state,
// planning nothing: a member of a group (by its annotation, or as last
// applied) has the group's. Sharded, another replica's Service "exists".
func (l *LoadBalancers) Get(ctx context.Context, svc *v1.Service) (*v1.LoadBalancerStatus, bool, error) {
	return l.services.get(ctx, svc)
}

// Ensure converges svc's load balancer (its own, or its group's) on
// nodes, reading its annotations once: a RetryError while it provisions
// or its plan waits, ErrRenewalLate while its shard's Lease renewal is
// late, cloudprovider.ImplementedElsewhere when another replica holds it.
func (l *LoadBalancers) Ensure(ctx context.Context, svc *v1.Service, nodes []*v1.Node) (*v1.LoadBalancerStatus, error) {
	return l.services.ensure(ctx, svc, nodes)
}

// Delete destroys svc's load balancer (or, under the deletion policy
// retain, hands it over) and takes it out of its groups.
func (l *LoadBalancers) Delete(ctx context.Context, svc *v1.Service) error {
	return l.services.delete(ctx, svc)
}

// UseClients gives what reads Kubernetes its clients: Services read and
// patched, TLS Secrets read, and ReferenceGrants watched with dyn (nil:
// no namespace consents) until ctx ends.
func (l *LoadBalancers) UseClients(ctx context.Context, client kubernetes.Interface, dyn dynamic.Interface) {
	l.shared.client = client
	if l.tls != nil {
		l.tls.client = client
	}
	if dyn != nil {
		l.shared.refs.watchGrants(ctx, dyn)
	}
}

// Connect tells the nodes leaving the target pools through rec, and has
// a grant change reconcile the groups it lets guests into or out of
// (sharded, on every replica: each group only where its shard is held).
func (l *LoadBalancers) Connect(rec record.EventRecorder) {
	l.shared.lifecycle.recorder = rec
	l.shared.refs.grants.OnChange(l.groupLBs.grantsChanged)
}

// Start runs, until ctx ends, the workers every replica runs (each acting
// only on what the replica owns): the TLS resync, the node lifecycle and
// the groups' consent.
func (l *LoadBalancers) Start(ctx context.Context) {
	go l.services.resyncTLS(ctx, l.shared.cfg.LoadBalancer.TLSSecrets.ResyncInterval.Duration)
	go l.pools.syncNodes(ctx)
	go l.groupLBs.syncConsent(ctx)
}

// SetInformers gives load balancer groups the service controller's own
// Service informer, indexed by group: a group's members are one lookup
// (and the selections of the load balancers applied before a restart);
// and the node lifecycle the Node informer. Called before the informers
// start.
func (l *LoadBalancers) SetInformers(f informers.SharedInformerFactory) {
	sh := l.shared
	inf := f.Core().V1().Services().Informer()
	if err := inf.AddIndexers(cache.Indexers{groupIndex: groupIndexFunc}); err != nil {
		klog.ErrorS(err, "cannot index Services by load balancer group; a group's members are found by listing every Service")
	}
	sh.groups.services = inf.GetIndexer()
	sh.servicesSynced = inf.HasSynced
	leads := func() bool { return sh.shards == nil || sh.shards.leader.Load() }
	var err error
	if l.keeper, err = newAddressKeeper(l.addresses, inf, leads); err != nil {
		klog.ErrorS(err, "cannot watch Services for their reserved addresses; the leader looks at them every minute")
	}
	if l.podUsers, err = newPodUsers(l.podPools, inf, leads); err != nil {
		klog.ErrorS(err, "cannot watch Services for their pod pools; a pool learns its users from their reconciles only")
	}
	l.informed = true
	l.startLeading() // the leader without sharding was initialized first
	if err := sh.lifecycle.watch(f.Core().V1().Nodes().Informer()); err != nil {
		klog.ErrorS(err, "cannot watch the nodes; a node leaves the target pools only when the service controller drops it")
	}
}

// Lead starts the leader's workers, until ctx ends: sharded, the pools
// follow the nodes and the Services' selections from now on; the prune
// of the pools no Service selects; the address keeper.
func (l *LoadBalancers) Lead(ctx context.Context) {
	if s := l.shared.shards; s != nil {
		s.leader.Store(true)
		l.shared.lifecycle.queue.Add(poolsKey)
		if s.feed.pools != nil {
			s.feed.pools.askAll()
		}
	}
	l.leading = ctx
	l.startLeading()
}

// KeepPodPools makes pools the pod pools this replica keeps as the leader
// (a *podpools.Pools): called before Lead.
func (l *LoadBalancers) KeepPodPools(pools PodPoolKeeper) { l.podPools.kept.Store(&pools) }

// startLeading starts the leader's workers that read the Service
// informer (the prune of the pools, the address keeper, the pod pools'
// users) once both the leader was initialized and the informers set, in
// either order (the app initializes first; a sharded replica sets its
// informers first): started by Lead alone, the prune read the informer
// while SetInformers wrote it.
func (l *LoadBalancers) startLeading() {
	if l.leading == nil || !l.informed {
		return
	}
	l.pruning.Do(func() {
		go l.pools.prunePools(l.leading, l.shared.cfg.LoadBalancer.TargetPools.PruneInterval.Duration)
	})
	if u := l.podUsers; u != nil && l.podPools.keeper() != nil {
		l.podUsing.Do(func() {
			go u.run(l.leading)
			u.askAll()
		})
	}
	k := l.keeper
	if k == nil || l.addresses.api == nil {
		return
	}
	l.keeping.Do(func() {
		go k.run(l.leading)
		go k.releases.run(l.leading)
		k.askAll()
	})
}

// ShardServices is the Service informer a sharded replica's service
// controller is given (its handlers hear of the Services of the shards
// held), and the leader's creation of the pools Services ask for.
func (l *LoadBalancers) ShardServices(services coreinformers.ServiceInformer) (coreinformers.ServiceInformer, error) {
	s := l.shared.shards
	s.services = services.Informer().GetIndexer()
	var err error
	if s.feed.pools, err = newPoolCreator(l.pools, services.Informer()); err != nil {
		return nil, err
	}
	return shardedServices{ServiceInformer: services, feed: s.feed}, nil
}

// RunShards runs, until ctx ends, the leader's pool creation and the
// look at the shards held (ShardServices first).
func (l *LoadBalancers) RunShards(ctx context.Context) {
	f := l.shared.shards.feed
	go f.pools.run(ctx)
	go f.watchHeld(ctx)
}

// GroupMembers are group g's members now, from the informer (what a
// drift check of the group's load balancer is guarded by).
func (l *LoadBalancers) GroupMembers(g annotations.Group) []*v1.Service {
	return l.shared.groups.members(g, nil, false)
}
