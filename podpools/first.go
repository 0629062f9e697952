package podpools

import (
	"context"
	"time"

	discoveryv1 "k8s.io/api/discovery/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/klog/v2"

	"github.com/example/cloud-provider-example/lbmodel"
)

// slicesPoll is how often a pool's first plan looks for its Service's
// first EndpointSlice, and firstSliceWait how long at most: the
// EndpointSlice controller writes one within moments of the Service, and
// the worker that waits may be one of the few the Gateways share.
const (
	slicesPoll     = 50 * time.Millisecond
	firstSliceWait = time.Second
)

// awaitSlices waits, once before pool st's first plan, for the
// EndpointSlice controller to have written its Service's first slice.
// A Service that exposes pods already running (a LoadBalancer added to a
// Deployment) has no slice for a moment, and a first plan without its
// endpoints was superseded within seconds by one with them: a second
// plan to review, an apply spent on an empty pool, 503s in between. (A
// Service made with its pods gains nothing: the controller's first slice
// is an empty placeholder, and the pods are not ready yet anyway.) It
// waits only for a Service with a selector (one without has the slices
// its owner writes, whenever), made within Settle.Longest or not seen
// yet: the controller makes a slice even for a Service selecting no pod,
// so an older one without any has no controller making them (a cluster
// without kube-controller-manager), and waiting would gain nothing.
func (p *Pools) awaitSlices(ctx context.Context, st *pool) {
	p.mu.Lock()
	awaited := st.awaited
	st.awaited = true
	p.mu.Unlock()
	port := st.port
	svc := p.service(port)
	if awaited || svc != nil && (len(svc.Spec.Selector) == 0 || p.now().Sub(svc.CreationTimestamp.Time) > p.opts.Settle.Longest) {
		return
	}
	start := p.now()
	err := wait.PollUntilContextTimeout(ctx, slicesPoll, firstSliceWait, true, func(context.Context) (bool, error) {
		return p.hasSlices(port), nil
	})
	if err != nil {
		klog.V(2).InfoS("A pod pool's first plan goes without the Service's EndpointSlices", "service", port.Namespace+"/"+port.Service,
			"waited", p.now().Sub(start))
	}
}

// hasSlices tells whether port's Service is known and has an
// EndpointSlice, or needs none from the controller (no selector).
func (p *Pools) hasSlices(port lbmodel.ServicePort) bool {
	svc := p.service(port)
	if svc == nil {
		return false
	}
	if len(svc.Spec.Selector) == 0 {
		return true
	}
	eps, err := p.slicesOf(port.Namespace, port.Service)
	return err != nil || len(eps) > 0
}

// slicesOf are the EndpointSlices of Service namespace/name, as the
// informer has them.
func (p *Pools) slicesOf(namespace, name string) ([]*discoveryv1.EndpointSlice, error) {
	return p.slices.EndpointSlices(namespace).List(labels.SelectorFromSet(labels.Set{discoveryv1.LabelServiceName: name}))
}
