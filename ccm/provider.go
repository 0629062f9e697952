// Package ccm is the Example cloud provider for k8s.io/cloud-provider:
// the adapter and the controller's wiring. LoadBalancer is a thin adapter
// over the Services' load balancing (package servicelb, which decides
// what the engine reconciles for each Service); Routes batches the route
// set's changes over the engine; every plan is reviewed by package
// review, which builds each reconcile's engine.Review and reports its
// outcome (events, plan records, audit log). Instances, InstancesV2 and
// Zones read the metadata API directly. Beside the adapters: drift
// checks, state encryption keys, the admission webhooks and, sharded,
// each replica's service controller (replicas.go).
package ccm

import (
	"context"
	"fmt"
	"os"
	"strings"
	"sync"
	"sync/atomic"

	v1 "k8s.io/api/core/v1"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/scheme"
	typedcorev1 "k8s.io/client-go/kubernetes/typed/core/v1"
	"k8s.io/client-go/tools/record"
	cloudprovider "k8s.io/cloud-provider"
	"k8s.io/klog/v2"

	"github.com/example/cloud-provider-example/cloudconfig"
	"github.com/example/cloud-provider-example/engine"
	"github.com/example/cloud-provider-example/exampleapi"
	"github.com/example/cloud-provider-example/objectref"
	"github.com/example/cloud-provider-example/podpools"
	"github.com/example/cloud-provider-example/review"
	"github.com/example/cloud-provider-example/servicelb"
)

// ProviderName is the name of the provider (--cloud-provider=example).
const ProviderName = "example"

// Open is the Example cloud provider of the cloud config at path
// (--cloud-config): the controller's process holds it as it is, and hands
// it to k8s.io/cloud-provider's app as its cloudprovider.Interface.
func Open(path string) (*Cloud, error) {
	if path == "" {
		return nil, fmt.Errorf("the %s cloud provider needs --cloud-config", ProviderName)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read cloud config: %w", err)
	}
	cfg, err := cloudconfig.Load(data)
	if err != nil {
		return nil, err
	}
	return newCloud(context.Background(), cfg)
}

// Cloud is the Example cloud provider: it implements
// cloudprovider.Interface, and starts what the controller's process runs
// beside k8s.io/cloud-provider's controllers (webhooks, shards).
type Cloud struct {
	cfg       *cloudconfig.Config
	api       *exampleapi.Client
	engine    *engine.Engine
	board     *review.Board
	tls       *servicelb.TLSSecrets
	keys      *encryptionKeys // nil without terraform.encryption
	instances *instances
	lbs       *servicelb.LoadBalancers
	routes    *routes
	// shards is this replica's part in the sharding; nil when off.
	shards *servicelb.Shards
	// podPools are the leader's (keepPodPools).
	podPools atomic.Pointer[podpools.Pools]
	// clients: useClients ran; replica: startReplica ran; informers:
	// SetInformers ran.
	clients, replica, informers sync.Once
}

var (
	_ cloudprovider.Interface    = (*Cloud)(nil)
	_ cloudprovider.InformerUser = (*Cloud)(nil)
)

func newCloud(ctx context.Context, cfg *cloudconfig.Config) (*Cloud, error) {
	inst, err := newInstancesFromConfig(cfg)
	if err != nil {
		return nil, err
	}
	board, err := review.Open(cfg)
	if err != nil {
		return nil, err
	}
	tls := servicelb.NewTLSSecrets(cfg, board.RedactFrom)
	var sh *servicelb.Shards
	var owns func(objectref.Ref) bool
	if cfg.Sharding.Enabled {
		sh = servicelb.NewShards()
		owns = sh.Owns
	}
	eng, api, keys, err := newEngine(ctx, cfg, board, tls, owns)
	if err != nil {
		return nil, err
	}
	registerMetrics()
	if cfg.LoadBalancer.Groups.CrossNamespace {
		klog.InfoS("loadBalancer.groups.crossNamespace is retired and ignored: a namespace consents to Services of another joining its load balancer groups with a ReferenceGrant (docs/tenancy.md)")
	}
	c := &Cloud{
		cfg:       cfg,
		api:       api,
		engine:    eng,
		board:     board,
		tls:       tls,
		keys:      keys,
		instances: inst,
		lbs: servicelb.New(servicelb.Options{Config: cfg, Engine: eng, Board: board, API: api, TLS: tls, Shards: sh,
			PodPools: podpools.Recorded{Engine: eng}}),
		routes: newRoutes(eng, cfg, inst, board),
		shards: sh,
	}
	trackMemory(c)
	return c, nil
}

