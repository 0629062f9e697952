package ccm

import (
	"context"

	v1 "k8s.io/api/core/v1"
	cloudprovider "k8s.io/cloud-provider"

	"github.com/example/cloud-provider-example/review"
)

// inertLoadBalancer is the LoadBalancer the service controller calls: it
// puts the errors returned in events (SyncLoadBalancerFailed) and logs, so
// they are made inert (review.Inert) here, once, whatever text a tenant got
// into them. The errors keep their chain: a RetryError is still one.
type inertLoadBalancer struct {
	cloudprovider.LoadBalancer
}

func (l inertLoadBalancer) GetLoadBalancer(ctx context.Context, cluster string, svc *v1.Service) (*v1.LoadBalancerStatus, bool, error) {
	st, ok, err := l.LoadBalancer.GetLoadBalancer(ctx, cluster, svc)
	return st, ok, review.Inert(err)
}

func (l inertLoadBalancer) EnsureLoadBalancer(ctx context.Context, cluster string, svc *v1.Service, nodes []*v1.Node) (*v1.LoadBalancerStatus, error) {
	st, err := l.LoadBalancer.EnsureLoadBalancer(ctx, cluster, svc, nodes)
	return st, review.Inert(err)
}

func (l inertLoadBalancer) UpdateLoadBalancer(ctx context.Context, cluster string, svc *v1.Service, nodes []*v1.Node) error {
	return review.Inert(l.LoadBalancer.UpdateLoadBalancer(ctx, cluster, svc, nodes))
}

func (l inertLoadBalancer) EnsureLoadBalancerDeleted(ctx context.Context, cluster string, svc *v1.Service) error {
	return review.Inert(l.LoadBalancer.EnsureLoadBalancerDeleted(ctx, cluster, svc))
}
