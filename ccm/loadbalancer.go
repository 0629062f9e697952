package ccm

import (
	"context"
	"errors"
	"time"

	v1 "k8s.io/api/core/v1"
	cloudprovider "k8s.io/cloud-provider"
	"k8s.io/cloud-provider/api"

	"github.com/example/cloud-provider-example/annotations"
	"github.com/example/cloud-provider-example/servicelb"
)

// renewalRetry: the Service's shard is held, its Lease renewal late (a
// slow API server); the next renewal, a renew period away at most, makes
// it this replica's to act on again.
const renewalRetry = time.Second

// loadBalancer is cloudprovider.LoadBalancer over the Services' load
// balancing (package servicelb): what the service controller asks, in
// its words.
type loadBalancer struct {
	lbs serviceLBs
}

// serviceLBs is what the adapter calls (a *servicelb.LoadBalancers).
type serviceLBs interface {
	Name(in *annotations.Service) string
	Get(ctx context.Context, svc *v1.Service) (*v1.LoadBalancerStatus, bool, error)
	Ensure(ctx context.Context, svc *v1.Service, nodes []*v1.Node) (*v1.LoadBalancerStatus, error)
	Delete(ctx context.Context, svc *v1.Service) error
}

var _ serviceLBs = (*servicelb.LoadBalancers)(nil)

var _ cloudprovider.LoadBalancer = loadBalancer{}

// GetLoadBalancerName is the annotation's name, else a stable name of at
// most 32 characters derived from the cluster id and the Service UID.
func (l loadBalancer) GetLoadBalancerName(_ context.Context, _ string, svc *v1.Service) string {
	return l.lbs.Name(annotations.Read(svc))
}

// GetLoadBalancer reads the recorded outputs or the state; no plan.
func (l loadBalancer) GetLoadBalancer(ctx context.Context, _ string, svc *v1.Service) (*v1.LoadBalancerStatus, bool, error) {
	return l.lbs.Get(ctx, svc)
}

// EnsureLoadBalancer converges the Service's load balancer; while it
// provisions, while its plan awaits approval, or while its shard's Lease
// renewal is late, the controller retries.
func (l loadBalancer) EnsureLoadBalancer(ctx context.Context, _ string, svc *v1.Service, nodes []*v1.Node) (*v1.LoadBalancerStatus, error) {
	st, err := l.lbs.Ensure(ctx, svc, nodes)
	if errors.Is(err, servicelb.ErrRenewalLate) {
		return nil, api.NewRetryError(err.Error(), renewalRetry)
	}
	return st, err
}

// UpdateLoadBalancer follows node changes; it is the same convergence.
// A late renewal is an error here, so the service controller tries the
// node set again rather than taking it as applied.
func (l loadBalancer) UpdateLoadBalancer(ctx context.Context, _ string, svc *v1.Service, nodes []*v1.Node) error {
	_, err := l.lbs.Ensure(ctx, svc, nodes)
	var retry *api.RetryError
	if errors.As(err, &retry) {
		return nil // provisioning or awaiting approval is not a failure
	}
	return err
}

// EnsureLoadBalancerDeleted destroys the load balancer (or, under the
// deletion policy retain, hands it over: the state forgets it) and
// deletes its state and workspace. The destroy plan is decided like any
// other (the default policy rules hold it for approval); the Service's
// finalizer holds the Service meanwhile.
func (l loadBalancer) EnsureLoadBalancerDeleted(ctx context.Context, _ string, svc *v1.Service) error {
	return l.lbs.Delete(ctx, svc)
}
