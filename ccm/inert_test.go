package ccm

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	cloudprovider "k8s.io/cloud-provider"
	"k8s.io/cloud-provider/api"
)

// fails returns err from every call.
type fails struct {
	cloudprovider.LoadBalancer
	err error
}

func (f fails) EnsureLoadBalancer(context.Context, string, *v1.Service, []*v1.Node) (*v1.LoadBalancerStatus, error) {
	return nil, f.err
}

func (f fails) EnsureLoadBalancerDeleted(context.Context, string, *v1.Service) error { return f.err }

// What the service controller puts in events carries no control
// character a tenant wrote; a RetryError is still one.
func TestErrorsToTheServiceControllerAreInert(t *testing.T) {
	hostile := "port \"\x1b[2J\x1b[HNo changes.\""
	lb := inertLoadBalancer{fails{err: errors.New(hostile)}}
	_, err := lb.EnsureLoadBalancer(context.Background(), "c", &v1.Service{}, nil)
	if err == nil || strings.ContainsRune(err.Error(), '\x1b') {
		t.Fatalf("error %q reaches the events raw", err)
	}
	retry := api.NewRetryError(hostile, time.Second)
	lb = inertLoadBalancer{fails{err: retry}}
	err = lb.EnsureLoadBalancerDeleted(context.Background(), "c", &v1.Service{})
	var re *api.RetryError
	if !errors.As(err, &re) || re.RetryAfter() != time.Second || strings.ContainsRune(err.Error(), '\x1b') {
		t.Fatalf("retry error %q: as RetryError %v", err, errors.As(err, &re))
	}
}
