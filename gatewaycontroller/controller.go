// Package gatewaycontroller is the Gateway API front-end beside ccm: it
// watches this controller's GatewayClasses, their Gateways and the routes
// naming them (HTTPRoutes; GRPCRoutes, TLSRoutes, TCPRoutes, UDPRoutes
// and the ListenerSets naming a Gateway where the API server serves
// them): it builds each Gateway's load
// balancer through the engine, under review like a Service's
// (docs/gateway-api.md), and writes into their statuses what package
// gateway decides.
package gatewaycontroller

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	"k8s.io/apimachinery/pkg/util/wait"
	kubeinformers "k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	corelisters "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/klog/v2"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"
	gwclient "sigs.k8s.io/gateway-api/pkg/client/clientset/versioned"
	gwinformers "sigs.k8s.io/gateway-api/pkg/client/informers/externalversions"
	gwlisters "sigs.k8s.io/gateway-api/pkg/client/listers/apis/v1"

	"github.com/example/cloud-provider-example/referencegrants"
	"github.com/example/cloud-provider-example/tenancy"
)

// ControllerName is the GatewayClass controllerName this controller
// serves.
const ControllerName gatewayv1.GatewayController = "example.com/gateway-controller"

// resync is how often every object is looked at again.
const resync = 10 * time.Minute

// key is a work item: a GatewayClass (Namespace ""), the plan records
// read at start (sweep.go), or a Gateway.
type key struct {
	class, records bool
	types.NamespacedName
}

// Controller keeps the statuses of this controller's Gateway API objects.
type Controller struct {
	gw   gwclient.Interface
	kube kubernetes.Interface

	classes    gwlisters.GatewayClassLister
	gateways   gwlisters.GatewayLister
	routes     gwlisters.HTTPRouteLister
	services   corelisters.ServiceLister
	namespaces corelisters.NamespaceLister
	// refs decides every reference a route makes outside its namespace
	// (package tenancy): its backends' ReferenceGrants.
	refs *tenancy.Authorizer
	// grants are what refs reads consent from (grants.go).
	grants *referencegrants.Watch
	// l4 are the L4 route kinds the API server serves; sets lists the
	// ListenerSets where it serves them (nil where not: listenersets.go).
	l4   []l4Kind
	sets gwlisters.ListenerSetLister
	// tlsPolicies lists the BackendTLSPolicies where the server serves
	// them (nil where not), caWatch their CA ConfigMaps (backendtls.go).
	tlsPolicies gwlisters.BackendTLSPolicyLister
	caWatch     *caWatch
	// cloud builds the load balancers (nil: statuses only).
	cloud *Cloud
	// unreachable is what each Gateway was last told of its rules'
	// unreachable backends.
	unreachable toldOnce
	synced      []cache.InformerSynced
	// gatewaysRead: the Gateways and their classes are read, all that
	// NamedAddresses needs (a kind RBAC hides must not hold releases).
	gatewaysRead []cache.InformerSynced
	queue        workqueue.TypedRateLimitingInterface[key]
	gwFactory    gwinformers.SharedInformerFactory
	kubeFactor   kubeinformers.SharedInformerFactory

	// claims are what each Gateway's namespaces hold (claims.go);
	// ownershipSaid the unknown ownership annotation each Gateway was
	// told of; now is the clock claims are made by.
	claims        *claimStore
	ownershipSaid toldOnce
	now           func() time.Time
	// planned are the Gateways that have a workspace (sweep.go).
	planned plannedGateways
	// ruleSets are the routes' rule sets each Gateway has (rulesets.go).
	ruleSets ruleSetsOf

	// workers are the Gateways looked at at once (Workers);
	// recordsTried is closed once the plan records were read, or tried:
	// no Gateway is looked at before.
	workers      int
	recordsTried chan struct{}
	recordsOnce  sync.Once
}

// Workers is how many Gateways are looked at at once. One Gateway's
// apply, or a pod pool's first for a new backend of one of its routes,
// does not hold up every other Gateway's change; the queue never hands
// one Gateway to two workers, and terraform.concurrency bounds the
// processes.
const Workers = 4

