// Package ccm is the Example cloud provider for k8s.io/cloud-provider.
//
// LoadBalancer and Routes are adapters over the engine: they render
// Terraform, plan and apply it, and never change the cloud themselves:
// they only read it, to check an adopted load balancer's owner, to find
// one an interrupted apply left, to read the tags of the certificates
// and addresses a Service names (tenancy) and where a reserved address
// is. They decide what the engine reconciles: a Service's own load
// balancer or its group's (group membership), the target pool of its
// nodes, which load balancer holds each reserved address, batches of
// routes, drift checks, the TLS Secrets a Service names. Every plan is reviewed by package review,
// which builds each reconcile's engine.Review and reports its outcome
// (events, plan records, audit log). Instances, InstancesV2 and Zones
// read the metadata API directly.
package ccm

import (
	"context"
	"fmt"
	"io"
	"sync"

	v1 "k8s.io/api/core/v1"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/scheme"
	typedcorev1 "k8s.io/client-go/kubernetes/typed/core/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/record"
	cloudprovider "k8s.io/cloud-provider"
	"k8s.io/klog/v2"

	"github.com/example/cloud-provider-example/cloudconfig"
	"github.com/example/cloud-provider-example/engine"
	"github.com/example/cloud-provider-example/objectref"
	"github.com/example/cloud-provider-example/review"
)

// ProviderName is the name of the provider (--cloud-provider=example).
const ProviderName = "example"

func init() {
	cloudprovider.RegisterCloudProvider(ProviderName, func(r io.Reader) (cloudprovider.Interface, error) {
		if r == nil {
			return nil, fmt.Errorf("the %s cloud provider needs --cloud-config", ProviderName)
		}
		data, err := io.ReadAll(r)
		if err != nil {
			return nil, fmt.Errorf("read cloud config: %w", err)
		}
		cfg, err := cloudconfig.Load(data)
		if err != nil {
			return nil, err
		}
		return newCloud(context.Background(), cfg)
	})
}

// cloud implements cloudprovider.Interface.
type cloud struct {
	cfg       *cloudconfig.Config
	engine    *engine.Engine
	board     *review.Board
	tls       *tlsSecrets
	keys      *encryptionKeys // nil without terraform.encryption
	instances *instances
	lb        *loadBalancers
	routes    *routes
	// shards is this replica's part in the sharding; nil when off.
	shards *shards
	// clients: useClients ran; replica: startReplica ran; informers:
	// SetInformers ran.
	clients, replica, informers sync.Once
	// leading ends when leadership does (nil until Initialize): the
	// leader's address keeper runs under it.
	leading   context.Context
	addresses sync.Once
}

var (
	_ cloudprovider.Interface    = (*cloud)(nil)
	_ cloudprovider.InformerUser = (*cloud)(nil)
)

func newCloud(ctx context.Context, cfg *cloudconfig.Config) (*cloud, error) {
	inst, err := newInstancesFromConfig(cfg)
	if err != nil {
		return nil, err
	}
	board, err := review.Open(cfg)
	if err != nil {
		return nil, err
	}
	tls := &tlsSecrets{cfg: cfg, redact: board.RedactFrom}
	var sh *shards
	var owns func(objectref.Ref) bool
	if cfg.Sharding.Enabled {
		sh = &shards{}
		owns = sh.owns
	}
	eng, api, keys, err := newEngine(ctx, cfg, board, tls, owns)
	if err != nil {
		return nil, err
	}
	registerMetrics()
	if cfg.LoadBalancer.Groups.CrossNamespace {
		klog.InfoS("loadBalancer.groups.crossNamespace is retired and ignored: a namespace consents to Services of another joining its load balancer groups with a ReferenceGrant (docs/tenancy.md)")
	}
	c := &cloud{
		cfg:       cfg,
		engine:    eng,
		board:     board,
		tls:       tls,
		keys:      keys,
		instances: inst,
		lb:        newLoadBalancers(eng, cfg, board, api),
		routes:    newRoutes(eng, cfg, inst, board),
		shards:    sh,
	}
	c.lb.shards = sh
	if sh != nil {
		sh.admits = c.lb.refs.admitsNow
	}
	c.trackMemory()
	return c, nil
}

