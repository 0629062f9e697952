package ccm

import (
	"strings"
	"testing"
	"time"

	cloudprovider "k8s.io/cloud-provider"

	"github.com/example/cloud-provider-example/exampleapi"
	"github.com/example/cloud-provider-example/simulator/simtest"
)

func TestZones(t *testing.T) {
	t.Parallel()
	e := newInstEnv(t, time.Minute, simtest.WithSelfInstance("node-a"))
	self := e.create(t, exampleapi.CreateInstanceRequest{Name: "node-a", Zone: "ex-west-1b"})
	e.create(t, exampleapi.CreateInstanceRequest{Name: "node-c", Zone: "ex-west-1c"})
	ctx := t.Context()
	b := cloudprovider.Zone{FailureDomain: "ex-west-1b", Region: "ex-west-1"}
	c := cloudprovider.Zone{FailureDomain: "ex-west-1c", Region: "ex-west-1"}

	if z, err := e.inst.GetZone(ctx); err != nil || z != b {
		t.Errorf("GetZone = %+v, %v; want %+v", z, err, b)
	}
	if z, err := e.inst.GetZoneByProviderID(ctx, "example://ex-west-1/"+self.ID); err != nil || z != b {
		t.Errorf("GetZoneByProviderID = %+v, %v; want %+v", z, err, b)
	}
	if z, err := e.inst.GetZoneByNodeName(ctx, "node-c"); err != nil || z != c {
		t.Errorf("GetZoneByNodeName = %+v, %v; want %+v", z, err, c)
	}
	if _, err := e.inst.GetZoneByNodeName(ctx, "nope"); err == nil || !strings.Contains(err.Error(), "zone of node nope") {
		t.Errorf("GetZoneByNodeName(missing) = %v; want an error naming the node", err)
	}
	// Self is cached like any lookup.
	before := e.requests()
	if _, err := e.inst.GetZone(ctx); err != nil {
		t.Fatal(err)
	}
	if e.requests() != before {
		t.Error("a second GetZone within the TTL called the API")
	}
}

func TestGetZoneWithoutSelf(t *testing.T) {
	t.Parallel()
	e := newInstEnv(t, time.Minute) // no --self-instance
	if _, err := e.inst.GetZone(t.Context()); err == nil || !strings.Contains(err.Error(), "/v1/self") {
		t.Errorf("GetZone without a self instance = %v; want an error", err)
	}
}
