package tfprovider

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-exec/tfexec"
	"github.com/hashicorp/terraform-plugin-framework/providerserver"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/tfsdk"
	"github.com/hashicorp/terraform-plugin-go/tfprotov6"

	"github.com/example/cloud-provider-example/exampleapi"
	"github.com/example/cloud-provider-example/internal/tftest"
)

// testdata/state_v0.tfstate.json is a real state written by this provider
// at schema version 0 (listeners as a list), by `terraform apply` against
// the simulator. These are the ids it recorded.
const (
	v0StateLBID       = "lb-f262980357b18146"
	v0StateInstanceID = "i-06454b2fd74ff424"
)

// v0Attributes is the load balancer's attributes from the version 0 state,
// with the recorded ids replaced.
func v0Attributes(t *testing.T, lbID, instanceID string) (state []byte, attrs json.RawMessage) {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join("testdata", "state_v0.tfstate.json"))
	if err != nil {
		t.Fatal(err)
	}
	state = []byte(strings.NewReplacer(v0StateLBID, lbID, v0StateInstanceID, instanceID).Replace(string(raw)))
	var st struct {
		Resources []struct {
			Instances []struct {
				SchemaVersion int             `json:"schema_version"`
				Attributes    json.RawMessage `json:"attributes"`
			} `json:"instances"`
		} `json:"resources"`
	}
	if err := json.Unmarshal(state, &st); err != nil {
		t.Fatal(err)
	}
	inst := st.Resources[0].Instances[0]
	if inst.SchemaVersion != 0 {
		t.Fatalf("fixture has schema version %d, want 0", inst.SchemaVersion)
	}
	return state, inst.Attributes
}

// TestUpgradeLoadBalancerStateV0: the list of listeners becomes the map
// keyed "<protocol>/<port>"; every other attribute is kept, and
// attributes added since read as null.
func TestUpgradeLoadBalancerStateV0(t *testing.T) {
	ctx := context.Background()
	_, attrs := v0Attributes(t, v0StateLBID, v0StateInstanceID)
	var sr resource.SchemaResponse
	(&loadBalancerResource{}).Schema(ctx, resource.SchemaRequest{}, &sr)
	if sr.Schema.Version != 1 {
		t.Fatalf("schema version %d, want 1", sr.Schema.Version)
	}
	upgrader, ok := (&loadBalancerResource{}).UpgradeState(ctx)[0]
	if !ok {
		t.Fatal("no upgrader from version 0")
	}
	resp := resource.UpgradeStateResponse{State: tfsdk.State{Schema: sr.Schema}}
	upgrader.StateUpgrader(ctx, resource.UpgradeStateRequest{RawState: &tfprotov6.RawState{JSON: attrs}}, &resp)
	if resp.Diagnostics.HasError() {
		t.Fatal(resp.Diagnostics)
	}
	var m loadBalancerModel
	if d := resp.State.Get(ctx, &m); d.HasError() {
		t.Fatal(d)
	}
	spec, d := m.toSpec(ctx)
	if d.HasError() {
		t.Fatal(d)
	}
	wantListeners := []exampleapi.Listener{
		{Protocol: "tcp", Port: 80, TargetPort: 30080},
		{Protocol: "tcp", Port: 443, TargetPort: 30443, ProxyProtocol: true},
		{Protocol: "udp", Port: 53, TargetPort: 30053},
	}
	if fmt.Sprint(spec.Listeners) != fmt.Sprint(wantListeners) {
		t.Errorf("listeners %+v, want %+v", spec.Listeners, wantListeners)
	}
	for _, key := range []string{"tcp/80", "tcp/443", "udp/53"} {
		if _, ok := m.Listeners.Elements()[key]; !ok {
			t.Errorf("no listener keyed %q in %v", key, m.Listeners)
		}
	}
	wantTags := map[string]string{"k8s.example.com/cluster-id": "c1", "k8s.example.com/service-uid": "u1"}
	if m.ID.ValueString() != v0StateLBID || m.Name.ValueString() != "web" || m.Status.ValueString() != "active" ||
		m.IPv4.ValueString() != "203.0.113.1" || !m.IPv6.IsNull() || spec.HealthCheck == nil || spec.HealthCheck.Path != "/healthz" ||
		!maps.Equal(spec.Tags, wantTags) || fmt.Sprint(spec.Targets) != "["+v0StateInstanceID+"]" ||
		m.OnNameConflict.ValueString() != onNameConflictAdopt {
		t.Errorf("attributes not kept: %+v", m)
	}
	if d, _ := m.Timeouts.Create(ctx, 0); d.String() != "5m0s" {
		t.Errorf("timeouts.create = %v, want 5m", d)
	}
	if !m.OwnerTags.IsNull() {
		t.Errorf("owner_tags (new) = %v, want null", m.OwnerTags)
	}
}