// Initialize starts the background workers; they stop with stop. The
// app calls it on the leader: with sharding, the replica's own workers
// started before (StartShards), and the leader adds the cluster-wide ones.
func (c *cloud) Initialize(clientBuilder cloudprovider.ControllerClientBuilder, stop <-chan struct{}) {
	c.startReplica(clientBuilder, stop)
	if c.shards != nil {
		c.shards.leader.Store(true)
		c.lb.lifecycle.queue.Add(poolsKey) // the pools follow the nodes from now on
		if c.shards.pools != nil {
			c.shards.pools.askAll() // and the Services' selections
		}
	}
	go c.lb.prunePools(stopContext(stop), c.cfg.LoadBalancer.TargetPools.PruneInterval.Duration)
	c.leading = stopContext(stop)
	c.keepAddresses()
	klog.InfoS("example cloud provider initialized", "cluster", c.cfg.ClusterID, "region", c.cfg.Region, "stateBackend", c.cfg.State.Type, "sharded", c.shards != nil)
}

// stopContext is a context that ends when stop closes.
func stopContext(stop <-chan struct{}) context.Context {
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		<-stop
		cancel()
	}()
	return ctx
}

// startReplica starts, once, the workers every replica runs: events,
// records, approvals, the grants, the TLS resync, the node lifecycle,
// consent and drift checks (each acting only on what the replica owns).
func (c *cloud) startReplica(clientBuilder cloudprovider.ControllerClientBuilder, stop <-chan struct{}) {
	c.replica.Do(func() { c.startWorkers(clientBuilder, stop) })
}

func (c *cloud) startWorkers(clientBuilder cloudprovider.ControllerClientBuilder, stop <-chan struct{}) {
	ctx := stopContext(stop)
	go func() {
		<-stop
		c.routes.stop()
	}()
	// kube stays nil without a client: what needs one does without.
	var kube kubernetes.Interface
	client, err := clientBuilder.Client("example-cloud-controller-manager")
	if err != nil {
		klog.ErrorS(err, "cannot build a Kubernetes client; events, records, approvals and the kubernetes state backend are unavailable")
	} else {
		kube = client
		rec := newRecorder(client)
		c.board.Connect(ctx, client, rec)
		c.lb.lifecycle.recorder = rec
		var dyn dynamic.Interface
		if d, err := dynamic.NewForConfig(clientBuilder.ConfigOrDie("example-cloud-controller-manager")); err != nil {
			klog.ErrorS(err, "cannot build a dynamic client; approvals are unavailable")
		} else {
			dyn = d
			c.board.WatchApprovals(d, stop)
		}
		c.useClients(ctx, client, dyn)
		// A grant change reconciles the groups it lets guests into or
		// out of (sharded, on every replica: each group only where its shard is held).
		c.lb.refs.grants.onChange(c.lb.grantsChanged)
	}
	go c.lb.resyncTLS(ctx, c.cfg.LoadBalancer.TLSSecrets.ResyncInterval.Duration)
	go c.lb.syncNodes(ctx)
	go c.lb.syncConsent(ctx)
	if !c.cfg.Review.Drift.Disabled {
		d := newDriftWorker(c.engine, c.board, kube, c.cfg.Review.Drift)
		d.groups = c.lb.groups
		go d.run(ctx)
	}
}