// New returns a controller over gw and kube, building load balancers
// through cloud (nil: none, statuses only); Run starts it.
func New(gw gwclient.Interface, kube kubernetes.Interface, cloud *Cloud) (*Controller, error) {
	gf := gwinformers.NewSharedInformerFactory(gw, resync)
	kf := kubeinformers.NewSharedInformerFactory(kube, resync)
	c := &Controller{gw: gw, kube: kube, cloud: cloud, gwFactory: gf, kubeFactor: kf,
		queue: workqueue.NewTypedRateLimitingQueueWithConfig(workqueue.DefaultTypedControllerRateLimiter[key](),
			workqueue.TypedRateLimitingQueueConfig[key]{Name: "gateways"}),
		claims: newClaimStore(kube, ""), now: time.Now, workers: Workers, recordsTried: make(chan struct{})}
	if cloud != nil {
		c.claims = newClaimStore(kube, cloud.ClaimsNamespace)
	}
	classes, gateways, routes := gf.Gateway().V1().GatewayClasses(), gf.Gateway().V1().Gateways(), gf.Gateway().V1().HTTPRoutes()
	services, namespaces := kf.Core().V1().Services(), kf.Core().V1().Namespaces()
	c.classes, c.gateways, c.routes = classes.Lister(), gateways.Lister(), routes.Lister()
	c.gatewaysRead = []cache.InformerSynced{classes.Informer().HasSynced, gateways.Informer().HasSynced}
	c.services, c.namespaces = services.Lister(), namespaces.Lister()
	// A grant given or taken back, or the grants readable or not, may
	// change what any Gateway decides.
	c.grants = newGrants(c.everyGateway)
	c.refs = &tenancy.Authorizer{Sources: tenancy.Sources{Grants: c.grants.Read}}
	l4, setsServed, err := l4Kinds(gw, gf)
	if err != nil {
		return nil, err
	}
	c.l4 = l4
	// gone, when set, is told of a deletion instead of on; statusOnly
	// objects (those this controller writes the status of) are not looked
	// at again for a change of their status alone.
	type handler struct {
		inf        cache.SharedIndexInformer
		on         func(obj any)
		gone       func(obj any)
		statusOnly bool
	}
	handlers := []handler{
		{classes.Informer(), c.classChanged, nil, true},
		{gateways.Informer(), c.gatewayChanged, c.gatewayDeleted, true},
		{routes.Informer(), c.routeChanged, nil, true},
		{services.Informer(), func(any) { c.everyGateway() }, nil, false},
		{namespaces.Informer(), func(any) { c.everyGateway() }, nil, false},
	}
	for _, k := range l4 {
		handlers = append(handlers, handler{k.informer, c.l4Changed(k.read), nil, true})
	}
	if setsServed {
		sets := gf.Gateway().V1().ListenerSets()
		c.sets = sets.Lister()
		handlers = append(handlers, handler{sets.Informer(), c.listenerSetChanged, nil, true})
	}
	tlsHandler, err := c.watchBackendTLS(gw, gf)
	if err != nil {
		return nil, err
	}
	if tlsHandler != nil {
		handlers = append(handlers, handler{tlsHandler.inf, tlsHandler.on, nil, true})
	}
	for _, h := range handlers {
		on, gone, statusOnly := h.on, h.gone, h.statusOnly
		if gone == nil {
			gone = on
		}
		if _, err := h.inf.AddEventHandler(cache.ResourceEventHandlerFuncs{
			AddFunc: on,
			UpdateFunc: func(old, cur any) {
				if statusOnly && onlyStatus(old, cur) {
					return
				}
				on(old)
				on(cur)
			},
			DeleteFunc: gone,
		}); err != nil {
			return nil, fmt.Errorf("gateway controller: %w", err)
		}
		c.synced = append(c.synced, h.inf.HasSynced)
	}
	c.synced = append(c.synced, c.grants.HasSynced)
	return c, nil
}

// Watch starts the informers only, until ctx ends: what previews read
// (Preview), on a replica that does not run the controller.
func (c *Controller) Watch(ctx context.Context) {
	c.gwFactory.Start(ctx.Done())
	c.kubeFactor.Start(ctx.Done())
	c.grants.Start(ctx, referencegrants.FromClientset(c.gw))
	if c.caWatch != nil {
		c.caWatch.start(ctx)
	}
}

// Run keeps the statuses until ctx ends.
func (c *Controller) Run(ctx context.Context) {
	defer utilruntime.HandleCrash()
	defer c.queue.ShutDown()
	if c.cloud != nil {
		// First in the queue; the Gateways wait for it (next).
		c.queue.Add(key{records: true})
		c.lookWhenPoolsApplied()
	} else {
		c.triedRecords()
	}
	c.Watch(ctx)
	if !cache.WaitForCacheSync(ctx.Done(), c.synced...) {
		return
	}
	klog.InfoS("Gateway controller started", "controllerName", ControllerName, "workers", c.workers)
	for range c.workers {
		go wait.UntilWithContext(ctx, func(ctx context.Context) {
			for c.next(ctx) {
			}
		}, time.Second)
	}
	<-ctx.Done()
}

