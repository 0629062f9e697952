// Package gatewaycontroller is the Gateway API front-end beside ccm: it
// watches this controller's GatewayClasses, their Gateways and the routes
// naming them (HTTPRoutes; TLSRoutes, TCPRoutes and UDPRoutes where the
// API server serves them): it builds each Gateway's load balancer through
// the engine, under review like a Service's (docs/gateway-api.md), and
// writes into their statuses what package gateway decides.
package gatewaycontroller

import (
	"context"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
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
	gatewayv1beta1 "sigs.k8s.io/gateway-api/apis/v1beta1"
	gwclient "sigs.k8s.io/gateway-api/pkg/client/clientset/versioned"
	gwinformers "sigs.k8s.io/gateway-api/pkg/client/informers/externalversions"
	gwlisters "sigs.k8s.io/gateway-api/pkg/client/listers/apis/v1"

	"github.com/example/cloud-provider-example/tenancy"
)

// ControllerName is the GatewayClass controllerName this controller
// serves.
const ControllerName gatewayv1.GatewayController = "example.com/gateway-controller"

// resync is how often every object is looked at again.
const resync = 10 * time.Minute

// key is a work item: a GatewayClass (Namespace "") or a Gateway.
type key struct {
	class bool
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
	// l4 are the L4 route kinds the API server serves.
	l4 []l4Kind
	// cloud builds the load balancers (nil: statuses only).
	cloud *Cloud
	// unreachable is what each Gateway (by uid) was last told of its
	// rules' unreachable backends (its one worker reads and writes it).
	unreachable map[types.UID]string
	synced      []cache.InformerSynced
	queue       workqueue.TypedRateLimitingInterface[key]
	gwFactory   gwinformers.SharedInformerFactory
	kubeFactor  kubeinformers.SharedInformerFactory
}

// New returns a controller over gw and kube, building load balancers
// through cloud (nil: none, statuses only); Run starts it.
func New(gw gwclient.Interface, kube kubernetes.Interface, cloud *Cloud) (*Controller, error) {
	gf := gwinformers.NewSharedInformerFactory(gw, resync)
	kf := kubeinformers.NewSharedInformerFactory(kube, resync)
	c := &Controller{gw: gw, kube: kube, cloud: cloud, gwFactory: gf, kubeFactor: kf,
		queue: workqueue.NewTypedRateLimitingQueueWithConfig(workqueue.DefaultTypedControllerRateLimiter[key](),
			workqueue.TypedRateLimitingQueueConfig[key]{Name: "gateways"})}
	classes, gateways, routes := gf.Gateway().V1().GatewayClasses(), gf.Gateway().V1().Gateways(), gf.Gateway().V1().HTTPRoutes()
	services, namespaces := kf.Core().V1().Services(), kf.Core().V1().Namespaces()
	grants := gf.Gateway().V1beta1().ReferenceGrants()
	c.classes, c.gateways, c.routes = classes.Lister(), gateways.Lister(), routes.Lister()
	c.services, c.namespaces = services.Lister(), namespaces.Lister()
	c.refs = &tenancy.Authorizer{Sources: tenancy.Sources{Grants: func(_ context.Context, ns string) ([]gatewayv1beta1.ReferenceGrant, error) {
		if !grants.Informer().HasSynced() {
			return nil, tenancy.ErrGrantsUnreadable
		}
		l, err := grants.Lister().ReferenceGrants(ns).List(labels.Everything())
		out := make([]gatewayv1beta1.ReferenceGrant, len(l))
		for i, g := range l {
			out[i] = *g
		}
		return out, err
	}}}
	l4, err := l4Kinds(gw, gf)
	if err != nil {
		return nil, err
	}
	c.l4 = l4
	handlers := []struct {
		inf cache.SharedIndexInformer
		on  func(obj any)
	}{
		{classes.Informer(), c.classChanged},
		{gateways.Informer(), c.gatewayChanged},
		{routes.Informer(), c.routeChanged},
		{services.Informer(), func(any) { c.everyGateway() }},
		{namespaces.Informer(), func(any) { c.everyGateway() }},
		{grants.Informer(), func(any) { c.everyGateway() }},
	}
	for _, k := range l4 {
		handlers = append(handlers, struct {
			inf cache.SharedIndexInformer
			on  func(obj any)
		}{k.informer, c.l4Changed(k.read)})
	}
	for _, h := range handlers {
		on := h.on
		if _, err := h.inf.AddEventHandler(cache.ResourceEventHandlerFuncs{
			AddFunc:    on,
			UpdateFunc: func(old, cur any) { on(old); on(cur) },
			DeleteFunc: on,
		}); err != nil {
			return nil, fmt.Errorf("gateway controller: %w", err)
		}
		c.synced = append(c.synced, h.inf.HasSynced)
	}
	return c, nil
}

// Watch starts the informers only, until ctx ends: what previews read
// (Preview), on a replica that does not run the controller.
func (c *Controller) Watch(ctx context.Context) {
	c.gwFactory.Start(ctx.Done())
	c.kubeFactor.Start(ctx.Done())
}

// Run keeps the statuses until ctx ends.
func (c *Controller) Run(ctx context.Context) {
	defer utilruntime.HandleCrash()
	defer c.queue.ShutDown()
	c.Watch(ctx)
	if !cache.WaitForCacheSync(ctx.Done(), c.synced...) {
		return
	}
	klog.InfoS("Gateway controller started", "controllerName", ControllerName)
	go wait.UntilWithContext(ctx, func(ctx context.Context) {
		for c.next(ctx) {
		}
	}, time.Second)
	<-ctx.Done()
}

func (c *Controller) next(ctx context.Context) bool {
	k, quit := c.queue.Get()
	if quit {
		return false
	}
	defer c.queue.Done(k)
	var err error
	if k.class {
		err = c.syncClass(ctx, k.Name)
	} else {
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

// queueParents queues the Gateways refs name, of a route in namespace ns.
func (c *Controller) queueParents(ns string, refs []gatewayv1.ParentReference) {
	for _, ref := range refs {
		pns := ns
		if ref.Namespace != nil {
			pns = string(*ref.Namespace)
		}
		c.queue.Add(key{NamespacedName: types.NamespacedName{Namespace: pns, Name: string(ref.Name)}})
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