func TestUpgradeListenersV0Errors(t *testing.T) {
	cases := map[string]string{
		`{"listeners": [{"protocol": "tcp", "port": 80}, {"protocol": "tcp", "port": 80}]}`: `listener "tcp/80" appears twice`,
		`{"listeners": [{"protocol": "tcp", "port": 80.5}]}`:                                `port "80.5" is not a whole number`,
		`{"listeners": {"tcp/80": {}}}`:                                                     "decoding stored listeners",
		`[]`:                                                                                "decoding stored state",
	}
	for in, want := range cases {
		if _, err := upgradeListenersV0([]byte(in)); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: error %v, want %q", in, err, want)
		}
	}
	for _, in := range []string{`{"id": "lb-1"}`, `{"listeners": null}`} {
		out, err := upgradeListenersV0([]byte(in))
		if err != nil || !strings.Contains(string(out), `"lb-1"`) && !strings.Contains(string(out), `"listeners":null`) {
			t.Errorf("%s: %s %v", in, out, err)
		}
	}
}

// TestAccUpgradeFromV0 runs the real terraform (provider from the mirror)
// on a state written at schema version 0, with the configuration rewritten
// for version 1: the plan, with or without refresh, has no changes, and a
// refresh stores the state at version 1 with listeners keyed.
func TestAccUpgradeFromV0(t *testing.T) {
	tftest.RequireAcceptance(t)
	bin := tftest.Get(t)
	t.Parallel()
	e := newTestEnv(t)
	node, lb, state := e.v0Fixture(t)

	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "terraform.tfstate"), string(state))
	writeFile(t, filepath.Join(dir, "main.tf"), e.cliConfig(fmt.Sprintf(v0FixtureConfig, node.ID)))
	copyLockFile(t, dir, bin.LockFile)
	tf := newTerraform(t, dir, bin)
	ctx := context.Background()
	if err := tf.Init(ctx); err != nil {
		t.Fatalf("terraform init: %v", err)
	}

	// Without refresh the upgraded state alone must match the
	// configuration; with it, the API's object too.
	for _, refresh := range []bool{false, true} {
		changes, err := tf.Plan(ctx, tfexec.Refresh(refresh))
		if err != nil {
			t.Fatalf("plan (refresh %t) of a version 0 state: %v", refresh, err)
		}
		if changes {
			t.Errorf("plan (refresh %t) of a version 0 state has changes", refresh)
		}
	}
	if err := tf.Apply(ctx, tfexec.RefreshOnly(true)); err != nil {
		t.Fatalf("apply -refresh-only: %v", err)
	}
	raw, err := os.ReadFile(filepath.Join(dir, "terraform.tfstate"))
	if err != nil {
		t.Fatal(err)
	}
	var st struct {
		Resources []struct {
			Instances []struct {
				SchemaVersion int `json:"schema_version"`
				Attributes    struct {
					ID        string                    `json:"id"`
					Listeners map[string]map[string]any `json:"listeners"`
				} `json:"attributes"`
			} `json:"instances"`
		} `json:"resources"`
	}
	if err := json.Unmarshal(raw, &st); err != nil {
		t.Fatal(err)
	}
	inst := st.Resources[0].Instances[0]
	if inst.SchemaVersion != 1 || inst.Attributes.ID != lb.ID || len(inst.Attributes.Listeners) != 3 ||
		inst.Attributes.Listeners["tcp/443"]["proxy_protocol"] != true {
		t.Fatalf("refreshed state: %s", raw)
	}
}