// useClients gives what reads Kubernetes its clients, once: the webhook
// (every replica, before leader election) or Initialize (the leader),
// whichever comes first; later calls keep them, so nothing is written
// while the webhook reads. The ReferenceGrants are watched until ctx ends.
func (c *cloud) useClients(ctx context.Context, client kubernetes.Interface, dyn dynamic.Interface) {
	c.clients.Do(func() {
		c.engine.UseKubernetes(client)
		c.lb.client, c.tls.client = client, client
		if c.keys != nil {
			go c.keys.run(ctx, client)
		}
		if dyn != nil {
			c.lb.refs.watchGrants(ctx, dyn)
		}
	})
}

// eventCorrelations bounds the event correlator's caches (aggregation,
// spam filter, counts: client-go's default is 4,096 keys each). The
// controller's events carry plan ids, so nearly every one is a new key:
// the caches only fill, and 512 keys cover the objects changing within
// the spam filter's and the aggregation's windows.
const eventCorrelations = 512

// newRecorder records events on Services and the route set.
func newRecorder(client kubernetes.Interface) record.EventRecorder {
	b := record.NewBroadcaster(record.WithCorrelatorOptions(record.CorrelatorOptions{LRUCacheSize: eventCorrelations}))
	b.StartStructuredLogging(4)
	b.StartRecordingToSink(&typedcorev1.EventSinkImpl{Interface: client.CoreV1().Events("")})
	return b.NewRecorder(scheme.Scheme, v1.EventSource{Component: "example-cloud-controller-manager"})
}

// SetInformers gives load balancer groups the service controller's own
// Service informer, indexed by group: a group's members are one lookup
// (and the selections of the load balancers applied before a restart);
// and the node lifecycle the Node informer. Called before the informers
// start.
func (c *cloud) SetInformers(f informers.SharedInformerFactory) {
	// With sharding, the replica's own informers came first.
	c.informers.Do(func() { c.setInformers(f) })
}

func (c *cloud) setInformers(f informers.SharedInformerFactory) {
	inf := f.Core().V1().Services().Informer()
	if err := inf.AddIndexers(cache.Indexers{groupIndex: groupIndexFunc}); err != nil {
		klog.ErrorS(err, "cannot index Services by load balancer group; a group's members are found by listing every Service")
	}
	c.lb.groups.services = inf.GetIndexer()
	c.lb.servicesSynced = inf.HasSynced
	leads := func() bool { return c.shards == nil || c.shards.leader.Load() }
	var err error
	if c.lb.addresses, err = newAddressKeeper(c.lb, inf, leads); err != nil {
		klog.ErrorS(err, "cannot watch Services for their reserved addresses; the leader looks at them every minute")
	}
	c.keepAddresses() // the leader without sharding was initialized first
	if err := c.lb.lifecycle.watch(f.Core().V1().Nodes().Informer()); err != nil {
		klog.ErrorS(err, "cannot watch the nodes; a node leaves the target pools only when the service controller drops it")
	}
}

// keepAddresses starts the leader's address keeper once both the leader
// was initialized and the informers set, in either order (the app
// initializes first; a sharded replica sets its informers first).
func (c *cloud) keepAddresses() {
	k := c.lb.addresses
	if c.leading == nil || k == nil || c.lb.api == nil {
		return
	}
	c.addresses.Do(func() {
		go k.run(c.leading)
		k.askAll()
	})
}

func (c *cloud) LoadBalancer() (cloudprovider.LoadBalancer, bool) {
	return inertLoadBalancer{c.lb}, true
}
func (c *cloud) Instances() (cloudprovider.Instances, bool)     { return c.instances, true }
func (c *cloud) InstancesV2() (cloudprovider.InstancesV2, bool) { return c.instances, true }
func (c *cloud) Zones() (cloudprovider.Zones, bool)             { return c.instances, true }
func (c *cloud) Clusters() (cloudprovider.Clusters, bool)       { return nil, false }
func (c *cloud) Routes() (cloudprovider.Routes, bool)           { return c.routes, true }
func (c *cloud) ProviderName() string                           { return ProviderName }
func (c *cloud) HasClusterID() bool                             { return c.cfg.ClusterID != "" }
