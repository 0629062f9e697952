package simulator_test

import (
	"fmt"
	"net/http"
	"net/netip"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/example/cloud-provider-example/exampleapi"
	"github.com/example/cloud-provider-example/simulator/simtest"
)

func inPrefix(t *testing.T, addr, prefix string) {
	t.Helper()
	a, err := netip.ParseAddr(addr)
	if err != nil || !netip.MustParsePrefix(prefix).Contains(a) {
		t.Errorf("address %q is not in %s", addr, prefix)
	}
}

func TestLoadBalancerProvisioning(t *testing.T) {
	const delay = 200 * time.Millisecond
	sim := simtest.Start(t, simtest.WithProvisionDelay(delay))
	c := control(t, sim)
	node := c.createInstance(instanceReq("node-1", "ex-west-1a"))

	spec := lbSpec("web")
	spec.IPFamily = exampleapi.IPFamilyDualStack
	spec.Targets = []string{node.ID}
	spec.Tags = map[string]string{"svc": "default/web"}
	start := time.Now()
	var lb exampleapi.LoadBalancer
	resp := c.must(http.StatusCreated, "POST", "/v1/load-balancers", spec, &lb)
	if lb.Status != exampleapi.LBStatusProvisioning || lb.IPv4 != "" || lb.Hostname != "" || !strings.HasPrefix(lb.ID, "lb-") {
		t.Fatalf("new load balancer %+v", lb)
	}
	if lb.Type != "lb-small" || lb.Algorithm != "round_robin" || resp.header.Get("ETag") != `"1"` {
		t.Errorf("defaults not applied: %+v", lb)
	}
	active := c.waitLB(lb.ID)
	if elapsed := time.Since(start); elapsed < delay {
		t.Errorf("active after %v, before the provision delay %v", elapsed, delay)
	}
	if active.Status != exampleapi.LBStatusActive || active.Version != 1 || active.Hostname == "" {
		t.Fatalf("active load balancer %+v", active)
	}
	inPrefix(t, active.IPv4, "203.0.113.0/24")
	inPrefix(t, active.IPv6, "2001:db8:1b::/64")

	internal := lbSpec("internal")
	internal.Internal = true
	ilb := c.waitLB(c.lbs().create(internal).ID)
	inPrefix(t, ilb.IPv4, "10.255.0.0/16")
	if ilb.IPv6 != "" {
		t.Errorf("ipv4-only load balancer got IPv6 %s", ilb.IPv6)
	}

	// The provision delay is the runtime one at creation time.
	sim.SetFaults(t, exampleapi.Faults{ProvisionDelayMs: 0})
	if now := c.lbs().create(lbSpec("instant")); now.Status != exampleapi.LBStatusActive {
		t.Errorf("with no provision delay: status %s", now.Status)
	}
}

func TestLoadBalancerPoolExhaustion(t *testing.T) {
	sim := simtest.Start(t, simtest.WithLBPublicPoolSize(2), simtest.WithProvisionDelay(0))
	c := control(t, sim)
	a, b := c.lbs().create(lbSpec("a")), c.lbs().create(lbSpec("b"))
	if a.IPv4 != "203.0.113.1" || b.IPv4 != "203.0.113.2" {
		t.Fatalf("addresses %s, %s", a.IPv4, b.IPv4)
	}
	full := c.lbs().create(lbSpec("c"))
	if full.Status != exampleapi.LBStatusError || !strings.Contains(full.StatusMessage, "203.0.113.0/24") || full.IPv4 != "" {
		t.Fatalf("load balancer on a full pool: %+v", full)
	}
	if got := c.lbs().get(full.ID); got.Status != exampleapi.LBStatusError {
		t.Errorf("status on read %s", got.Status)
	}
	// Internal load balancers use another pool.
	internal := lbSpec("d")
	internal.Internal = true
	if ilb := c.lbs().create(internal); ilb.Status != exampleapi.LBStatusActive {
		t.Errorf("internal load balancer %+v", ilb)
	}
	// Deleting frees the address for the next one.
	c.must(http.StatusNoContent, "DELETE", "/v1/load-balancers/"+a.ID, nil, nil)
	c.must(http.StatusNoContent, "DELETE", "/v1/load-balancers/"+full.ID, nil, nil)
	if e := c.lbs().create(lbSpec("e")); e.Status != exampleapi.LBStatusActive || e.IPv4 != "203.0.113.1" {
		t.Errorf("after delete: %+v", e)
	}
}

func TestLoadBalancerDualStackExhaustionReleasesIPv4(t *testing.T) {
	sim := simtest.Start(t, simtest.WithLBPublicPoolSize(1), simtest.WithProvisionDelay(0))
	c := control(t, sim)
	c.lbs().create(lbSpec("a"))
	spec := lbSpec("b")
	spec.IPFamily = exampleapi.IPFamilyDualStack
	if lb := c.lbs().create(spec); lb.Status != exampleapi.LBStatusError || lb.IPv6 != "" {
		t.Errorf("%+v", lb)
	}
}