// Initialize starts the background workers; they stop with stop. The
// app calls it on the leader: with sharding, the replica's own workers
// started before (StartShards), and the leader adds the cluster-wide ones.
func (c *Cloud) Initialize(clientBuilder cloudprovider.ControllerClientBuilder, stop <-chan struct{}) {
	c.startReplica(clientBuilder, stop)
	ctx := stopContext(stop)
	c.keepPodPools(ctx, clientBuilder)
	c.lbs.Lead(ctx)
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
func (c *Cloud) startReplica(clientBuilder cloudprovider.ControllerClientBuilder, stop <-chan struct{}) {
	c.replica.Do(func() {
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
			c.lbs.Connect(rec)
			var dyn dynamic.Interface
			if d, err := dynamic.NewForConfig(clientBuilder.ConfigOrDie("example-cloud-controller-manager")); err != nil {
				klog.ErrorS(err, "cannot build a dynamic client; approvals are unavailable")
			} else {
				dyn = d
				c.board.WatchApprovals(d, stop)
			}
			c.useClients(ctx, client, dyn)
		}
		c.lbs.Start(ctx)
		if !c.cfg.Review.Drift.Disabled {
			d := newDriftWorker(c.engine, c.board, kube, c.cfg.Review.Drift)
			d.members = c.lbs.GroupMembers
			go d.run(ctx)
		}
	})
}

// useClients gives what reads Kubernetes its clients, once: the webhook
// (every replica, before leader election) or Initialize (the leader),
// whichever comes first; later calls keep them, so nothing is written
// while the webhook reads. The ReferenceGrants are watched until ctx ends.
func (c *Cloud) useClients(ctx context.Context, client kubernetes.Interface, dyn dynamic.Interface) {
	c.clients.Do(func() {
		c.engine.UseKubernetes(client)
		c.lbs.UseClients(ctx, client, dyn)
		if c.keys != nil {
			go c.keys.run(ctx, client)
		}
	})
}

// eventCorrelations bounds the event correlator's caches (aggregation,
// spam filter, counts: client-go's default is 4,096 keys each). The
// controller's events carry plan ids, so nearly every one is a new key:
// the caches only fill, and 512 keys cover the objects changing within
// the spam filter's and the aggregation's windows.
const eventCorrelations = 512

// newRecorder records events on Services, Gateways and the route set.
func newRecorder(client kubernetes.Interface) record.EventRecorder {
	return recorderTo(&typedcorev1.EventSinkImpl{Interface: client.CoreV1().Events("")})
}

// recorderTo records events into sink, each reason of an object with a
// spam budget of its own (spamKey).
func recorderTo(sink record.EventSink) record.EventRecorder {
	b := record.NewBroadcaster(record.WithCorrelatorOptions(record.CorrelatorOptions{LRUCacheSize: eventCorrelations, SpamKeyFunc: spamKey}))
	b.StartStructuredLogging(4)
	b.StartRecordingToSink(sink)
	return b.NewRecorder(scheme.Scheme, v1.EventSource{Component: "example-cloud-controller-manager"})
}

// spamKey is client-go's spam filter key (an object's events from one
// source: 25 at once, then one per five minutes) with the event's reason,
// so that many events of one reason never silence another: a busy shared
// Gateway's applies, or a tenant's churn of routes, would otherwise drop
// the AwaitingApproval its reviewers act on.
func spamKey(e *v1.Event) string {
	o := e.InvolvedObject
	return strings.Join([]string{e.Source.Component, e.Source.Host, o.Kind, o.Namespace, o.Name, string(o.UID), o.APIVersion, e.Reason}, "")
}

// SetInformers gives load balancer groups the service controller's own
// Service informer, indexed by group: a group's members are one lookup
// (and the selections of the load balancers applied before a restart);
// and the node lifecycle the Node informer. Called before the informers
// start.
func (c *Cloud) SetInformers(f informers.SharedInformerFactory) {
	// With sharding, the replica's own informers came first.
	c.informers.Do(func() { c.lbs.SetInformers(f) })
}

// Parts are what the Gateway API front-end builds load balancers with,
// beside the Services': their load balancing (its target pools, TLS
// Secrets and reserved addresses), the engine, the review board and the
// cloud config. main wires them; the two front-ends never meet.
type Parts struct {
	LoadBalancers *servicelb.LoadBalancers
	Engine        *engine.Engine
	Board         *review.Board
	Config        *cloudconfig.Config
}

// Parts are the cloud provider's parts.
func (c *Cloud) Parts() Parts {
	return Parts{LoadBalancers: c.lbs, Engine: c.engine, Board: c.board, Config: c.cfg}
}

func (c *Cloud) LoadBalancer() (cloudprovider.LoadBalancer, bool) {
	return inertLoadBalancer{loadBalancer{c.lbs}}, true
}
func (c *Cloud) Instances() (cloudprovider.Instances, bool)     { return c.instances, true }
func (c *Cloud) InstancesV2() (cloudprovider.InstancesV2, bool) { return c.instances, true }
func (c *Cloud) Zones() (cloudprovider.Zones, bool)             { return c.instances, true }
func (c *Cloud) Clusters() (cloudprovider.Clusters, bool)       { return nil, false }
func (c *Cloud) Routes() (cloudprovider.Routes, bool)           { return c.routes, true }
func (c *Cloud) ProviderName() string                           { return ProviderName }
func (c *Cloud) HasClusterID() bool                             { return c.cfg.ClusterID != "" }
