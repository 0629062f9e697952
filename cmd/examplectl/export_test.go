package main

import (
	"slices"
	"testing"

	"github.com/example/cloud-provider-example/exampleapi"
	"github.com/example/cloud-provider-example/internal/testkit"
	"github.com/example/cloud-provider-example/renderer"
	"github.com/example/cloud-provider-example/simulator/simtest"
)

// What export takes over, read from a simulated cloud: the load balancer
// and the reserved address of the Service's namespace it holds; one of
// another namespace of this cluster (held through that namespace's
// ReferenceGrant) is left out, to be said, as the hand-over leaves it
// with its owner (docs/addresses.md). An address of no namespace is not
// left out: withAddress refuses it as not the controller's.
func TestExportTargetsLeaveOthersAddresses(t *testing.T) {
	sim := simtest.Start(t, simtest.WithProvisionDelay(0))
	t.Setenv(envToken, sim.Token)
	api, err := exampleapi.New(exampleapi.Options{Endpoint: sim.URL, Token: sim.Token})
	testkit.Must(t, err)
	ctx := testkit.Context(t)
	const region, cluster = "ex-west-1", "c1"
	tags := map[string]string{exampleapi.TagClusterID: cluster, exampleapi.TagNamespace: "shop"}
	newLB := func(name string) string {
		lb, err := api.CreateLoadBalancer(ctx, exampleapi.LoadBalancerSpec{
			Name: name, Region: region, IPFamily: exampleapi.IPFamilyDualStack,
			LoadBalancerSettings: exampleapi.LoadBalancerSettings{
				Type: "lb-small", Algorithm: exampleapi.AlgorithmRoundRobin,
				Listeners: []exampleapi.Listener{{Protocol: "tcp", Port: 80, TargetPort: 30080}}, Tags: tags,
			},
		})
		testkit.Must(t, err)
		return lb.ID
	}
	address := func(name, family, lbID, ns string) *exampleapi.Address {
		at := map[string]string{exampleapi.TagClusterID: cluster}
		if ns != "" {
			at[exampleapi.TagNamespace] = ns
		}
		a, err := api.CreateAddress(ctx, exampleapi.CreateAddressRequest{Name: name, Region: region, Family: family, LoadBalancerID: lbID, Tags: at})
		testkit.Must(t, err)
		return a
	}
	ids := func(targets []importTarget) []string {
		var out []string
		for _, tg := range targets {
			out = append(out, tg.to+"="+tg.id)
		}
		return out
	}

	both := newLB("both")
	granted := address("granted", exampleapi.AddressFamilyIPv4, both, "team-b")
	own := address("own", exampleapi.AddressFamilyIPv6, both, "shop")
	ex := &exported{endpoint: sim.URL, tags: tags}
	targets, err := exportTargets(ctx, ex, both, "shop")
	testkit.Must(t, err)
	if want := []string{renderer.LoadBalancerAddress + "=" + both, renderer.AddressResource + "=" + own.ID}; !slices.Equal(ids(targets), want) {
		t.Errorf("targets %v, want %v", ids(targets), want)
	}
	if ex.address == nil || ex.address.ID != own.ID || len(ex.leftOut) != 1 || ex.leftOut[0].ID != granted.ID {
		t.Errorf("address %+v, left out %+v; want %s exported, %s left out", ex.address, ex.leftOut, own.ID, granted.ID)
	}

	alone := newLB("alone")
	address("granted-alone", exampleapi.AddressFamilyIPv4, alone, "team-b")
	ex = &exported{endpoint: sim.URL, tags: tags}
	targets, err = exportTargets(ctx, ex, alone, "shop")
	testkit.Must(t, err)
	if want := []string{renderer.LoadBalancerAddress + "=" + alone}; !slices.Equal(ids(targets), want) || ex.address != nil || len(ex.leftOut) != 1 {
		t.Errorf("targets %v, address %+v, left out %d; want the load balancer alone, one address left out", ids(targets), ex.address, len(ex.leftOut))
	}

	untagged := newLB("untagged")
	address("nobodys", exampleapi.AddressFamilyIPv4, untagged, "")
	ex = &exported{endpoint: sim.URL, tags: tags}
	_, err = exportTargets(ctx, ex, untagged, "shop")
	testkit.Must(t, err)
	if ex.address == nil || len(ex.leftOut) != 0 {
		t.Errorf("an address of no namespace: address %+v, left out %+v; want it taken, for withAddress to refuse", ex.address, ex.leftOut)
	}
}
