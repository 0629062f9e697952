package simulator_test

import (
	"fmt"
	"net/http"
	"net/netip"
	"testing"

	"github.com/example/cloud-provider-example/exampleapi"
	"github.com/example/cloud-provider-example/simulator/simtest"
)

func TestInstanceLifecycle(t *testing.T) {
	c := startControl(t)

	req := instanceReq("node-1", "ex-west-1b")
	req.Tags = map[string]string{"role": "worker"}
	var inst exampleapi.Instance
	resp := c.must(http.StatusCreated, "POST", "/v1/instances", req, &inst)
	if got := resp.header.Get("ETag"); got != `"1"` {
		t.Errorf("ETag %q, want \"1\"", got)
	}
	if got := resp.header.Get("Location"); got != "/v1/instances/"+inst.ID {
		t.Errorf("Location %q", got)
	}
	if resp.header.Get("X-Request-Id") == "" {
		t.Error("no X-Request-Id")
	}
	if inst.Region != "ex-west-1" || inst.State != exampleapi.InstanceRunning || inst.Version != 1 || inst.CreatedAt.IsZero() {
		t.Errorf("unexpected instance %+v", inst)
	}
	// Addresses come from the pools: the default network of ex-west-1,
	// 198.51.100.0/24 and the network's IPv6 CIDR.
	for addr, prefix := range map[string]string{inst.PrivateIPv4: "10.0.0.0/16", inst.PublicIPv4: "198.51.100.0/24", inst.IPv6: "fd00:10::/48"} {
		if a, err := netip.ParseAddr(addr); err != nil || !netip.MustParsePrefix(prefix).Contains(a) {
			t.Errorf("address %q not in %s", addr, prefix)
		}
	}

	var got exampleapi.Instance
	resp = c.must(http.StatusOK, "GET", "/v1/instances/"+inst.ID, nil, &got)
	if got.ID != inst.ID || got.Tags["role"] != "worker" || resp.header.Get("ETag") != `"1"` {
		t.Errorf("GET = %+v, ETag %q", got, resp.header.Get("ETag"))
	}

	got = exampleapi.Instance{}
	c.must(http.StatusOK, "PUT", "/v1/instances/"+inst.ID+"/tags", exampleapi.UpdateInstanceTagsRequest{Tags: map[string]string{"a": "1"}}, &got)
	if got.Version != 2 || len(got.Tags) != 1 || got.Tags["a"] != "1" {
		t.Errorf("after tags: %+v", got)
	}
	resp = c.must(http.StatusOK, "PUT", "/v1/instances/"+inst.ID+"/state", exampleapi.SetInstanceStateRequest{State: "stopped"}, &got, "If-Match", `"2"`)
	if got.Version != 3 || got.State != "stopped" || resp.header.Get("ETag") != `"3"` {
		t.Errorf("after state: %+v", got)
	}

	c.must(http.StatusNoContent, "DELETE", "/v1/instances/"+inst.ID, nil, nil)
	if e := c.apiError(http.StatusNotFound, "GET", "/v1/instances/"+inst.ID, nil); e.Code != exampleapi.CodeNotFound {
		t.Errorf("code %q", e.Code)
	}
	c.apiError(http.StatusNotFound, "DELETE", "/v1/instances/"+inst.ID, nil)
	// The name is free again.
	c.createInstance(instanceReq("node-1", "ex-west-1b"))
}

func TestIfMatch(t *testing.T) {
	c := startControl(t)
	inst := c.createInstance(instanceReq("node-1", "ex-west-1a"))
	tags := exampleapi.UpdateInstanceTagsRequest{Tags: map[string]string{"k": "v"}}

	e := c.apiError(http.StatusPreconditionFailed, "PUT", "/v1/instances/"+inst.ID+"/tags", tags, "If-Match", `"7"`)
	if e.Code != exampleapi.CodePreconditionFailed {
		t.Errorf("code %q", e.Code)
	}
	c.must(http.StatusOK, "PUT", "/v1/instances/"+inst.ID+"/tags", tags, nil, "If-Match", `"1"`)
	// The version moved on: the old ETag is stale now.
	c.apiError(http.StatusPreconditionFailed, "PUT", "/v1/instances/"+inst.ID+"/state", exampleapi.SetInstanceStateRequest{State: "stopped"}, "If-Match", `"1"`)
	c.apiError(http.StatusPreconditionFailed, "DELETE", "/v1/instances/"+inst.ID, nil, "If-Match", `"1"`)

	lb := c.lbs().create(lbSpec("web"))
	upd := exampleapi.UpdateLoadBalancerRequest{Listeners: lbSpec("").Listeners, Algorithm: "source_ip"}
	c.apiError(http.StatusPreconditionFailed, "PUT", "/v1/load-balancers/"+lb.ID, upd, "If-Match", `"2"`)
	var got exampleapi.LoadBalancer
	resp := c.must(http.StatusOK, "PUT", "/v1/load-balancers/"+lb.ID, upd, &got, "If-Match", `"1"`)
	if got.Version != 2 || got.Algorithm != "source_ip" || resp.header.Get("ETag") != `"2"` || !got.UpdatedAt.After(got.CreatedAt) {
		t.Errorf("after update: %+v, ETag %q", got, resp.header.Get("ETag"))
	}
	// Without If-Match the write is unconditional.
	c.must(http.StatusOK, "PUT", "/v1/load-balancers/"+lb.ID, upd, nil)
}

