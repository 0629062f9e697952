package dataplane_test

import (
	"context"
	"net/http"
	"sync/atomic"
	"testing"
	"time"

	clocktesting "k8s.io/utils/clock/testing"

	"github.com/example/cloud-provider-example/exampleapi"
	"github.com/example/cloud-provider-example/simulator/simtest"
)

// The simulator serves what its API was told: a load balancer carries
// traffic on the address it reports once it is active, a pool's change
// drains a target on the pool's delay, a listener added by an update
// answers, and a deleted load balancer's socket closes.
func TestTheCloudServesWhatItRecords(t *testing.T) {
	api := cloudAPI(t, 300*time.Millisecond)
	ctx := t.Context()
	var ids []string
	for _, name := range []string{"node-a", "node-b"} {
		inst, err := api.CreateInstance(ctx, exampleapi.CreateInstanceRequest{Name: name, Type: "standard-1", Zone: "ex-west-1a"})
		if err != nil {
			t.Fatal(err)
		}
		httpBackend(t, inst.PrivateIPv4+":30080", name)
		ids = append(ids, inst.ID)
	}
	tp, err := api.CreateTargetPool(ctx, exampleapi.CreateTargetPoolRequest{Name: "nodes", Region: "ex-west-1", Targets: ids, DeregistrationDelaySeconds: 1})
	if err != nil {
		t.Fatal(err)
	}
	var spec exampleapi.LoadBalancerSpec
	spec.Name, spec.Region, spec.Type, spec.TargetPoolID = "web", "ex-west-1", "lb-small", tp.ID
	spec.Listeners = []exampleapi.Listener{{Protocol: "http", Port: 80, TargetPort: 30080}}
	lb, err := api.CreateLoadBalancer(ctx, spec)
	if err != nil {
		t.Fatal(err)
	}
	lb = waitActive(ctx, t, api, lb.ID)
	url := "http://" + lb.IPv4 + "/"

	if pods := answered(t, url, 10); pods["node-a"] != 5 || pods["node-b"] != 5 {
		t.Fatalf("10 requests over two nodes: %v", pods)
	}

	// node-a leaves the pool: no request reaches it while it drains.
	if _, err := api.UpdateTargetPool(ctx, tp.ID, exampleapi.UpdateTargetPoolRequest{Targets: ids[1:], DeregistrationDelaySeconds: 1}, 0); err != nil {
		t.Fatal(err)
	}
	// Round robin answers node-b every other request before the change
	// lands: the plane has it once four in a row are node-b's.
	eventually(t, func() bool { return answered(t, url, 4)["node-b"] == 4 })
	for range 6 {
		if _, a := get(t, noRedirects, url, "web.example.test"); a.Pod != "node-b" {
			t.Fatalf("a request reached %q, which left the pool", a.Pod)
		}
	}

	// An update adds a listener; a deletion closes the sockets.
	settings := lb.LoadBalancerSettings
	settings.Listeners = append(settings.Listeners, exampleapi.Listener{Protocol: "http", Port: 8080, TargetPort: 30080})
	if _, err := api.UpdateLoadBalancer(ctx, lb.ID, settings, 0); err != nil {
		t.Fatal(err)
	}
	eventually(t, func() bool {
		code, err := status(noRedirects, "http://"+lb.IPv4+":8080/")
		return err == nil && code == http.StatusOK
	})
	if err := api.DeleteLoadBalancer(ctx, lb.ID); err != nil {
		t.Fatal(err)
	}
	eventually(t, func() bool { _, err := status(noRedirects, url); return err != nil })
}

// cloudAPI is a client of a simulator serving its data plane, whose load
// balancers provision in delay.
func cloudAPI(t *testing.T, delay time.Duration) *exampleapi.Client {
	t.Helper()
	sim := simtest.Start(t, simtest.WithDataPlane(), simtest.WithProvisionDelay(delay))
	api, err := exampleapi.New(exampleapi.Options{Endpoint: sim.URL, Token: sim.Token})
	if err != nil {
		t.Fatal(err)
	}
	return api
}

// waitActive polls load balancer id until it is active.
func waitActive(ctx context.Context, t *testing.T, api *exampleapi.Client, id string) *exampleapi.LoadBalancer {
	t.Helper()
	var lb *exampleapi.LoadBalancer
	eventually(t, func() bool {
		var err error
		lb, err = api.GetLoadBalancer(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		return lb.Status == exampleapi.LBStatusActive
	})
	return lb
}

// answered sends n requests to url, each answered 200, and counts them
// by the pod that answered.
func answered(t *testing.T, url string, n int) map[string]int {
	t.Helper()
	pods := map[string]int{}
	for range n {
		res, a := get(t, noRedirects, url, "web.example.test")
		if res.StatusCode != http.StatusOK {
			t.Fatalf("status %d", res.StatusCode)
		}
		pods[a.Pod]++
	}
	return pods
}

// healthOf is load balancer id's target health, "health: reason" by
// target.
func healthOf(t *testing.T, api *exampleapi.Client, id string) map[string]string {
	t.Helper()
	hs, err := api.TargetHealth(t.Context(), id)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, h := range hs {
		out[h.ID] = h.Health + ": " + h.Reason
	}
	return out
}

// eventually polls cond for up to 10 s.
func eventually(t *testing.T, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		if cond() {
			return
		}
	}
	t.Fatal("condition not met within 10s")
}

