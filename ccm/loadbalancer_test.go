package ccm

import (
	"context"
	"errors"
	"fmt"
	"testing"

	v1 "k8s.io/api/core/v1"
	"k8s.io/cloud-provider/api"

	"github.com/example/cloud-provider-example/annotations"
	"github.com/example/cloud-provider-example/servicelb"
)

// lateLBs is a fake of the Services' load balancing (unit test only):
// every Service's shard has its renewal late.
type lateLBs struct{}

func (lateLBs) Name(*annotations.Service) string { return "" }
func (lateLBs) Get(context.Context, *v1.Service) (*v1.LoadBalancerStatus, bool, error) {
	return nil, false, nil
}
func (lateLBs) Ensure(context.Context, *v1.Service, []*v1.Node) (*v1.LoadBalancerStatus, error) {
	return nil, fmt.Errorf("shop/web: %w", servicelb.ErrRenewalLate)
}
func (lateLBs) Delete(context.Context, *v1.Service) error {
	return fmt.Errorf("shop/web: %w", servicelb.ErrRenewalLate)
}

// A Service whose shard's renewal is late is retried soon by the service
// controller, which takes neither a node set nor a deletion as done
// meanwhile.
func TestRenewalLateIsRetried(t *testing.T) {
	l := loadBalancer{lateLBs{}}
	svc := &v1.Service{}
	var retry *api.RetryError
	if _, err := l.EnsureLoadBalancer(t.Context(), "", svc, nil); !errors.As(err, &retry) || retry.RetryAfter() != renewalRetry {
		t.Fatalf("EnsureLoadBalancer with the renewal late: %v; want a retry in %s", err, renewalRetry)
	}
	if err := l.UpdateLoadBalancer(t.Context(), "", svc, nil); !errors.Is(err, servicelb.ErrRenewalLate) {
		t.Fatalf("UpdateLoadBalancer with the renewal late: %v; want %v", err, servicelb.ErrRenewalLate)
	}
	if err := l.EnsureLoadBalancerDeleted(t.Context(), "", svc); !errors.Is(err, servicelb.ErrRenewalLate) {
		t.Fatalf("EnsureLoadBalancerDeleted with the renewal late: %v; want %v", err, servicelb.ErrRenewalLate)
	}
}
