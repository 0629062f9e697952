package dataplane_test

import (
	"errors"
	"net/http"
	"strings"
	"testing"

	"github.com/example/cloud-provider-example/exampleapi"
)

// A pool of target type ip forwards to its targets' own addresses and
// ports (pods, behind no node port): the cloud takes only IPs its routes
// reach, probes each target on its own port, drains one that leaves, and
// stops sending to targets whose route goes.
func TestIPTargetPools(t *testing.T) {
	api := cloudAPI(t, 0)
	ctx := t.Context()
	node, err := api.CreateInstance(ctx, exampleapi.CreateInstanceRequest{Name: "node-a", Type: "standard-1", Zone: "ex-west-1a"})
	if err != nil {
		t.Fatal(err)
	}
	nets, err := api.ListNetworks(ctx, "ex-west-1", "default")
	if err != nil || len(nets) != 1 {
		t.Fatalf("networks: %v %v", nets, err)
	}
	pods := []string{"10.244.1.10:8080", "10.244.1.11:9090"}
	refused := func(targets []string, field, has string) {
		t.Helper()
		_, err := api.CreateTargetPool(ctx, exampleapi.CreateTargetPoolRequest{Name: "refused", Region: "ex-west-1",
			TargetType: exampleapi.TargetTypeIP, Targets: targets})
		var ae *exampleapi.APIError
		if !errors.As(err, &ae) || ae.Field != field || !strings.Contains(ae.Message, has) {
			t.Fatalf("pool of %v: %v, want a 400 on %s saying %q", targets, err, field, has)
		}
	}
	// No route reaches the pods yet: the cloud refuses them, naming the IP.
	refused(pods, "targets[0]", "10.244.1.10 is outside every route of region ex-west-1's networks")
	rt, err := api.CreateRoute(ctx, nets[0].ID, exampleapi.CreateRouteRequest{DestinationCIDR: "10.244.1.0/24", TargetInstanceID: node.ID})
	if err != nil {
		t.Fatal(err)
	}
	refused([]string{pods[0], "10.244.2.10:8080"}, "targets[1]", "10.244.2.10 is outside every route")
	refused([]string{"169.254.169.254:80"}, "targets[0]", "not a unicast address a pod can have")
	refused([]string{"10.244.1.10"}, "targets[0]", "not an IP:port target")
	refused([]string{"10.244.01.10:80"}, "targets[0]", "not an IP:port target")
	refused([]string{node.ID}, "targets[0]", "not an IP:port target")

	for i, p := range pods {
		httpBackend(t, p, "pod-"+string(rune('a'+i)))
	}
	tp, err := api.CreateTargetPool(ctx, exampleapi.CreateTargetPoolRequest{Name: "web-80", Region: "ex-west-1",
		TargetType: exampleapi.TargetTypeIP, Targets: pods, DeregistrationDelaySeconds: 2})
	if err != nil {
		t.Fatal(err)
	}
	if tp.TargetType != exampleapi.TargetTypeIP {
		t.Fatalf("target type %q", tp.TargetType)
	}
	if _, err := api.UpdateTargetPool(ctx, tp.ID, exampleapi.UpdateTargetPoolRequest{Targets: []string{node.ID}}, 0); err == nil {
		t.Fatal("an ip pool took an instance")
	}

	poolHealth := func() map[string]string {
		t.Helper()
		h, err := api.TargetPoolHealth(ctx, tp.ID)
		if err != nil {
			t.Fatal(err)
		}
		out := map[string]string{}
		for _, t := range h.Targets {
			out[t.ID] = t.Health + ": " + t.Reason
		}
		return out
	}
	if h := poolHealth(); h[pods[0]] != "unused: no load balancer forwards to the pool" {
		t.Fatalf("pool health before any load balancer: %v", h)
	}

	var spec exampleapi.LoadBalancerSpec
	spec.Name, spec.Region, spec.Type = "web", "ex-west-1", "lb-small"
	spec.Listeners = []exampleapi.Listener{{Protocol: "http", Port: 80, TargetPort: 1}}
	spec.HealthCheck = &exampleapi.HealthCheck{Protocol: "http", Port: 1, Path: "/healthz",
		IntervalSeconds: 2, TimeoutSeconds: 1, HealthyThreshold: 1, UnhealthyThreshold: 1}
	spec.TargetPoolID = tp.ID
	if _, err := api.CreateLoadBalancer(ctx, spec); err == nil || !strings.Contains(err.Error(), "reference it from a rule's backends") {
		t.Fatalf("a load balancer's own pool of target type ip: %v", err)
	}
	spec.TargetPoolID = ""
	spec.Rules = []exampleapi.Rule{{Name: "all", ListenerPort: 80, Priority: 1,
		Backends: []exampleapi.RuleBackend{{TargetPoolID: tp.ID, Port: 8080, Weight: 1}}}}
	if _, err := api.CreateLoadBalancer(ctx, spec); err == nil || !strings.Contains(err.Error(), "its targets carry their ports") {
		t.Fatalf("a backend port on a pool of target type ip: %v", err)
	}
	spec.Rules[0].Backends[0].Port = 0
	lb, err := api.CreateLoadBalancer(ctx, spec)
	if err != nil {
		t.Fatal(err)
	}
	lb = waitActive(ctx, t, api, lb.ID)
	url := "http://" + lb.IPv4 + "/"

	// Probed on their own ports (the check's port 1 answers nothing).
	health := func() map[string]string { return healthOf(t, api, lb.ID) }
	eventually(t, func() bool {
		h := health()
		return h[pods[0]] == "healthy: health check passing" && h[pods[1]] == "healthy: health check passing"
	})
	// The pool's view (what a readiness gate waits for): each load
	// balancer's verdict, the least healthy.
	if h := poolHealth(); h[pods[1]] != "healthy: "+lb.ID+": health check passing" {
		t.Fatalf("pool health: %v", h)
	}
	if got := answered(t, url, 10); got["pod-a"] != 5 || got["pod-b"] != 5 {
		t.Fatalf("10 requests over two pods: %v", got)
	}

	// pod-a leaves: it drains, and takes no request.
	if _, err := api.UpdateTargetPool(ctx, tp.ID, exampleapi.UpdateTargetPoolRequest{Targets: pods[1:], DeregistrationDelaySeconds: 2}, 0); err != nil {
		t.Fatal(err)
	}
	if h := health(); !strings.HasPrefix(h[pods[0]], "draining: ") {
		t.Fatalf("target health after pod-a left: %v", h)
	}
	if h := poolHealth(); !strings.HasPrefix(h[pods[0]], "draining: ") {
		t.Fatalf("pool health after pod-a left: %v", h)
	}
	for range 6 {
		if _, a := get(t, noRedirects, url, "web.example.test"); a.Pod != "pod-b" {
			t.Fatalf("a request reached %q, which left the pool", a.Pod)
		}
	}

	// The route goes: the cloud reaches the pods no more.
	if err := api.DeleteRoute(ctx, nets[0].ID, rt.ID); err != nil {
		t.Fatal(err)
	}
	eventually(t, func() bool {
		code, err := status(noRedirects, url)
		return err == nil && code == http.StatusServiceUnavailable
	})
	if h := health(); h[pods[1]] != "unhealthy: no route of the region reaches it" {
		t.Fatalf("target health without the route: %v", h)
	}
}
