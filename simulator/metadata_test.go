package simulator_test

import (
	"net/http"
	"reflect"
	"testing"

	"github.com/example/cloud-provider-example/exampleapi"
	"github.com/example/cloud-provider-example/simulator/simtest"
)

func TestMetadataAPI(t *testing.T) {
	sim := simtest.Start(t, simtest.WithSelfInstance("node-1"))
	c := control(t, sim)
	req := instanceReq("node-1", "ex-west-1c")
	req.Tags = map[string]string{"k": "v"}
	inst := c.createInstance(req)
	other := c.createInstance(instanceReq("node-2", "ex-west-1a"))
	m := metadata(t, sim)

	var md exampleapi.InstanceMetadata
	m.must(http.StatusOK, "GET", "/v1/instances/"+inst.ID, nil, &md)
	want := exampleapi.InstanceMetadata{ID: inst.ID, Name: "node-1", Type: inst.Type, Region: "ex-west-1", Zone: "ex-west-1c",
		State: "running", PrivateIPv4: inst.PrivateIPv4, PublicIPv4: inst.PublicIPv4, IPv6: inst.IPv6, Hostname: "node-1"}
	if md.Tags["k"] != "v" {
		t.Errorf("tags %v", md.Tags)
	}
	want.Tags = md.Tags
	if !reflect.DeepEqual(md, want) {
		t.Errorf("metadata\n got %+v\nwant %+v", md, want)
	}

	var p exampleapi.Placement
	m.must(http.StatusOK, "GET", "/v1/instances/"+other.ID+"/placement", nil, &p)
	if p != (exampleapi.Placement{Region: "ex-west-1", Zone: "ex-west-1a"}) {
		t.Errorf("placement %+v", p)
	}
	md = exampleapi.InstanceMetadata{}
	m.must(http.StatusOK, "GET", "/v1/instances/by-name/node-2", nil, &md)
	if md.ID != other.ID {
		t.Errorf("by-name found %s, want %s", md.ID, other.ID)
	}
	md = exampleapi.InstanceMetadata{}
	m.must(http.StatusOK, "GET", "/v1/self", nil, &md)
	if md.ID != inst.ID {
		t.Errorf("self is %s, want %s", md.ID, inst.ID)
	}
	m.must(http.StatusOK, "GET", "/v1/self/placement", nil, &p)
	if p.Zone != "ex-west-1c" {
		t.Errorf("self placement %+v", p)
	}

	// The same name in two regions is ambiguous unless the region is given.
	east := c.createInstance(instanceReq("node-1", "ex-east-1a"))
	m.apiError(http.StatusConflict, "GET", "/v1/instances/by-name/node-1", nil)
	md = exampleapi.InstanceMetadata{}
	m.must(http.StatusOK, "GET", "/v1/instances/by-name/node-1?region=ex-east-1", nil, &md)
	if md.ID != east.ID {
		t.Errorf("by-name in ex-east-1 found %s, want %s", md.ID, east.ID)
	}
	m.apiError(http.StatusNotFound, "GET", "/v1/instances/by-name/nobody", nil)
	m.apiError(http.StatusNotFound, "GET", "/v1/instances/i-nope", nil)
	m.apiError(http.StatusNotFound, "GET", "/v1/instances/i-nope/placement", nil)
	m.apiError(http.StatusNotFound, "GET", "/v1/instances/"+inst.ID+"/other", nil)
	// The metadata API is read-only.
	m.apiError(http.StatusNotFound, "POST", "/v1/instances", instanceReq("x", "ex-west-1a"))
}

func TestMetadataSelfByIDAndUnset(t *testing.T) {
	sim := simtest.Start(t)
	m := metadata(t, sim)
	if e := m.apiError(http.StatusNotFound, "GET", "/v1/self", nil); e.Code != exampleapi.CodeNotFound {
		t.Errorf("code %q", e.Code)
	}
	m.apiError(http.StatusNotFound, "GET", "/v1/self/placement", nil)

	dir := sim.DataDir
	inst := control(t, sim).createInstance(instanceReq("node-9", "ex-east-1a"))
	sim.Stop()
	sim = simtest.Start(t, simtest.WithDataDir(dir), simtest.WithSelfInstance(inst.ID))
	var md exampleapi.InstanceMetadata
	metadata(t, sim).must(http.StatusOK, "GET", "/v1/self", nil, &md)
	if md.Name != "node-9" {
		t.Errorf("self %+v", md)
	}
}