func TestLoadBalancerNameConflict(t *testing.T) {
	c := startControl(t)
	c.lbs().create(lbSpec("web"))
	if e := c.apiError(http.StatusConflict, "POST", "/v1/load-balancers", lbSpec("web")); e.Code != exampleapi.CodeConflict {
		t.Errorf("code %q", e.Code)
	}
	other := lbSpec("web")
	other.Region = "ex-east-1"
	c.lbs().create(other)

	var l exampleapi.ListResponse[exampleapi.LoadBalancer]
	c.must(http.StatusOK, "GET", "/v1/load-balancers?name=web&region=ex-east-1", nil, &l)
	if len(l.Items) != 1 || l.Items[0].Region != "ex-east-1" {
		t.Errorf("filtered list %+v", l.Items)
	}
}

func TestConcurrentCreatesOfOneName(t *testing.T) {
	sim := simtest.Start(t)
	expectOneCreated(t, sim, 20, "/v1/load-balancers", lbSpec("race"))
	var l exampleapi.ListResponse[exampleapi.LoadBalancer]
	control(t, sim).must(http.StatusOK, "GET", "/v1/load-balancers?name=race", nil, &l)
	if len(l.Items) != 1 {
		t.Errorf("%d load balancers named race", len(l.Items))
	}
}

// expectOneCreated posts body to path n times at once, each with its own
// client, and expects one create (201) and n-1 conflicts (409).
func expectOneCreated(t *testing.T, sim *simtest.Sim, n int, path string, body any) {
	t.Helper()
	statuses := make(chan int, n)
	var wg sync.WaitGroup
	start := make(chan struct{})
	for range n {
		wg.Go(func() {
			<-start
			resp, err := newAPI(t, sim.URL, sim.Token).try("POST", path, body)
			if err != nil {
				t.Error(err)
				return
			}
			statuses <- resp.status
		})
	}
	close(start)
	wg.Wait()
	close(statuses)
	count := map[int]int{}
	for s := range statuses {
		count[s]++
	}
	if count[http.StatusCreated] != 1 || count[http.StatusConflict] != n-1 {
		t.Fatalf("statuses %v, want one 201 and %d 409", count, n-1)
	}
}

func TestDeletedInstanceLeavesLoadBalancerTargets(t *testing.T) {
	c := startControl(t)
	n1, n2 := c.createInstance(instanceReq("n1", "ex-west-1a")), c.createInstance(instanceReq("n2", "ex-west-1b"))
	spec := lbSpec("web")
	spec.Targets = []string{n1.ID, n2.ID}
	lb := c.lbs().create(spec)
	c.must(http.StatusNoContent, "DELETE", "/v1/instances/"+n1.ID, nil, nil)
	got := c.lbs().get(lb.ID)
	if len(got.Targets) != 1 || got.Targets[0] != n2.ID || got.Version != 2 {
		t.Errorf("after deleting a target: targets %v version %d", got.Targets, got.Version)
	}
}

func TestLoadBalancerUpdateKeepsFixedFields(t *testing.T) {
	sim := simtest.Start(t, simtest.WithProvisionDelay(0))
	c := control(t, sim)
	node := c.createInstance(instanceReq("n1", "ex-west-1a"))
	lb := c.lbs().create(lbSpec("web"))
	upd := exampleapi.UpdateLoadBalancerRequest{
		Type: "lb-large", Algorithm: "least_connections",
		Listeners:          []exampleapi.Listener{{Protocol: "udp", Port: 53, TargetPort: 30053, ProxyProtocol: true}},
		AllowedSourceCIDRs: []string{"192.0.2.0/24", "2001:db8::/32"},
		Targets:            []string{node.ID},
		Tags:               map[string]string{"a": "b"},
	}
	var got exampleapi.LoadBalancer
	c.must(http.StatusOK, "PUT", "/v1/load-balancers/"+lb.ID, upd, &got)
	if got.Name != "web" || got.Region != "ex-west-1" || got.IPv4 != lb.IPv4 || got.Type != "lb-large" ||
		got.HealthCheck != nil || len(got.Targets) != 1 || got.Listeners[0].Protocol != "udp" || got.Status != exampleapi.LBStatusActive {
		t.Errorf("after update %+v", got)
	}
	c.apiError(http.StatusNotFound, "PUT", "/v1/load-balancers/lb-nope", upd)
	c.apiError(http.StatusNotFound, "GET", "/v1/load-balancers/lb-nope", nil)
	c.apiError(http.StatusNotFound, "DELETE", "/v1/load-balancers/lb-nope", nil)
}

// A larger public pool, for benchmarks of thousands of load balancers.
func TestLoadBalancerPublicPrefix(t *testing.T) {
	sim := simtest.Start(t, simtest.WithLBPublicPrefix(netip.MustParsePrefix("198.18.0.0/16")), simtest.WithLBPublicPoolSize(300), simtest.WithProvisionDelay(0))
	c := control(t, sim)
	var last string
	for i := range 300 {
		lb := c.lbs().create(lbSpec(fmt.Sprintf("lb-%d", i)))
		if lb.Status != exampleapi.LBStatusActive {
			t.Fatalf("load balancer %d: %+v", i, lb)
		}
		last = lb.IPv4
	}
	if last != "198.18.1.44" {
		t.Fatalf("the 300th address is %s", last)
	}
}
