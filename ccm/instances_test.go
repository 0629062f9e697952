package ccm

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	cloudprovider "k8s.io/cloud-provider"

	"github.com/example/cloud-provider-example/cloudconfig"
	"github.com/example/cloud-provider-example/exampleapi"
	"github.com/example/cloud-provider-example/providerid"
	"github.com/example/cloud-provider-example/simulator/simtest"
)

// instEnv is a simulator, a control client to shape it, and instances
// reading its metadata API with every operation counted. The cache runs on
// a fake clock: tests step over TTLs instead of sleeping through them.
type instEnv struct {
	sim   *simtest.Sim
	api   *exampleapi.Client
	inst  *instances
	clock *cacheClock
	mu    sync.Mutex
	calls map[string]int
}

func newInstEnv(t *testing.T, ttl time.Duration, opts ...simtest.Option) *instEnv {
	t.Helper()
	e := &instEnv{sim: simtest.Start(t, opts...), calls: map[string]int{}}
	api, err := exampleapi.New(exampleapi.Options{Endpoint: e.sim.URL, Token: e.sim.Token})
	if err != nil {
		t.Fatal(err)
	}
	md, err := exampleapi.NewMetadata(exampleapi.Options{
		Endpoint: e.sim.MetadataURL, Token: e.sim.ReadOnlyToken,
		RetryMax: -1, // surface a 429 at once instead of waiting out Retry-After
		Observe: func(op string, _ int, _ time.Duration) {
			e.mu.Lock()
			defer e.mu.Unlock()
			e.calls[op]++
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	e.api, e.inst = api, newInstances(md, "ex-west-1", ttl)
	e.clock = &cacheClock{t: time.Now()}
	e.inst.cache.now = e.clock.now
	return e
}

// requests is the number of metadata API operations so far.
func (e *instEnv) requests() int {
	e.mu.Lock()
	defer e.mu.Unlock()
	n := 0
	for _, c := range e.calls {
		n += c
	}
	return n
}

func (e *instEnv) create(t *testing.T, req exampleapi.CreateInstanceRequest) *exampleapi.Instance {
	t.Helper()
	if req.Type == "" {
		req.Type = "standard-4"
	}
	if req.Zone == "" {
		req.Zone = "ex-west-1a"
	}
	inst, err := e.api.CreateInstance(t.Context(), req)
	if err != nil {
		t.Fatalf("create instance %s: %v", req.Name, err)
	}
	return inst
}

func nodeNamed(name, providerID string) *v1.Node {
	return &v1.Node{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: v1.NodeSpec{ProviderID: providerID}}
}

func TestInstanceMetadataByProviderIDAndName(t *testing.T) {
	t.Parallel()
	e := newInstEnv(t, time.Minute)
	inst := e.create(t, exampleapi.CreateInstanceRequest{
		Name: "node-a", Zone: "ex-west-1b",
		PrivateIPv4: "10.0.0.20", PublicIPv4: "198.51.100.20", IPv6: "fd00:10::20",
	})
	pid := "example://ex-west-1/" + inst.ID
	want := &cloudprovider.InstanceMetadata{
		ProviderID:   pid,
		InstanceType: "standard-4",
		NodeAddresses: []v1.NodeAddress{
			{Type: v1.NodeInternalIP, Address: "10.0.0.20"},
			{Type: v1.NodeInternalIP, Address: "fd00:10::20"},
			{Type: v1.NodeExternalIP, Address: "198.51.100.20"},
			{Type: v1.NodeHostName, Address: "node-a"},
		},
		Zone:   "ex-west-1b",
		Region: "ex-west-1",
		AdditionalLabels: map[string]string{
			LabelInstanceID:     inst.ID,
			LabelInstanceFamily: "standard",
		},
	}
	for _, node := range []*v1.Node{nodeNamed("node-a", ""), nodeNamed("renamed-node", pid)} {
		got, err := e.inst.InstanceMetadata(t.Context(), node)
		if err != nil {
			t.Fatalf("InstanceMetadata(%s, %q): %v", node.Name, node.Spec.ProviderID, err)
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("InstanceMetadata(%s, %q) =\n%+v\nwant\n%+v", node.Name, node.Spec.ProviderID, got, want)
		}
	}
}

func TestInstancesV1(t *testing.T) {
	t.Parallel()
	e := newInstEnv(t, time.Minute)
	inst := e.create(t, exampleapi.CreateInstanceRequest{Name: "node-a", Type: "highmem-4"})
	ctx, pid := t.Context(), "example://ex-west-1/"+inst.ID

	byName, err := e.inst.NodeAddresses(ctx, "node-a")
	if err != nil {
		t.Fatal(err)
	}
	byPID, err := e.inst.NodeAddressesByProviderID(ctx, pid)
	if err != nil {
		t.Fatal(err)
	}
	// The seeded ex-west-1 network is dual-stack and public IPv4 is
	// allocated by default: all four addresses are there.
	want := []v1.NodeAddress{
		{Type: v1.NodeInternalIP, Address: inst.PrivateIPv4},
		{Type: v1.NodeInternalIP, Address: inst.IPv6},
		{Type: v1.NodeExternalIP, Address: inst.PublicIPv4},
		{Type: v1.NodeHostName, Address: "node-a"},
	}
	if inst.IPv6 == "" || inst.PublicIPv4 == "" {
		t.Fatalf("simulator allocated no IPv6 or public IPv4: %+v", inst)
	}
	if !reflect.DeepEqual(byName, want) || !reflect.DeepEqual(byPID, want) {
		t.Errorf("addresses by name %v, by providerID %v; want %v", byName, byPID, want)
	}

	// The upstream helper builds the providerID from InstanceID.
	gotPID, err := cloudprovider.GetInstanceProviderID(ctx, fakeCloud{e.inst}, "node-a")
	if err != nil || gotPID != pid {
		t.Errorf("GetInstanceProviderID = %q, %v; want %q", gotPID, err, pid)
	}
	if _, err := e.inst.InstanceID(ctx, "no-such-node"); !errors.Is(err, cloudprovider.InstanceNotFound) {
		t.Errorf("InstanceID(missing) = %v, want exactly cloudprovider.InstanceNotFound", err)
	}
	if typ, err := e.inst.InstanceType(ctx, "node-a"); err != nil || typ != "highmem-4" {
		t.Errorf("InstanceType = %q, %v", typ, err)
	}
	if typ, err := e.inst.InstanceTypeByProviderID(ctx, pid); err != nil || typ != "highmem-4" {
		t.Errorf("InstanceTypeByProviderID = %q, %v", typ, err)
	}
	if err := e.inst.AddSSHKeyToAllInstances(ctx, "root", []byte("ssh-ed25519 AAAA")); !errors.Is(err, cloudprovider.NotImplemented) {
		t.Errorf("AddSSHKeyToAllInstances = %v, want NotImplemented", err)
	}
	if name, err := e.inst.CurrentNodeName(ctx, "node-a"); err != nil || name != "node-a" {
		t.Errorf("CurrentNodeName = %q, %v", name, err)
	}
	if ok, err := e.inst.InstanceExistsByProviderID(ctx, pid); err != nil || !ok {
		t.Errorf("InstanceExistsByProviderID = %v, %v", ok, err)
	}
	if down, err := e.inst.InstanceShutdownByProviderID(ctx, pid); err != nil || down {
		t.Errorf("InstanceShutdownByProviderID = %v, %v", down, err)
	}
}

// fakeCloud is just enough cloudprovider.Interface for the upstream helpers.
type fakeCloud struct{ inst *instances }

func (f fakeCloud) Initialize(cloudprovider.ControllerClientBuilder, <-chan struct{}) {}
func (f fakeCloud) LoadBalancer() (cloudprovider.LoadBalancer, bool)                  { return nil, false }
func (f fakeCloud) Instances() (cloudprovider.Instances, bool)                        { return f.inst, true }
func (f fakeCloud) InstancesV2() (cloudprovider.InstancesV2, bool)                    { return f.inst, true }
func (f fakeCloud) Zones() (cloudprovider.Zones, bool)                                { return f.inst, true }
func (f fakeCloud) Clusters() (cloudprovider.Clusters, bool)                          { return nil, false }
func (f fakeCloud) Routes() (cloudprovider.Routes, bool)                              { return nil, false }
func (f fakeCloud) ProviderName() string                                              { return ProviderName }
func (f fakeCloud) HasClusterID() bool                                                { return true }

func TestInstanceExistsAfterDelete(t *testing.T) {
	t.Parallel()
	const ttl = 30 * time.Second
	e := newInstEnv(t, ttl)
	inst := e.create(t, exampleapi.CreateInstanceRequest{Name: "node-a"})
	ctx, pid := t.Context(), "example://ex-west-1/"+inst.ID
	nodes := []*v1.Node{nodeNamed("node-a", pid), nodeNamed("node-a", "")}
	for _, n := range nodes {
		if ok, err := e.inst.InstanceExists(ctx, n); err != nil || !ok {
			t.Fatalf("InstanceExists(%q) before delete = %v, %v", n.Spec.ProviderID, ok, err)
		}
	}
	if err := e.api.DeleteInstance(ctx, inst.ID); err != nil {
		t.Fatal(err)
	}
	// Within the TTL the cached answer stands: that is the staleness bound.
	if ok, _ := e.inst.InstanceExists(ctx, nodes[0]); !ok {
		t.Fatal("InstanceExists changed within the TTL: the cache was not used")
	}
	e.clock.advance(ttl)
	for _, n := range nodes {
		if ok, err := e.inst.InstanceExists(ctx, n); err != nil || ok {
			t.Errorf("InstanceExists(%q) after delete and TTL = %v, %v; want false, nil", n.Spec.ProviderID, ok, err)
		}
	}
	if ok, err := e.inst.InstanceExistsByProviderID(ctx, pid); err != nil || ok {
		t.Errorf("InstanceExistsByProviderID after delete = %v, %v; want false, nil", ok, err)
	}
	if down, err := e.inst.InstanceShutdown(ctx, nodes[0]); err != nil || down {
		t.Errorf("InstanceShutdown after delete = %v, %v; want false, nil", down, err)
	}
	_, err := e.inst.InstanceMetadata(ctx, nodes[0])
	if !errors.Is(err, cloudprovider.InstanceNotFound) || !strings.Contains(err.Error(), "node node-a") {
		t.Errorf("InstanceMetadata after delete = %v; want InstanceNotFound naming the node", err)
	}
}

func TestInstanceShutdownAfterStop(t *testing.T) {
	t.Parallel()
	const ttl = 30 * time.Second
	e := newInstEnv(t, ttl)
	inst := e.create(t, exampleapi.CreateInstanceRequest{Name: "node-a"})
	ctx, node := t.Context(), nodeNamed("node-a", "example://ex-west-1/"+inst.ID)
	if down, err := e.inst.InstanceShutdown(ctx, node); err != nil || down {
		t.Fatalf("InstanceShutdown while running = %v, %v", down, err)
	}
	if _, err := e.api.SetInstanceState(ctx, inst.ID, exampleapi.InstanceStopped, 0); err != nil {
		t.Fatal(err)
	}
	if down, _ := e.inst.InstanceShutdown(ctx, node); down {
		t.Fatal("InstanceShutdown changed within the TTL: the cache was not used")
	}
	e.clock.advance(ttl)
	if down, err := e.inst.InstanceShutdown(ctx, node); err != nil || !down {
		t.Errorf("InstanceShutdown after stop = %v, %v; want true", down, err)
	}
	// Stopped is not deleted: the Node must stay.
	if ok, err := e.inst.InstanceExists(ctx, node); err != nil || !ok {
		t.Errorf("InstanceExists after stop = %v, %v; want true", ok, err)
	}
}

func TestForeignProviderIDs(t *testing.T) {
	t.Parallel()
	e := newInstEnv(t, time.Minute)
	ctx := t.Context()
	for _, tc := range []struct{ providerID, want string }{
		{"aws:///us-east-1a/i-0abc", "not an Example cloud providerID"},
		{"example://ex-east-1/i-0abc", "is in region ex-east-1, but this cloud-controller-manager serves region ex-west-1"},
		{"example://ex-west-1", "missing /<instance-id>"},
		{"example://ex-west-1/vm-1", "invalid instance id"},
	} {
		node := nodeNamed("node-a", tc.providerID)
		// An error, never "false": false would delete the Node.
		if ok, err := e.inst.InstanceExists(ctx, node); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("InstanceExists(%q) = %v, %v; want an error containing %q", tc.providerID, ok, err, tc.want)
		}
		if _, err := e.inst.InstanceMetadata(ctx, node); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("InstanceMetadata(%q) = %v; want %q", tc.providerID, err, tc.want)
		}
		if _, err := e.inst.InstanceShutdownByProviderID(ctx, tc.providerID); err == nil {
			t.Errorf("InstanceShutdownByProviderID(%q): no error", tc.providerID)
		}
		if _, err := e.inst.NodeAddressesByProviderID(ctx, tc.providerID); err == nil {
			t.Errorf("NodeAddressesByProviderID(%q): no error", tc.providerID)
		}
		if _, err := e.inst.GetZoneByProviderID(ctx, tc.providerID); err == nil {
			t.Errorf("GetZoneByProviderID(%q): no error", tc.providerID)
		}
	}
	if _, err := e.inst.InstanceExistsByProviderID(ctx, "aws:///us-east-1a/i-0abc"); !errors.Is(err, providerid.ErrNotExample) {
		t.Errorf("InstanceExistsByProviderID(aws) = %v; want ErrNotExample", err)
	}
	if n := e.requests(); n != 0 {
		t.Errorf("%d metadata requests for providerIDs that are not ours", n)
	}
}

func TestNewInstancesFromConfigTokens(t *testing.T) {
	t.Parallel()
	sim := simtest.Start(t, simtest.WithSelfInstance("node-a"))
	api, err := exampleapi.New(exampleapi.Options{Endpoint: sim.URL, Token: sim.Token})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := api.CreateInstance(t.Context(), exampleapi.CreateInstanceRequest{Name: "node-a", Type: "standard-1", Zone: "ex-west-1c"}); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	file := func(name, content string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(content+"\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	ro, rw := file("ro", sim.ReadOnlyToken), file("rw", sim.Token)
	unset := "EXAMPLE_CCM_TEST_UNSET_" + strings.ReplaceAll(t.Name(), "/", "_")
	cfg := func(mdFile, apiFile string) *cloudconfig.Config {
		return &cloudconfig.Config{
			Region:   "ex-west-1",
			API:      cloudconfig.APIConfig{Endpoint: sim.URL, TokenFile: apiFile, TokenEnv: unset},
			Metadata: cloudconfig.MetadataConfig{Endpoint: sim.MetadataURL, TokenFile: mdFile, TokenEnv: unset, CacheTTL: cloudconfig.Duration{Duration: time.Second}},
		}
	}
	for name, c := range map[string]*cloudconfig.Config{
		"read-only token":       cfg(ro, rw),
		"fallback to API token": cfg("", rw),
	} {
		inst, err := newInstancesFromConfig(c)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		zone, err := inst.GetZone(t.Context())
		if err != nil || zone != (cloudprovider.Zone{FailureDomain: "ex-west-1c", Region: "ex-west-1"}) {
			t.Errorf("%s: GetZone = %+v, %v", name, zone, err)
		}
	}
	// A configured but unreadable metadata token must not fall back.
	if _, err := newInstancesFromConfig(cfg(filepath.Join(dir, "missing"), rw)); err == nil {
		t.Error("unreadable metadata.tokenFile: no error")
	}
	if _, err := newInstancesFromConfig(cfg("", "")); err == nil || !strings.Contains(err.Error(), unset) {
		t.Errorf("no token at all = %v; want an error naming $%s", err, unset)
	}
}

func TestNodeAddressesOmitsMissing(t *testing.T) {
	t.Parallel()
	got := nodeAddresses(&exampleapi.InstanceMetadata{PrivateIPv4: "10.1.0.5", Hostname: "n"})
	want := []v1.NodeAddress{{Type: v1.NodeInternalIP, Address: "10.1.0.5"}, {Type: v1.NodeHostName, Address: "n"}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("nodeAddresses = %v, want %v", got, want)
	}
	labels := additionalLabels(&exampleapi.InstanceMetadata{ID: "i-" + strings.Repeat("a", 70), Type: "custom"})
	if len(labels) != 0 {
		t.Errorf("additionalLabels with an over-long id and no family = %v, want none", labels)
	}
}