func TestInstanceNamesUniquePerRegion(t *testing.T) {
	c := startControl(t)
	c.createInstance(instanceReq("node-1", "ex-west-1a"))
	if e := c.apiError(http.StatusConflict, "POST", "/v1/instances", instanceReq("node-1", "ex-west-1c")); e.Code != exampleapi.CodeConflict {
		t.Errorf("code %q", e.Code)
	}
	// Another region may reuse the name.
	c.createInstance(instanceReq("node-1", "ex-east-1a"))
}

func TestInstanceFilters(t *testing.T) {
	c := startControl(t)
	for i, zone := range []string{"ex-west-1a", "ex-west-1b", "ex-east-1a"} {
		req := instanceReq(fmt.Sprintf("node-%d", i), zone)
		req.Tags = map[string]string{"cluster": "c1", "idx": fmt.Sprint(i)}
		if i == 2 {
			req.Tags = map[string]string{"other": ""}
		}
		c.createInstance(req)
	}
	for query, want := range map[string]int{
		"":                          3,
		"region=ex-west-1":          2,
		"zone=ex-west-1b":           1,
		"name=node-2":               1,
		"name=node-9":               0,
		"tag=cluster=c1":            2,
		"tag=cluster":               2,
		"tag=other":                 1,
		"tag=cluster=c1&tag=idx=1":  1,
		"tag=cluster=c2":            0,
		"region=ex-east-1&tag=idx":  0,
		"region=ex-west-1&tag=idx=": 0,
	} {
		if got := len(c.listInstances(query)); got != want {
			t.Errorf("?%s: %d instances, want %d", query, got, want)
		}
	}
}

func TestInstanceGivenAddresses(t *testing.T) {
	c := startControl(t)
	req := instanceReq("node-1", "ex-west-1a")
	req.PrivateIPv4, req.PublicIPv4, req.IPv6 = "10.0.0.1", "192.0.2.10", "fd00:10::99"
	inst := c.createInstance(req)
	if inst.PrivateIPv4 != "10.0.0.1" || inst.PublicIPv4 != "192.0.2.10" || inst.IPv6 != "fd00:10::99" {
		t.Fatalf("addresses not kept: %+v", inst)
	}
	// The reserved private address is skipped by allocation ...
	next := c.createInstance(instanceReq("node-2", "ex-west-1a"))
	if next.PrivateIPv4 != "10.0.0.2" {
		t.Errorf("next private address %s, want 10.0.0.2", next.PrivateIPv4)
	}
	// ... and cannot be taken twice.
	dup := instanceReq("node-3", "ex-west-1a")
	dup.PrivateIPv4 = "10.0.0.2"
	c.apiError(http.StatusConflict, "POST", "/v1/instances", dup)
	// Deleting gives the address back.
	c.must(http.StatusNoContent, "DELETE", "/v1/instances/"+inst.ID, nil, nil)
	if again := c.createInstance(instanceReq("node-4", "ex-west-1a")); again.PrivateIPv4 != "10.0.0.1" {
		t.Errorf("freed address not reused: got %s", again.PrivateIPv4)
	}
	// ex-east-1's network has no IPv6 CIDR: no IPv6 address.
	if east := c.createInstance(instanceReq("node-1", "ex-east-1a")); east.IPv6 != "" || netip.MustParseAddr(east.PrivateIPv4).String() != "10.1.0.1" {
		t.Errorf("east instance %+v", east)
	}
}

func TestRegionsAndZones(t *testing.T) {
	c := startControl(t)
	var regions exampleapi.ListResponse[exampleapi.Region]
	c.must(http.StatusOK, "GET", "/v1/regions", nil, &regions)
	if len(regions.Items) != 2 || regions.Items[0].Name != "ex-east-1" || len(regions.Items[1].Zones) != 3 {
		t.Errorf("regions %+v", regions)
	}
	var zones exampleapi.ListResponse[exampleapi.Zone]
	c.must(http.StatusOK, "GET", "/v1/zones?region=ex-west-1", nil, &zones)
	if len(zones.Items) != 3 || zones.Items[0] != (exampleapi.Zone{Name: "ex-west-1a", Region: "ex-west-1"}) {
		t.Errorf("zones %+v", zones)
	}
	zones = exampleapi.ListResponse[exampleapi.Zone]{}
	c.must(http.StatusOK, "GET", "/v1/zones?page_size=2", nil, &zones)
	if len(zones.Items) != 2 || zones.NextPageToken == "" {
		t.Errorf("first zone page %+v", zones)
	}
	token := zones.NextPageToken
	zones = exampleapi.ListResponse[exampleapi.Zone]{}
	c.must(http.StatusOK, "GET", "/v1/zones?page_size=2&page_token="+token, nil, &zones)
	if len(zones.Items) != 2 || zones.NextPageToken != "" {
		t.Errorf("last zone page %+v", zones)
	}
	// Regions are read-only.
	c.apiError(http.StatusNotFound, "POST", "/v1/regions", `{"name":"x"}`)
}

func TestUnknownEndpoint(t *testing.T) {
	sim := simtest.Start(t)
	e := control(t, sim).apiError(http.StatusNotFound, "PATCH", "/v1/instances/i-1", nil)
	if e.Code != exampleapi.CodeNotFound {
		t.Errorf("code %q", e.Code)
	}
	control(t, sim).apiError(http.StatusNotFound, "GET", "/v2/nothing", nil)
}
