package exampleapi_test

import (
	"errors"
	"net/netip"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/example/cloud-provider-example/exampleapi"
	"github.com/example/cloud-provider-example/internal/testkit"
	"github.com/example/cloud-provider-example/simulator/simtest"
)

// TestAddressLifecycle drives every address method through the client: a
// reservation, its move between two load balancers, the lookup by IP, and
// the deletion refused while attached.
func TestAddressLifecycle(t *testing.T) {
	var mu sync.Mutex
	var ops []string
	c := newClient(t, simtest.Start(t, simtest.WithProvisionDelay(0)), func(o *exampleapi.Options) {
		o.Observe = func(op string, _ int, _ time.Duration) {
			mu.Lock()
			defer mu.Unlock()
			ops = append(ops, op)
		}
	})
	ctx := testkit.Context(t)
	a, err := c.CreateLoadBalancer(ctx, lbSpec("a"))
	if err != nil {
		t.Fatal(err)
	}
	b, err := c.CreateLoadBalancer(ctx, lbSpec("b"))
	if err != nil {
		t.Fatal(err)
	}

	addr, err := c.CreateAddress(ctx, exampleapi.CreateAddressRequest{Name: "web", Region: region, LoadBalancerID: a.ID,
		Tags: map[string]string{"team": "web"}})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(addr.ID, "addr-") || addr.Family != exampleapi.AddressFamilyIPv4 || addr.LoadBalancerID != a.ID || addr.Version != 1 {
		t.Fatalf("created %+v", addr)
	}
	if ip, err := netip.ParseAddr(addr.IP); err != nil || !ip.Is4() {
		t.Fatalf("ip %q: %v", addr.IP, err)
	}
	if lb, err := c.GetLoadBalancer(ctx, a.ID); err != nil || lb.IPv4 != addr.IP {
		t.Fatalf("load balancer a does not show the address: %+v %v", lb, err)
	}

	moved, err := c.UpdateAddress(ctx, addr.ID, exampleapi.UpdateAddressRequest{LoadBalancerID: b.ID, Tags: addr.Tags}, addr.Version)
	if err != nil || moved.LoadBalancerID != b.ID || moved.IP != addr.IP || moved.Version != 2 {
		t.Fatalf("move: %+v %v", moved, err)
	}
	if _, err := c.UpdateAddress(ctx, addr.ID, exampleapi.UpdateAddressRequest{}, addr.Version); !exampleapi.IsPreconditionFailed(err) {
		t.Fatalf("stale If-Match: want precondition failed, got %v", err)
	}
	if lb, err := c.GetLoadBalancer(ctx, a.ID); err != nil || lb.IPv4 == "" || lb.IPv4 == addr.IP {
		t.Fatalf("load balancer a after the move: %+v %v", lb, err)
	}

	for _, f := range []exampleapi.AddressFilter{{IP: addr.IP}, {Name: "web", Region: region}} {
		list, err := c.ListAddresses(ctx, f)
		if err != nil || len(list) != 1 || list[0].ID != addr.ID {
			t.Fatalf("list %+v: %+v %v", f, list, err)
		}
	}
	if list, err := c.ListAddresses(ctx, exampleapi.AddressFilter{IP: "192.0.2.1"}); err != nil || len(list) != 0 {
		t.Fatalf("list by a free IP: %+v %v", list, err)
	}

	checkDeleteInUse(t, c, "address", addr.ID, b.ID, c.DeleteAddress, c.GetAddress)
	mu.Lock()
	defer mu.Unlock()
	for _, op := range []string{"CreateAddress", "GetAddress", "ListAddresses", "UpdateAddress", "DeleteAddress"} {
		if !slices.Contains(ops, op) {
			t.Errorf("no %s among the observed operations %v", op, ops)
		}
	}
}

// TestAddressErrors: the cloud's refusals reach the caller with their
// status, field and message.
func TestAddressErrors(t *testing.T) {
	c := startClient(t, simtest.WithProvisionDelay(0))
	ctx := testkit.Context(t)
	lb, err := c.CreateLoadBalancer(ctx, lbSpec("v4"))
	if err != nil {
		t.Fatal(err)
	}
	_, err = c.CreateAddress(ctx, exampleapi.CreateAddressRequest{Name: "v6", Region: region, Family: exampleapi.AddressFamilyIPv6, LoadBalancerID: lb.ID})
	var apiErr *exampleapi.APIError
	if !exampleapi.IsConflict(err) || !errors.As(err, &apiErr) || !strings.Contains(apiErr.Message, "dualstack") {
		t.Fatalf("ipv6 on an ipv4 load balancer: %v", err)
	}
	_, err = c.CreateAddress(ctx, exampleapi.CreateAddressRequest{Name: "x", Region: region, LoadBalancerID: "lb-0000000000000000"})
	if !errors.Is(err, exampleapi.ErrInvalid) || !errors.As(err, &apiErr) || apiErr.Field != "load_balancer_id" {
		t.Fatalf("missing load balancer: %v", err)
	}
	if _, err := c.ListAddresses(ctx, exampleapi.AddressFilter{IP: "not-an-ip"}); !errors.Is(err, exampleapi.ErrInvalid) {
		t.Fatalf("bad ip filter: %v", err)
	}
}
