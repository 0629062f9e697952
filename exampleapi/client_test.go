package exampleapi_test

import (
	"errors"
	"fmt"
	"net/http"
	"sync"
	"testing"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/example/cloud-provider-example/exampleapi"
	"github.com/example/cloud-provider-example/internal/testkit"
	"github.com/example/cloud-provider-example/simulator/simtest"
)

const region = "ex-west-1"

// startClient starts a simulator for the test and returns a client of it:
// the start of every test that needs nothing else of the simulator.
func startClient(t testing.TB, opts ...simtest.Option) *exampleapi.Client {
	t.Helper()
	return newClient(t, simtest.Start(t, opts...))
}

func newClient(t testing.TB, sim *simtest.Sim, mod ...func(*exampleapi.Options)) *exampleapi.Client {
	t.Helper()
	o := exampleapi.Options{Endpoint: sim.URL, Token: sim.Token, RetryWaitMin: 10 * time.Millisecond, RetryWaitMax: 200 * time.Millisecond}
	for _, m := range mod {
		m(&o)
	}
	c, err := exampleapi.New(o)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func mustInstance(t testing.TB, c *exampleapi.Client, name, zone string) *exampleapi.Instance {
	t.Helper()
	in, err := c.CreateInstance(testkit.Context(t), exampleapi.CreateInstanceRequest{Name: name, Type: "standard-2", Zone: zone, Tags: map[string]string{"role": "node"}})
	if err != nil {
		t.Fatalf("create instance %s: %v", name, err)
	}
	return in
}

func lbSpec(name string, targets ...string) exampleapi.LoadBalancerSpec {
	return exampleapi.LoadBalancerSpec{
		Name: name, Region: region, IPFamily: exampleapi.IPFamilyIPv4,
		LoadBalancerSettings: exampleapi.LoadBalancerSettings{
			Type: "lb-small", Algorithm: exampleapi.AlgorithmRoundRobin,
			Listeners: []exampleapi.Listener{{Protocol: "tcp", Port: 80, TargetPort: 30080}},
			Targets:   targets,
		},
	}
}

func TestRegionsAndZones(t *testing.T) {
	c := startClient(t)
	regions, err := c.ListRegions(testkit.Context(t))
	if err != nil {
		t.Fatal(err)
	}
	if len(regions) == 0 {
		t.Fatal("no regions")
	}
	zones, err := c.ListZones(testkit.Context(t), region)
	if err != nil {
		t.Fatal(err)
	}
	for _, z := range zones {
		if z.Region != region {
			t.Errorf("zone %s in region %s, asked for %s", z.Name, z.Region, region)
		}
	}
	if len(zones) < 2 {
		t.Errorf("want several zones in %s, got %v", region, zones)
	}
}

func TestInstanceCRUD(t *testing.T) {
	c := startClient(t)
	a := mustInstance(t, c, "node-a", "ex-west-1a")
	mustInstance(t, c, "node-b", "ex-west-1b")
	if a.ID == "" || a.PrivateIPv4 == "" || a.State != exampleapi.InstanceRunning || a.Region != region {
		t.Fatalf("unexpected instance %+v", a)
	}
	got, err := c.GetInstance(testkit.Context(t), a.ID)
	if err != nil || got.Name != "node-a" {
		t.Fatalf("get: %+v %v", got, err)
	}
	byName, err := c.ListInstances(testkit.Context(t), exampleapi.InstanceFilter{Name: "node-b"})
	if err != nil || len(byName) != 1 || byName[0].Name != "node-b" {
		t.Fatalf("filter by name: %+v %v", byName, err)
	}
	byZone, err := c.ListInstances(testkit.Context(t), exampleapi.InstanceFilter{Zone: "ex-west-1a"})
	if err != nil || len(byZone) != 1 || byZone[0].ID != a.ID {
		t.Fatalf("filter by zone: %+v %v", byZone, err)
	}
	byTag, err := c.ListInstances(testkit.Context(t), exampleapi.InstanceFilter{Tags: map[string]string{"role": "node"}})
	if err != nil || len(byTag) != 2 {
		t.Fatalf("filter by tag: %+v %v", byTag, err)
	}
	tagged, err := c.UpdateInstanceTags(testkit.Context(t), a.ID, map[string]string{"role": "lb"}, got.Version)
	if err != nil || tagged.Tags["role"] != "lb" || tagged.Version <= got.Version {
		t.Fatalf("update tags: %+v %v", tagged, err)
	}
	// The version the change was based on is stale now.
	if _, err := c.UpdateInstanceTags(testkit.Context(t), a.ID, map[string]string{"x": "y"}, got.Version); !exampleapi.IsPreconditionFailed(err) {
		t.Fatalf("stale If-Match: want precondition failed, got %v", err)
	}
	stopped, err := c.SetInstanceState(testkit.Context(t), a.ID, exampleapi.InstanceStopped, 0)
	if err != nil || stopped.State != exampleapi.InstanceStopped {
		t.Fatalf("stop: %+v %v", stopped, err)
	}
	if err := c.DeleteInstance(testkit.Context(t), a.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := c.GetInstance(testkit.Context(t), a.ID); !exampleapi.IsNotFound(err) {
		t.Fatalf("get deleted: want not found, got %v", err)
	}
	var apiErr *exampleapi.APIError
	if err := c.DeleteInstance(testkit.Context(t), a.ID); !errors.As(err, &apiErr) || apiErr.StatusCode != http.StatusNotFound {
		t.Fatalf("delete twice: want *APIError 404, got %v", err)
	}
}

func TestListPaginates(t *testing.T) {
	c := startClient(t)
	const n = 230 // more than two default pages
	var g errgroup.Group
	g.SetLimit(8)
	for i := range n {
		g.Go(func() error {
			_, err := c.CreateInstance(testkit.Context(t), exampleapi.CreateInstanceRequest{Name: fmt.Sprintf("n-%03d", i), Type: "standard-1", Zone: "ex-west-1c"})
			return err
		})
	}
	if err := g.Wait(); err != nil {
		t.Fatal(err)
	}
	all, err := c.ListInstances(testkit.Context(t), exampleapi.InstanceFilter{})
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for _, in := range all {
		if seen[in.ID] {
			t.Fatalf("instance %s listed twice", in.ID)
		}
		seen[in.ID] = true
	}
	if len(all) != n {
		t.Fatalf("listed %d instances, want %d", len(all), n)
	}
}

func TestNetworkAndRoutes(t *testing.T) {
	c := startClient(t)
	nets, err := c.ListNetworks(testkit.Context(t), region, "default")
	if err != nil || len(nets) != 1 {
		t.Fatalf("seeded network: %+v %v", nets, err)
	}
	n, err := c.CreateNetwork(testkit.Context(t), exampleapi.CreateNetworkRequest{Name: "pods", Region: region, CIDR: "10.20.0.0/16", IPv6CIDR: "fd00:20::/48"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.CreateNetwork(testkit.Context(t), exampleapi.CreateNetworkRequest{Name: "pods", Region: region, CIDR: "10.21.0.0/16"}); !exampleapi.IsConflict(err) {
		t.Fatalf("duplicate network name: want conflict, got %v", err)
	}
	inst := mustInstance(t, c, "node-r", "ex-west-1a")
	r4, err := c.CreateRoute(testkit.Context(t), n.ID, exampleapi.CreateRouteRequest{DestinationCIDR: "10.244.1.0/24", TargetInstanceID: inst.ID})
	if err != nil {
		t.Fatal(err)
	}
	r6, err := c.CreateRoute(testkit.Context(t), n.ID, exampleapi.CreateRouteRequest{DestinationCIDR: "fd00:244:1::/64", TargetInstanceID: inst.ID})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.CreateRoute(testkit.Context(t), n.ID, exampleapi.CreateRouteRequest{DestinationCIDR: "10.244.1.0/24", TargetInstanceID: inst.ID}); !exampleapi.IsConflict(err) {
		t.Fatalf("duplicate destination: want conflict, got %v", err)
	}
	if r4.Status != exampleapi.RouteStatusActive {
		t.Fatalf("new route status %q", r4.Status)
	}
	if err := c.DeleteNetwork(testkit.Context(t), n.ID); !exampleapi.IsConflict(err) {
		t.Fatalf("delete network with routes: want conflict, got %v", err)
	}
	// The target disappears: the route stays, as a blackhole.
	if err := c.DeleteInstance(testkit.Context(t), inst.ID); err != nil {
		t.Fatal(err)
	}
	routes, err := c.ListRoutes(testkit.Context(t), n.ID)
	if err != nil || len(routes) != 2 {
		t.Fatalf("list routes: %+v %v", routes, err)
	}
	for _, r := range routes {
		if r.Status != exampleapi.RouteStatusBlackhole {
			t.Errorf("route %s: status %q, want blackhole", r.DestinationCIDR, r.Status)
		}
	}
	for _, r := range []*exampleapi.Route{r4, r6} {
		if err := c.DeleteRoute(testkit.Context(t), n.ID, r.ID); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := c.GetRoute(testkit.Context(t), n.ID, r4.ID); !exampleapi.IsNotFound(err) {
		t.Fatalf("deleted route: want not found, got %v", err)
	}
	if err := c.DeleteNetwork(testkit.Context(t), n.ID); err != nil {
		t.Fatal(err)
	}
}

func TestLoadBalancerLifecycle(t *testing.T) {
	c := startClient(t, simtest.WithProvisionDelay(300*time.Millisecond))
	a := mustInstance(t, c, "lb-target-a", "ex-west-1a")
	b := mustInstance(t, c, "lb-target-b", "ex-west-1b")
	spec := lbSpec("web", a.ID)
	spec.IPFamily = exampleapi.IPFamilyDualStack
	spec.HealthCheck = &exampleapi.HealthCheck{Protocol: "http", Port: 31000, Path: "/healthz", IntervalSeconds: 10, TimeoutSeconds: 5, HealthyThreshold: 2, UnhealthyThreshold: 3}
	lb, err := c.CreateLoadBalancer(testkit.Context(t), spec)
	if err != nil {
		t.Fatal(err)
	}
	if lb.Status != exampleapi.LBStatusProvisioning {
		t.Fatalf("new LB status %q, want provisioning", lb.Status)
	}
	// The API has no way to wait for a status: poll.
	testkit.EventuallyEvery(t, 10*time.Second, 50*time.Millisecond, "LB active", func() error {
		if lb.Status == exampleapi.LBStatusActive {
			return nil
		}
		if lb, err = c.GetLoadBalancer(testkit.Context(t), lb.ID); err != nil {
			t.Fatal(err)
		}
		return fmt.Errorf("LB still %s", lb.Status)
	})
	if lb.IPv4 == "" || lb.IPv6 == "" || lb.Hostname == "" {
		t.Fatalf("active dual-stack LB lacks addresses: %+v", lb)
	}
	upd := exampleapi.UpdateLoadBalancerRequest{
		Type: "lb-medium", Algorithm: exampleapi.AlgorithmLeastConnections,
		Listeners: []exampleapi.Listener{{Protocol: "tcp", Port: 443, TargetPort: 30443, ProxyProtocol: true}, {Protocol: "udp", Port: 53, TargetPort: 30053}},
		Targets:   []string{a.ID, b.ID}, AllowedSourceCIDRs: []string{"192.0.2.0/24"},
	}
	got, err := c.UpdateLoadBalancer(testkit.Context(t), lb.ID, upd, lb.Version)
	if err != nil {
		t.Fatal(err)
	}
	if got.Type != "lb-medium" || len(got.Listeners) != 2 || len(got.Targets) != 2 || got.IPv4 != lb.IPv4 {
		t.Fatalf("update not applied or address changed: %+v", got)
	}
	if _, err := c.UpdateLoadBalancer(testkit.Context(t), lb.ID, upd, lb.Version); !exampleapi.IsPreconditionFailed(err) {
		t.Fatalf("stale If-Match: want precondition failed, got %v", err)
	}
	list, err := c.ListLoadBalancers(testkit.Context(t), exampleapi.LoadBalancerFilter{Name: "web", Region: region})
	if err != nil || len(list) != 1 || list[0].ID != lb.ID {
		t.Fatalf("list by name: %+v %v", list, err)
	}
	if err := c.DeleteLoadBalancer(testkit.Context(t), lb.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := c.GetLoadBalancer(testkit.Context(t), lb.ID); !exampleapi.IsNotFound(err) {
		t.Fatalf("deleted LB: want not found, got %v", err)
	}
}

// Twenty creates racing for one name: the cloud admits exactly one.
func TestConcurrentCreateSameName(t *testing.T) {
	c := startClient(t)
	const n = 20
	var wg sync.WaitGroup
	var mu sync.Mutex
	var ok, conflict int
	var other []error
	start := make(chan struct{})
	for range n {
		wg.Go(func() {
			<-start
			_, err := c.CreateLoadBalancer(testkit.Context(t), lbSpec("contended"))
			mu.Lock()
			defer mu.Unlock()
			switch {
			case err == nil:
				ok++
			case exampleapi.IsConflict(err):
				conflict++
			default:
				other = append(other, err)
			}
		})
	}
	close(start)
	wg.Wait()
	if ok != 1 || conflict != n-1 || len(other) > 0 {
		t.Fatalf("got %d created, %d conflicts, other errors %v; want 1 and %d", ok, conflict, other, n-1)
	}
	list, err := c.ListLoadBalancers(testkit.Context(t), exampleapi.LoadBalancerFilter{Name: "contended"})
	if err != nil || len(list) != 1 {
		t.Fatalf("want exactly one LB named contended, got %d (%v)", len(list), err)
	}
}

// With 30 % of requests failing, some answers lost and a rate limit, the
// client still completes a workload, and retried creates make no duplicates.
func TestWorkloadUnderFaults(t *testing.T) {
	sim := simtest.Start(t)
	var mu sync.Mutex
	codes := map[int]int{}
	c := newClient(t, sim, func(o *exampleapi.Options) {
		o.RetryMax = 30
		o.Observe = func(op string, code int, d time.Duration) {
			mu.Lock()
			codes[code]++
			mu.Unlock()
		}
	})
	sim.SetFaults(t, exampleapi.Faults{ErrorRate: 0.3, DropRate: 0.05, RateLimit: 200, RateBurst: 10, ProvisionDelayMs: 10})
	const n = 15
	workload := func(i int) error {
		in, err := c.CreateInstance(testkit.Context(t), exampleapi.CreateInstanceRequest{Name: fmt.Sprintf("w-%d", i), Type: "standard-1", Zone: "ex-west-1a"})
		if err != nil {
			return err
		}
		lb, err := c.CreateLoadBalancer(testkit.Context(t), lbSpec(fmt.Sprintf("w-%d", i), in.ID))
		if err != nil {
			return err
		}
		if _, err := c.GetLoadBalancer(testkit.Context(t), lb.ID); err != nil {
			return err
		}
		if _, err := c.UpdateInstanceTags(testkit.Context(t), in.ID, map[string]string{"n": fmt.Sprint(i)}, 0); err != nil {
			return err
		}
		return c.DeleteLoadBalancer(testkit.Context(t), lb.ID)
	}
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			if err := workload(i); err != nil && !exampleapi.IsNotFound(err) { // a retried delete may find it gone
				t.Errorf("workload: %v", err)
			}
		})
	}
	wg.Wait()
	sim.SetFaults(t, exampleapi.Faults{})
	insts, err := c.ListInstances(testkit.Context(t), exampleapi.InstanceFilter{})
	if err != nil {
		t.Fatal(err)
	}
	if len(insts) != n {
		t.Errorf("want %d instances after retried creates, got %d", n, len(insts))
	}
	lbs, err := c.ListLoadBalancers(testkit.Context(t), exampleapi.LoadBalancerFilter{})
	if err != nil {
		t.Fatal(err)
	}
	if len(lbs) != 0 {
		t.Errorf("want every LB deleted, %d left", len(lbs))
	}
	t.Logf("final status codes per operation: %v", codes)
}

func TestRetriesExhaustedIsTyped(t *testing.T) {
	sim := simtest.Start(t)
	c := newClient(t, sim, func(o *exampleapi.Options) { o.RetryMax = 1 })
	sim.SetFaults(t, exampleapi.Faults{ErrorRate: 1})
	_, err := c.ListRegions(testkit.Context(t))
	var apiErr *exampleapi.APIError
	if !errors.As(err, &apiErr) || !errors.Is(err, exampleapi.ErrUnavailable) {
		t.Fatalf("want a typed 5xx error after retries, got %T %v", err, err)
	}
	sim.SetFaults(t, exampleapi.Faults{RateLimit: 0.001, RateBurst: 1})
	noRetry := newClient(t, sim, func(o *exampleapi.Options) { o.RetryMax = -1 })
	_, _ = noRetry.ListRegions(testkit.Context(t)) // uses the burst
	_, err = noRetry.ListRegions(testkit.Context(t))
	if !errors.Is(err, exampleapi.ErrRateLimited) || !errors.As(err, &apiErr) || apiErr.RetryAfter <= 0 {
		t.Fatalf("want rate limited with Retry-After, got %v", err)
	}
}

// A 429's Retry-After is waited out, then the call succeeds.
func TestRetryAfterHonoured(t *testing.T) {
	sim := simtest.Start(t)
	var codes []int
	c := newClient(t, sim, func(o *exampleapi.Options) {
		o.Observe = func(op string, code int, d time.Duration) { codes = append(codes, code) }
	})
	sim.SetFaults(t, exampleapi.Faults{RateLimit: 1, RateBurst: 1})
	start := time.Now()
	for range 2 {
		if _, err := c.ListRegions(testkit.Context(t)); err != nil {
			t.Fatal(err)
		}
	}
	if el := time.Since(start); el < 900*time.Millisecond {
		t.Fatalf("second call returned after %s: Retry-After not honoured", el)
	}
	if fmt.Sprint(codes) != "[200 200]" {
		t.Fatalf("codes %v", codes)
	}
}

func TestAuthFailures(t *testing.T) {
	sim := simtest.Start(t)
	bad := newClient(t, sim, func(o *exampleapi.Options) { o.Token = "not-the-token-s3cr3t" })
	_, err := bad.ListRegions(testkit.Context(t))
	if !errors.Is(err, exampleapi.ErrUnauthorized) {
		t.Fatalf("wrong token: want unauthorized, got %v", err)
	}
	ro := newClient(t, sim, func(o *exampleapi.Options) { o.Token = sim.ReadOnlyToken })
	_, err = ro.ListRegions(testkit.Context(t))
	if !errors.Is(err, exampleapi.ErrForbidden) {
		t.Fatalf("read-only token on control API: want forbidden, got %v", err)
	}
	if _, err := exampleapi.New(exampleapi.Options{Endpoint: sim.URL}); err == nil {
		t.Fatal("a client without token must be refused")
	}
	if _, err := exampleapi.New(exampleapi.Options{Endpoint: "ftp://x", Token: "t"}); err == nil {
		t.Fatal("a non-http endpoint must be refused")
	}
}

func TestValidationErrorsNameTheField(t *testing.T) {
	c := startClient(t)
	cases := []struct {
		name  string
		call  func() error
		field string
	}{
		{"unknown zone", func() error {
			_, err := c.CreateInstance(testkit.Context(t), exampleapi.CreateInstanceRequest{Name: "x", Type: "standard-1", Zone: "nowhere-1a"})
			return err
		}, "zone"},
		{"port out of range", func() error {
			s := lbSpec("p")
			s.Listeners[0].Port = 70000
			_, err := c.CreateLoadBalancer(testkit.Context(t), s)
			return err
		}, "listeners[0].port"},
		{"unknown protocol", func() error {
			s := lbSpec("p")
			s.Listeners[0].Protocol = "sctp"
			_, err := c.CreateLoadBalancer(testkit.Context(t), s)
			return err
		}, "listeners[0].protocol"},
		{"bad CIDR", func() error {
			_, err := c.CreateNetwork(testkit.Context(t), exampleapi.CreateNetworkRequest{Name: "n", Region: region, CIDR: "10.0.0.300/16"})
			return err
		}, "cidr"},
	}
	for _, tc := range cases {
		err := tc.call()
		var apiErr *exampleapi.APIError
		if !errors.Is(err, exampleapi.ErrInvalid) || !errors.As(err, &apiErr) {
			t.Errorf("%s: want invalid argument, got %v", tc.name, err)
			continue
		}
		if apiErr.Field != tc.field || apiErr.Message == "" {
			t.Errorf("%s: field %q message %q, want field %q", tc.name, apiErr.Field, apiErr.Message, tc.field)
		}
	}
}

func TestObserveHook(t *testing.T) {
	sim := simtest.Start(t)
	type call struct {
		op   string
		code int
	}
	var calls []call
	c := newClient(t, sim, func(o *exampleapi.Options) {
		o.Observe = func(op string, code int, d time.Duration) { calls = append(calls, call{op, code}) }
	})
	_, _ = c.ListRegions(testkit.Context(t))
	_, _ = c.GetInstance(testkit.Context(t), "i-missing")
	want := []call{{"ListRegions", 200}, {"GetInstance", 404}}
	if fmt.Sprint(calls) != fmt.Sprint(want) {
		t.Fatalf("observed %v, want %v", calls, want)
	}
}

func TestMetadataClient(t *testing.T) {
	sim := simtest.Start(t, simtest.WithSelfInstance("meta-a"))
	c := newClient(t, sim)
	a := mustInstance(t, c, "meta-a", "ex-west-1b")
	m, err := exampleapi.NewMetadata(exampleapi.Options{Endpoint: sim.MetadataURL, Token: sim.ReadOnlyToken})
	if err != nil {
		t.Fatal(err)
	}
	byID, err := m.Instance(testkit.Context(t), a.ID)
	if err != nil || byID.Name != "meta-a" || byID.Zone != "ex-west-1b" || byID.PrivateIPv4 != a.PrivateIPv4 || byID.Hostname == "" {
		t.Fatalf("by id: %+v %v", byID, err)
	}
	byName, err := m.InstanceByName(testkit.Context(t), "meta-a", "")
	if err != nil || byName.ID != a.ID {
		t.Fatalf("by name: %+v %v", byName, err)
	}
	p, err := m.Placement(testkit.Context(t), a.ID)
	if err != nil || p.Region != region || p.Zone != "ex-west-1b" {
		t.Fatalf("placement: %+v %v", p, err)
	}
	self, err := m.Self(testkit.Context(t))
	if err != nil || self.ID != a.ID {
		t.Fatalf("self: %+v %v", self, err)
	}
	if _, err := m.Instance(testkit.Context(t), "i-nope"); !exampleapi.IsNotFound(err) {
		t.Fatalf("missing instance: want not found, got %v", err)
	}
}
