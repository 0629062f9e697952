package simulator_test

import (
	"net/http"
	"path/filepath"
	"strings"
	"testing"

	"github.com/example/cloud-provider-example/exampleapi"
	"github.com/example/cloud-provider-example/simulator"
	"github.com/example/cloud-provider-example/simulator/simtest"
)

const demoSeed = `
regions:
- name: ex-west-1
  zones: [ex-west-1a, ex-west-1b]
networks:
- name: cluster
  region: ex-west-1
  cidr: 10.20.0.0/16
  ipv6_cidr: fd00:20::/48
instances:
- name: cp-1
  zone: ex-west-1a
  type: standard-2
  tags: {role: control-plane}
- name: worker-1
  zone: ex-west-1b
  type: standard-4
  state: stopped
  private_ipv4: 10.20.0.50
`

func TestSeedIsAppliedIdempotently(t *testing.T) {
	seed := mustSeed(t, demoSeed)
	sim := simtest.Start(t, simtest.WithSeed(seed))
	c := control(t, sim)
	before := c.listInstances("")
	if len(before) != 2 {
		t.Fatalf("seeded instances %+v", before)
	}
	for _, inst := range before {
		switch inst.Name {
		case "cp-1":
			if inst.PrivateIPv4 != "10.20.0.1" || inst.IPv6 == "" || inst.Tags["role"] != "control-plane" || inst.State != "running" {
				t.Errorf("cp-1 %+v", inst)
			}
		case "worker-1":
			if inst.PrivateIPv4 != "10.20.0.50" || inst.State != "stopped" {
				t.Errorf("worker-1 %+v", inst)
			}
		}
	}
	var regions exampleapi.ListResponse[exampleapi.Region]
	c.must(http.StatusOK, "GET", "/v1/regions", nil, &regions)
	if len(regions.Items) != 1 {
		t.Errorf("with a seed, only its regions exist: %+v", regions.Items)
	}

	// Restart on the same state with the same seed (plus a new zone):
	// nothing is duplicated, existing objects are left alone.
	c.must(http.StatusOK, "PUT", "/v1/instances/"+before[0].ID+"/tags", exampleapi.UpdateInstanceTagsRequest{Tags: map[string]string{"kept": "yes"}}, nil)
	sim.Stop()
	seed.Regions[0].Zones = append(seed.Regions[0].Zones, "ex-west-1c")
	sim = simtest.Start(t, simtest.WithSeed(seed), simtest.WithDataDir(sim.DataDir))
	c = control(t, sim)
	if after := c.listInstances(""); len(after) != 2 || after[0].ID != before[0].ID || after[0].Tags["kept"] != "yes" {
		t.Errorf("after restart with the seed: %+v", after)
	}
	var zones exampleapi.ListResponse[exampleapi.Zone]
	c.must(http.StatusOK, "GET", "/v1/zones", nil, &zones)
	if len(zones.Items) != 3 {
		t.Errorf("zones after adding one to the seed: %+v", zones.Items)
	}
	// Without a seed a non-empty store is left as it is.
	sim.Stop()
	sim = simtest.Start(t, simtest.WithDataDir(sim.DataDir))
	regions = exampleapi.ListResponse[exampleapi.Region]{}
	control(t, sim).must(http.StatusOK, "GET", "/v1/regions", nil, &regions)
	if len(regions.Items) != 1 {
		t.Errorf("default seed applied to an existing store: %+v", regions.Items)
	}
}

func TestSeedErrors(t *testing.T) {
	for name, tc := range map[string]struct{ yaml, want string }{
		"unknown field":       {"regions: [{name: r, zones: [z]}]\ninstances: [{name: a, zone: z, type: standard-1, colour: red}]", "colour"},
		"unknown zone":        {"regions: [{name: r, zones: [z]}]\ninstances: [{name: a, zone: nope, type: standard-1}]", `instances[0]: zone: unknown zone "nope"`},
		"bad cidr":            {"regions: [{name: r, zones: [z]}]\nnetworks: [{name: n, region: r, cidr: 10.0.0.1/16}]", "networks[0]: cidr"},
		"unknown region":      {"regions: [{name: r, zones: [z]}]\nnetworks: [{name: n, region: q, cidr: 10.0.0.0/16}]", `unknown region "q"`},
		"zone in two regions": {"regions: [{name: r, zones: [z]}, {name: q, zones: [z]}]", "zone z already belongs to region r"},
		"region without zone": {"regions: [{name: r}]", "has no zones"},
		"bad instance type":   {"regions: [{name: r, zones: [z]}]\ninstances: [{name: a, zone: z, type: big}]", `instances[0]: type`},
	} {
		t.Run(name, func(t *testing.T) {
			seed, err := simulator.ParseSeed([]byte(tc.yaml))
			if err == nil {
				_, err = simulator.New(simulator.Config{DataDir: t.TempDir(), Token: "t", Seed: seed})
			}
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %v, want one containing %q", err, tc.want)
			}
		})
	}
}

func TestDemoSeedFileLoads(t *testing.T) {
	path := filepath.Join("..", "hack", "seed-demo.yaml")
	seed, err := simulator.LoadSeed(path)
	if err != nil {
		t.Fatal(err)
	}
	sim := simtest.Start(t, simtest.WithSeed(seed))
	if n := len(control(t, sim).listInstances("")); n != 3 {
		t.Errorf("demo seed has %d instances, want 3", n)
	}
}

func TestPersistenceAcrossRestart(t *testing.T) {
	sim := simtest.Start(t, simtest.WithProvisionDelay(0))
	c := control(t, sim)
	inst := c.createInstance(instanceReq("n1", "ex-west-1a"))
	lb := c.lbs().create(lbSpec("web"))
	sim.Stop()

	sim = simtest.Start(t, simtest.WithDataDir(sim.DataDir))
	c = control(t, sim)
	var got exampleapi.Instance
	c.must(http.StatusOK, "GET", "/v1/instances/"+inst.ID, nil, &got)
	if got.PrivateIPv4 != inst.PrivateIPv4 || got.Version != 1 {
		t.Errorf("instance after restart %+v", got)
	}
	if l := c.lbs().get(lb.ID); l.Status != exampleapi.LBStatusActive || l.IPv4 != lb.IPv4 {
		t.Errorf("load balancer after restart %+v", l)
	}
	// Pools and uniqueness survive too.
	if next := c.createInstance(instanceReq("n2", "ex-west-1a")); next.PrivateIPv4 == inst.PrivateIPv4 {
		t.Errorf("address %s handed out twice", next.PrivateIPv4)
	}
	c.apiError(http.StatusConflict, "POST", "/v1/load-balancers", lbSpec("web"))
}

func TestDataDirIsLocked(t *testing.T) {
	t.Parallel() // waits for the lock timeout
	sim := simtest.Start(t)
	_, err := simulator.New(simulator.Config{DataDir: sim.DataDir, Token: "t"})
	if err == nil || !strings.Contains(err.Error(), "locked") {
		t.Fatalf("second simulator on one data dir: %v", err)
	}
}

func TestConfigErrors(t *testing.T) {
	if _, err := simulator.New(simulator.Config{DataDir: t.TempDir()}); err == nil {
		t.Error("no token accepted")
	}
	if _, err := simulator.New(simulator.Config{DataDir: t.TempDir(), Token: "a", ReadOnlyToken: "a"}); err == nil {
		t.Error("equal tokens accepted")
	}
	if _, err := simulator.New(simulator.Config{DataDir: t.TempDir(), Token: "a", Faults: exampleapi.Faults{DropRate: 3}}); err == nil {
		t.Error("drop rate 3 accepted")
	}
}