// With the data plane on, the cloud's target health is what its probes
// find: a target failing the load balancer's health check is unhealthy,
// and healthy again once it passes.
func TestTargetHealthIsProbed(t *testing.T) {
	api := cloudAPI(t, 0)
	ctx := t.Context()
	oks := map[string]*atomic.Bool{}
	var ids []string
	for _, name := range []string{"node-a", "node-b"} {
		inst, err := api.CreateInstance(ctx, exampleapi.CreateInstanceRequest{Name: name, Type: "standard-1", Zone: "ex-west-1a"})
		if err != nil {
			t.Fatal(err)
		}
		oks[inst.ID] = &atomic.Bool{}
		oks[inst.ID].Store(name == "node-a")
		healthEndpoint(t, inst.PrivateIPv4+":30099", oks[inst.ID])
		ids = append(ids, inst.ID)
	}
	var spec exampleapi.LoadBalancerSpec
	spec.Name, spec.Region, spec.Type, spec.Targets = "web", "ex-west-1", "lb-small", ids
	spec.Listeners = []exampleapi.Listener{{Protocol: "http", Port: 80, TargetPort: 30080}}
	spec.HealthCheck = &exampleapi.HealthCheck{Protocol: "http", Port: 30099, Path: "/healthz",
		IntervalSeconds: 2, TimeoutSeconds: 1, HealthyThreshold: 1, UnhealthyThreshold: 1}
	lb, err := api.CreateLoadBalancer(ctx, spec)
	if err != nil {
		t.Fatal(err)
	}
	waitActive(ctx, t, api, lb.ID)
	want := func(a, b string) func() bool {
		return func() bool { h := healthOf(t, api, lb.ID); return h[ids[0]] == a && h[ids[1]] == b }
	}
	eventually(t, want("healthy: health check passing", "unhealthy: health check failing"))
	oks[ids[1]].Store(true)
	eventually(t, want("healthy: health check passing", "healthy: health check passing"))
}

// A load balancer reads active only once the data plane serves it: its
// provisioning ends on the clock, the plane binds it when it next takes
// the store, and the API reads status at the plane's time. On a fake
// clock stepped past the provisioning, the plane has not taken the store
// again (its timer runs on the real one): the load balancer still reads
// provisioning, and once a write makes the plane take the store it reads
// active and answers at once.
func TestActiveMeansServed(t *testing.T) {
	clk := clocktesting.NewFakePassiveClock(time.Now())
	sim := simtest.Start(t, simtest.WithDataPlane(), simtest.WithProvisionDelay(time.Hour), simtest.WithClock(clk))
	api, err := exampleapi.New(exampleapi.Options{Endpoint: sim.URL, Token: sim.Token})
	if err != nil {
		t.Fatal(err)
	}
	ctx := t.Context()
	inst, err := api.CreateInstance(ctx, exampleapi.CreateInstanceRequest{Name: "node-a", Type: "standard-1", Zone: "ex-west-1a"})
	if err != nil {
		t.Fatal(err)
	}
	httpBackend(t, inst.PrivateIPv4+":30080", "node-a")
	var spec exampleapi.LoadBalancerSpec
	spec.Name, spec.Region, spec.Type, spec.Targets = "web", "ex-west-1", "lb-small", []string{inst.ID}
	spec.Listeners = []exampleapi.Listener{{Protocol: "http", Port: 80, TargetPort: 30080}}
	lb, err := api.CreateLoadBalancer(ctx, spec)
	if err != nil {
		t.Fatal(err)
	}
	clk.SetTime(clk.Now().Add(time.Hour))
	if got, err := api.GetLoadBalancer(ctx, lb.ID); err != nil || got.Status != exampleapi.LBStatusProvisioning {
		t.Fatalf("past its provisioning, before the plane took the store: %+v, %v; want provisioning", got, err)
	}
	if _, err := api.CreateInstance(ctx, exampleapi.CreateInstanceRequest{Name: "node-b", Type: "standard-1", Zone: "ex-west-1a"}); err != nil {
		t.Fatal(err)
	}
	got := waitActive(ctx, t, api, lb.ID)
	if pods := answered(t, "http://"+got.IPv4+"/", 2); pods["node-a"] != 2 {
		t.Fatalf("as soon as it reads active: answered by %v", pods)
	}
}
