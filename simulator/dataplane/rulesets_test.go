package dataplane_test

import (
	"net/http"
	"testing"

	"github.com/example/cloud-provider-example/exampleapi"
)

// Traffic through a load balancer's address follows its rule sets as the
// cloud orders them (docs/adr/0028): a set's rule before the load
// balancer's own rule of a later key, the set of the lower name first on
// an equal key; a set replaced or deleted changes where the next request
// goes, with no write of the load balancer; a set's rule waits for the
// listener of its port.
func TestRuleSetsRouteTraffic(t *testing.T) {
	api := cloudAPI(t, 0)
	ctx := t.Context()
	pools := map[string]string{}
	for _, name := range []string{"node-a", "node-b", "node-c"} {
		inst, err := api.CreateInstance(ctx, exampleapi.CreateInstanceRequest{Name: name, Type: "standard-1", Zone: "ex-west-1a"})
		if err != nil {
			t.Fatal(err)
		}
		httpBackend(t, inst.PrivateIPv4+":30080", name)
		tp, err := api.CreateTargetPool(ctx, exampleapi.CreateTargetPoolRequest{Name: name, Region: "ex-west-1", Targets: []string{inst.ID}})
		if err != nil {
			t.Fatal(err)
		}
		pools[name] = tp.ID
	}
	to := func(node string) []exampleapi.RuleBackend {
		return []exampleapi.RuleBackend{{TargetPoolID: pools[node], Port: 30080, Weight: 1}}
	}
	var spec exampleapi.LoadBalancerSpec
	spec.Name, spec.Region, spec.Type = "gw", "ex-west-1", "lb-small"
	spec.Listeners = []exampleapi.Listener{{Protocol: "http", Port: 80, TargetPort: 30080}}
	spec.Rules = []exampleapi.Rule{{Name: "catch-all", ListenerPort: 80, OrderKey: "z", Backends: to("node-a")}}
	lb, err := api.CreateLoadBalancer(ctx, spec)
	if err != nil {
		t.Fatal(err)
	}
	lb = waitActive(ctx, t, api, lb.ID)
	api1 := func(node string) exampleapi.Rule {
		return exampleapi.Rule{Name: "api", ListenerPort: 80, OrderKey: "a", Hostnames: []string{"shop.example.test"},
			PathType: exampleapi.PathPrefix, Path: "/api", Backends: to(node)}
	}
	put := func(set string, rules ...exampleapi.Rule) {
		t.Helper()
		if _, err := api.PutRuleSet(ctx, lb.ID, set, exampleapi.PutRuleSetRequest{Rules: rules}, 0); err != nil {
			t.Fatal(err)
		}
	}
	// servedBy tells whether url answers shop.example.test from node,
	// false while nothing listens there yet (the plane is swapped in
	// after the write that made the load balancer active).
	servedBy := func(url, node string) bool {
		if _, err := status(noRedirects, url); err != nil {
			return false
		}
		res, a := get(t, noRedirects, url, "shop.example.test")
		return res.StatusCode == http.StatusOK && a.Pod == node
	}
	reaches := func(path, node string) func() bool {
		return func() bool { return servedBy("http://"+lb.IPv4+path, node) }
	}
	eventually(t, reaches("/api/v1", "node-a"))

	put("team-b", api1("node-b"))
	eventually(t, reaches("/api/v1", "node-b"))
	eventually(t, reaches("/other", "node-a")) // the set's rule matches /api only

	put("team-a", api1("node-c")) // the same key: team-a before team-b
	eventually(t, reaches("/api/v1", "node-c"))

	if err := api.DeleteRuleSet(ctx, lb.ID, "team-a"); err != nil {
		t.Fatal(err)
	}
	eventually(t, reaches("/api/v1", "node-b"))
	put("team-b") // replaced by no rules
	eventually(t, reaches("/api/v1", "node-a"))

	// A set's rule for a port without a listener routes nothing until
	// the listener comes, then its requests.
	alt := api1("node-c")
	alt.ListenerPort = 8080
	put("team-c", alt)
	settings := lb.LoadBalancerSettings
	settings.Listeners = append(settings.Listeners, exampleapi.Listener{Protocol: "http", Port: 8080, TargetPort: 30080})
	if _, err := api.UpdateLoadBalancer(ctx, lb.ID, settings, 0); err != nil {
		t.Fatal(err)
	}
	eventually(t, func() bool { return servedBy("http://"+lb.IPv4+":8080/api", "node-c") })
}