// TestLoadBalancerStateV1WithoutHTTPAttributes: a version 1 state written
// before listeners had certificate_ids, redirect_to_https_port and
// sticky_sessions needs no upgrader (the schema version stayed 1): through
// the provider's own UpgradeResourceState, its listeners read with those
// attributes null, as a configuration without them plans, and everything
// else as stored.
func TestLoadBalancerStateV1WithoutHTTPAttributes(t *testing.T) {
	ctx := context.Background()
	_, v0 := v0Attributes(t, v0StateLBID, v0StateInstanceID)
	v1, err := upgradeListenersV0(v0)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(v1), "certificate_ids") {
		t.Fatal("the fixture already has the new attributes")
	}
	m := upgradedV1(t, v1)
	var listeners map[string]listenerModel
	if d := m.Listeners.ElementsAs(ctx, &listeners, false); d.HasError() || len(listeners) != 3 {
		t.Fatalf("listeners %v %v", listeners, d)
	}
	for key, l := range listeners {
		if !l.CertificateIDs.IsNull() || !l.RedirectToHTTPSPort.IsNull() || !l.StickySessions.IsNull() {
			t.Errorf("%s: new attributes not null: %+v", key, l)
		}
	}
	if !listeners["tcp/443"].ProxyProtocol.ValueBool() || m.ID.ValueString() != v0StateLBID {
		t.Errorf("stored attributes not kept: %+v", m)
	}
}

// upgradedV1 is a version 1 state's attributes as the provider's own
// UpgradeResourceState reads them.
func upgradedV1(t *testing.T, v1 []byte) loadBalancerModel {
	t.Helper()
	ctx := context.Background()
	srv, err := providerserver.NewProtocol6WithError(New(Version)())()
	if err != nil {
		t.Fatal(err)
	}
	resp, err := srv.UpgradeResourceState(ctx, &tfprotov6.UpgradeResourceStateRequest{
		TypeName: "example_load_balancer", Version: 1, RawState: &tfprotov6.RawState{JSON: v1}})
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range resp.Diagnostics {
		t.Errorf("%s: %s: %s", d.Severity, d.Summary, d.Detail)
	}
	var sr resource.SchemaResponse
	(&loadBalancerResource{}).Schema(ctx, resource.SchemaRequest{}, &sr)
	raw, err := resp.UpgradedState.Unmarshal(sr.Schema.Type().TerraformType(ctx))
	if err != nil {
		t.Fatal(err)
	}
	var m loadBalancerModel
	if d := (tfsdk.State{Schema: sr.Schema, Raw: raw}).Get(ctx, &m); d.HasError() {
		t.Fatal(d)
	}
	return m
}

// v0FixtureConfig is the configuration of the version 0 state fixture's
// load balancer (%q: its target), which plans no change against it.
const v0FixtureConfig = `
resource "example_load_balancer" "web" {
  name = "web"
  listeners = {
    "tcp/80"  = { protocol = "tcp", port = 80, target_port = 30080 }
    "tcp/443" = { protocol = "tcp", port = 443, target_port = 30443, proxy_protocol = true }
    "udp/53"  = { protocol = "udp", port = 53, target_port = 30053 }
  }
  health_check = {
    protocol = "http"
    port     = 30080
    path     = "/healthz"
  }
  allowed_source_cidrs = ["192.0.2.0/24"]
  targets              = [%q]
  tags                 = { "k8s.example.com/cluster-id" = "c1", "k8s.example.com/service-uid" = "u1" }
  on_name_conflict     = "adopt_if_tags_match"
  timeouts             = { create = "5m" }
}
`

// v0Fixture creates, in the cloud, the load balancer of the version 0
// state fixture (v0FixtureConfig) and its target, and returns the target
// and the load balancer, and that state.
func (e *testEnv) v0Fixture(t *testing.T) (*exampleapi.Instance, *exampleapi.LoadBalancer, []byte) {
	t.Helper()
	node := e.createInstance(t, "node-a", "ex-west-1a", nil)
	lb := e.createLB(t, exampleapi.LoadBalancerSpec{
		Name: "web", IPFamily: exampleapi.IPFamilyIPv4,
		LoadBalancerSettings: exampleapi.LoadBalancerSettings{
			Type: "lb-small", Algorithm: exampleapi.AlgorithmRoundRobin,
			Listeners: []exampleapi.Listener{
				{Protocol: "tcp", Port: 80, TargetPort: 30080},
				{Protocol: "tcp", Port: 443, TargetPort: 30443, ProxyProtocol: true},
				{Protocol: "udp", Port: 53, TargetPort: 30053},
			},
			HealthCheck: &exampleapi.HealthCheck{Protocol: "http", Port: 30080, Path: "/healthz",
				IntervalSeconds: 10, TimeoutSeconds: 5, HealthyThreshold: 3, UnhealthyThreshold: 3},
			AllowedSourceCIDRs: []string{"192.0.2.0/24"},
			Targets:            []string{node.ID},
			Tags:               map[string]string{"k8s.example.com/cluster-id": "c1", "k8s.example.com/service-uid": "u1"},
		},
	})
	state, _ := v0Attributes(t, lb.ID, node.ID)
	return node, lb, state
}
