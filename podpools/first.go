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
// first EndpointSlice.
const slicesPoll = 50 * time.Millisecond

// awaitSlices waits, before pool port's first plan, for the
// EndpointSlice controller to have listed the Service's endpoints. A
// Service made moments ago (with its load balancer, as usual) has no
// slice yet, and a first plan without its endpoints was superseded
// within seconds by one with them: a second plan to review, an apply
// spent on an empty pool, 503s in between. It waits at most
// Settle.Quiet, and only for a Service with a selector (one without has
// the slices its owner writes, whenever) made within Settle.Longest, or
// not seen yet; the controller makes a slice even for a Service
// selecting no pod, so an older one without any has no controller
// making them (a cluster without kube-controller-manager), and waiting
// would gain nothing.
func (p *Pools) awaitSlices(ctx context.Context, port lbmodel.ServicePort) {
	svc := p.service(port)
	if svc != nil && (len(svc.Spec.Selector) == 0 || p.now().Sub(svc.CreationTimestamp.Time) > p.opts.Settle.Longest) {
		return
	}
	start := p.now()
	err := wait.PollUntilContextTimeout(ctx, slicesPoll, p.opts.Settle.Quiet, true, func(context.Context) (bool, error) {
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
	eps, err := p.slices.EndpointSlices(port.Namespace).List(labels.SelectorFromSet(labels.Set{discoveryv1.LabelServiceName: port.Service}))
	return err != nil || len(eps) > 0
}
