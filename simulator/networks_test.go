package simulator_test

import (
	"net/http"
	"testing"

	"github.com/example/cloud-provider-example/exampleapi"
	"github.com/example/cloud-provider-example/simulator/simtest"
)

func TestNetworksAndRoutes(t *testing.T) {
	c := startControl(t)

	var n exampleapi.Network
	resp := c.must(http.StatusCreated, "POST", "/v1/networks",
		exampleapi.CreateNetworkRequest{Name: "pods", Region: "ex-west-1", CIDR: "10.100.0.0/16", IPv6CIDR: "fd00:100::/48"}, &n)
	if n.ID[:4] != "net-" || n.Version != 1 || resp.header.Get("ETag") != `"1"` {
		t.Fatalf("network %+v", n)
	}
	c.apiError(http.StatusConflict, "POST", "/v1/networks", exampleapi.CreateNetworkRequest{Name: "pods", Region: "ex-west-1", CIDR: "10.101.0.0/16"})
	var list exampleapi.ListResponse[exampleapi.Network]
	c.must(http.StatusOK, "GET", "/v1/networks?region=ex-west-1", nil, &list)
	if len(list.Items) != 2 {
		t.Errorf("ex-west-1 networks: %+v", list.Items)
	}

	target := c.createInstance(instanceReq("node-1", "ex-west-1a"))
	routes := "/v1/networks/" + n.ID + "/routes"
	var rt exampleapi.Route
	c.must(http.StatusCreated, "POST", routes, exampleapi.CreateRouteRequest{DestinationCIDR: "10.244.1.0/24", TargetInstanceID: target.ID}, &rt)
	if rt.ID[:3] != "rt-" || rt.NetworkID != n.ID || rt.Status != exampleapi.RouteStatusActive {
		t.Fatalf("route %+v", rt)
	}
	var v6 exampleapi.Route
	c.must(http.StatusCreated, "POST", routes, exampleapi.CreateRouteRequest{DestinationCIDR: "fd00:244:1::/64", TargetInstanceID: target.ID}, &v6)

	// The same destination twice is a conflict, also when spelled differently.
	if e := c.apiError(http.StatusConflict, "POST", routes, exampleapi.CreateRouteRequest{DestinationCIDR: "10.244.1.0/24", TargetInstanceID: target.ID}); e.Code != exampleapi.CodeConflict {
		t.Errorf("code %q", e.Code)
	}
	c.apiError(http.StatusConflict, "POST", routes, exampleapi.CreateRouteRequest{DestinationCIDR: "fd00:244:1:0::/64", TargetInstanceID: target.ID})

	// A network with routes cannot be deleted.
	c.apiError(http.StatusConflict, "DELETE", "/v1/networks/"+n.ID, nil)

	// Deleting the target turns its routes into blackholes.
	c.must(http.StatusNoContent, "DELETE", "/v1/instances/"+target.ID, nil, nil)
	var got exampleapi.Route
	c.must(http.StatusOK, "GET", routes+"/"+rt.ID, nil, &got)
	if got.Status != exampleapi.RouteStatusBlackhole {
		t.Errorf("route status %q after target deletion, want blackhole", got.Status)
	}
	var rl exampleapi.ListResponse[exampleapi.Route]
	c.must(http.StatusOK, "GET", routes, nil, &rl)
	if len(rl.Items) != 2 || rl.Items[0].Status != exampleapi.RouteStatusBlackhole || rl.Items[1].Status != exampleapi.RouteStatusBlackhole {
		t.Errorf("routes %+v", rl.Items)
	}

	// Routes are scoped to their network.
	var def exampleapi.ListResponse[exampleapi.Network]
	c.must(http.StatusOK, "GET", "/v1/networks?region=ex-west-1&name=default", nil, &def)
	c.apiError(http.StatusNotFound, "GET", "/v1/networks/"+def.Items[0].ID+"/routes/"+rt.ID, nil)
	c.apiError(http.StatusNotFound, "GET", "/v1/networks/net-nope/routes", nil)
	c.apiError(http.StatusNotFound, "POST", "/v1/networks/net-nope/routes", exampleapi.CreateRouteRequest{DestinationCIDR: "10.0.0.0/8", TargetInstanceID: "i-x"})

	c.must(http.StatusNoContent, "DELETE", routes+"/"+rt.ID, nil, nil)
	c.must(http.StatusNoContent, "DELETE", routes+"/"+v6.ID, nil, nil)
	c.apiError(http.StatusNotFound, "DELETE", routes+"/"+rt.ID, nil)
	c.must(http.StatusNoContent, "DELETE", "/v1/networks/"+n.ID, nil, nil)
	c.apiError(http.StatusNotFound, "GET", "/v1/networks/"+n.ID, nil)
}

func TestInstancesUseFirstNetworkOrDefaultPool(t *testing.T) {
	seed := `
regions:
- name: r1
  zones: [r1a]
- name: r2
  zones: [r2a]
networks:
- {name: first, region: r1, cidr: 172.16.0.0/24}
`
	sim := simtest.Start(t, simtest.WithSeed(mustSeed(t, seed)))
	c := control(t, sim)
	c.must(http.StatusCreated, "POST", "/v1/networks", exampleapi.CreateNetworkRequest{Name: "second", Region: "r1", CIDR: "172.17.0.0/24"}, nil)
	if inst := c.createInstance(instanceReq("a", "r1a")); inst.PrivateIPv4 != "172.16.0.1" {
		t.Errorf("r1 private address %s, want 172.16.0.1 from the first network", inst.PrivateIPv4)
	}
	if inst := c.createInstance(instanceReq("a", "r2a")); inst.PrivateIPv4 != "10.0.0.1" {
		t.Errorf("r2 (no network) private address %s, want 10.0.0.1", inst.PrivateIPv4)
	}
}