// triedRecords lets the Gateways be looked at: the plan records were
// read, or tried (one that failed is read again, rate-limited, as
// before there were several workers).
func (c *Controller) triedRecords() { c.recordsOnce.Do(func() { close(c.recordsTried) }) }

func (c *Controller) next(ctx context.Context) bool {
	k, quit := c.queue.Get()
	if quit {
		return false
	}
	defer c.queue.Done(k)
	var err error
	switch {
	case k.class:
		err = c.syncClass(ctx, k.Name)
	case k.records:
		err = c.readRecords(ctx)
		c.triedRecords()
	default:
		// What the records say of each Gateway (its rule sets, what its
		// load balancer holds) is known before any is looked at.
		select {
		case <-c.recordsTried:
		case <-ctx.Done():
			return false
		}
		err = c.syncGateway(ctx, k.NamespacedName)
	}
	if err != nil {
		klog.ErrorS(err, "Gateway controller: retrying", "key", k.NamespacedName)
		c.queue.AddRateLimited(k)
		return true
	}
	c.queue.Forget(k)
	return true
}

// onlyStatus tells whether cur differs from old in its status alone:
// the status this controller wrote. Each write would otherwise look at the
// Gateway again (for a Gateway of 1,000 routes, a translation and a plan
// per route status written).
func onlyStatus(old, cur any) bool {
	o, err1 := meta.Accessor(old)
	c, err2 := meta.Accessor(cur)
	return err1 == nil && err2 == nil && o.GetGeneration() == c.GetGeneration() && c.GetGeneration() != 0 &&
		o.GetDeletionTimestamp().Equal(c.GetDeletionTimestamp()) && slices.Equal(o.GetFinalizers(), c.GetFinalizers()) &&
		maps.Equal(o.GetLabels(), c.GetLabels()) && maps.Equal(o.GetAnnotations(), c.GetAnnotations())
}

func objectOf[T any](obj any) (T, bool) {
	if t, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		obj = t.Obj
	}
	v, ok := obj.(T)
	return v, ok
}

func (c *Controller) classChanged(obj any) {
	if gc, ok := objectOf[*gatewayv1.GatewayClass](obj); ok {
		c.queue.Add(key{class: true, NamespacedName: types.NamespacedName{Name: gc.Name}})
		c.everyGateway()
	}
}

func (c *Controller) gatewayChanged(obj any) {
	if gw, ok := objectOf[*gatewayv1.Gateway](obj); ok {
		c.queue.Add(key{NamespacedName: types.NamespacedName{Namespace: gw.Namespace, Name: gw.Name}})
	}
}

// routeChanged queues every Gateway the HTTPRoute names.
func (c *Controller) routeChanged(obj any) {
	if r, ok := objectOf[*gatewayv1.HTTPRoute](obj); ok {
		c.queueParents(r.Namespace, r.Spec.ParentRefs)
	}
}

// queueParents queues the Gateways refs name, of a route in namespace ns
// (through a ListenerSet, its Gateway).
func (c *Controller) queueParents(ns string, refs []gatewayv1.ParentReference) {
	for _, ref := range refs {
		target := refTarget(ns, ref)
		if isListenerSetRef(ref) {
			if c.sets == nil {
				continue
			}
			s, err := c.sets.ListenerSets(target.Namespace).Get(target.Name)
			if err != nil {
				continue // none yet: its creation queues its Gateway
			}
			target = parentOf(s)
		}
		c.queue.Add(key{NamespacedName: target})
	}
}

// everyGateway queues every Gateway: a namespace's labels or a Service
// may change what any of them decides.
func (c *Controller) everyGateway() {
	gws, err := c.gateways.List(labels.Everything())
	if err != nil {
		return
	}
	for _, gw := range gws {
		c.gatewayChanged(gw)
	}
}

// ours tells whether class is served by this controller.
func (c *Controller) ours(class gatewayv1.ObjectName) bool {
	gc, err := c.classes.Get(string(class))
	return err == nil && gc.Spec.ControllerName == ControllerName
}

// namespaceLabels reads a namespace's labels from the informer.
func (c *Controller) namespaceLabels(ns string) map[string]string {
	n, err := c.namespaces.Get(ns)
	if err != nil {
		return nil
	}
	return n.Labels
}

// service is a Service, nil when it does not exist.
func (c *Controller) service(ns, name string) *corev1.Service {
	s, err := c.services.Services(ns).Get(name)
	if err != nil {
		return nil
	}
	return s
}
