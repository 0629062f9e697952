package tfprovider

import (
	"context"
	"reflect"
	"testing"
	"time"

	"github.com/hashicorp/terraform-plugin-framework-timeouts/resource/timeouts"
	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/example/cloud-provider-example/exampleapi"
)

func fullSpec() exampleapi.LoadBalancerSpec {
	return exampleapi.LoadBalancerSpec{
		Name: "web", Region: "ex-west-1", Internal: true, IPFamily: "dualstack",
		LoadBalancerSettings: exampleapi.LoadBalancerSettings{
			Type:      "lb-medium",
			Algorithm: "source_ip",
			Listeners: []exampleapi.Listener{
				{Protocol: "tcp", Port: 443, TargetPort: 8443, ProxyProtocol: true},
				{Protocol: "udp", Port: 53, TargetPort: 5353},
			},
			HealthCheck: &exampleapi.HealthCheck{Protocol: "http", Port: 8080, Path: "/healthz",
				IntervalSeconds: 10, TimeoutSeconds: 5, HealthyThreshold: 2, UnhealthyThreshold: 4},
			AllowedSourceCIDRs: []string{"192.0.2.0/24", "2001:db8::/32"},
			Targets:            []string{"i-a", "i-b"},
			Tags:               map[string]string{"team": "web"},
		},
	}
}

// TestLoadBalancerRoundTrip: API object -> model -> request gives back the
// spec the object was made from.
func TestLoadBalancerRoundTrip(t *testing.T) {
	ctx := context.Background()
	created := time.Date(2026, 1, 2, 3, 4, 5, 0, time.FixedZone("x", 3600))
	lb := &exampleapi.LoadBalancer{LoadBalancerSpec: fullSpec(), ID: "lb-1", Status: "active",
		IPv4: "10.255.0.1", IPv6: "2001:db8:1b::1", Hostname: "lb-1.ex-west-1.lb.example.com", CreatedAt: created}
	m, diags := loadBalancerFromAPI(ctx, lb, loadBalancerModel{})
	if diags.HasError() {
		t.Fatal(diags)
	}
	if m.CreatedAt.ValueString() != "2026-01-02T02:04:05Z" || m.IPv6.ValueString() != lb.IPv6 || m.Status.ValueString() != "active" {
		t.Fatalf("computed fields: %+v", m)
	}
	if !m.Timeouts.IsNull() {
		t.Fatalf("timeouts should be a typed null, got %v", m.Timeouts)
	}
	spec, diags := m.toSpec(ctx)
	if diags.HasError() {
		t.Fatal(diags)
	}
	if !reflect.DeepEqual(spec, fullSpec()) {
		t.Fatalf("round trip:\n got %+v\nwant %+v", spec, fullSpec())
	}
	upd, _ := m.toUpdate(ctx)
	if upd.Type != "lb-medium" || len(upd.Listeners) != 2 || upd.HealthCheck.Path != "/healthz" || len(upd.Tags) != 1 {
		t.Fatalf("update request: %+v", upd)
	}
}

// TestLoadBalancerFromAPIEmptyAndNull: absent API values are null, except
// that collections configured empty stay empty (no perpetual diff), and
// a provisioning object has no addresses yet.
func TestLoadBalancerFromAPIEmptyAndNull(t *testing.T) {
	ctx := context.Background()
	lb := &exampleapi.LoadBalancer{ID: "lb-1", Status: "provisioning", LoadBalancerSpec: exampleapi.LoadBalancerSpec{
		Name: "web", Region: "ex-west-1", IPFamily: "ipv4",
		LoadBalancerSettings: exampleapi.LoadBalancerSettings{
			Type: "lb-small", Algorithm: "round_robin",
			Listeners: []exampleapi.Listener{{Protocol: "tcp", Port: 80, TargetPort: 80}},
		},
	}}
	m, diags := loadBalancerFromAPI(ctx, lb, loadBalancerModel{})
	if diags.HasError() {
		t.Fatal(diags)
	}
	for name, v := range map[string]attr.Value{"health_check": m.HealthCheck, "allowed_source_cidrs": m.AllowedSourceCIDRs,
		"targets": m.Targets, "tags": m.Tags, "owner_tags": m.OwnerTags, "ipv4": m.IPv4, "ipv6": m.IPv6, "hostname": m.Hostname, "created_at": m.CreatedAt} {
		if !v.IsNull() {
			t.Errorf("%s = %v, want null", name, v)
		}
	}

	prior := loadBalancerModel{
		AllowedSourceCIDRs: types.SetValueMust(types.StringType, []attr.Value{}),
		Targets:            types.SetValueMust(types.StringType, []attr.Value{}),
		Tags:               types.MapValueMust(types.StringType, map[string]attr.Value{}),
		OwnerTags:          types.SetValueMust(types.StringType, []attr.Value{types.StringValue("uid")}),
		Timeouts: timeouts.Value{Object: types.ObjectValueMust(timeoutsAttrTypes, map[string]attr.Value{
			"create": types.StringValue("1m"), "update": types.StringNull(), "delete": types.StringNull()})},
	}
	m, _ = loadBalancerFromAPI(ctx, lb, prior)
	if m.AllowedSourceCIDRs.IsNull() || len(m.AllowedSourceCIDRs.Elements()) != 0 ||
		m.Targets.IsNull() || m.Tags.IsNull() {
		t.Fatalf("empty collections became null: %+v", m)
	}
	if d, _ := m.Timeouts.Create(ctx, time.Hour); d != time.Minute {
		t.Fatalf("timeouts not kept from prior: %v", d)
	}
	if !m.OwnerTags.Equal(prior.OwnerTags) {
		t.Fatalf("owner_tags (configuration only) not kept from prior: %v", m.OwnerTags)
	}
}

// TestToSpecSortsSets: set and map order from Terraform is not
// meaningful; the request is deterministic, listeners sorted by protocol
// and port (numerically).
func TestToSpecSortsSets(t *testing.T) {
	ctx := context.Background()
	listener := func(protocol string, port int64) attr.Value {
		return types.ObjectValueMust(listenerAttrTypes, map[string]attr.Value{"protocol": types.StringValue(protocol),
			"port": types.Int64Value(port), "target_port": types.Int64Value(1), "proxy_protocol": types.BoolValue(false),
			"certificate_ids": types.ListNull(types.StringType), "redirect_to_https_port": types.Int64Null(),
			"sticky_sessions": types.ObjectNull(stickySessionsAttrTypes)})
	}
	m := loadBalancerModel{
		Listeners: types.MapValueMust(types.ObjectType{AttrTypes: listenerAttrTypes}, map[string]attr.Value{
			"udp/53": listener("udp", 53), "tcp/443": listener("tcp", 443), "tcp/80": listener("tcp", 80), "tcp/8080": listener("tcp", 8080),
		}),
		HealthCheck:        types.ObjectNull(healthCheckAttrTypes),
		AllowedSourceCIDRs: types.SetValueMust(types.StringType, []attr.Value{types.StringValue("fd00::/8"), types.StringValue("10.0.0.0/8")}),
		Targets:            types.SetValueMust(types.StringType, []attr.Value{types.StringValue("i-b"), types.StringValue("i-a")}),
		Tags:               types.MapNull(types.StringType),
	}
	spec, diags := m.toSpec(ctx)
	if diags.HasError() {
		t.Fatal(diags)
	}
	var keys []string
	for _, l := range spec.Listeners {
		keys = append(keys, listenerKey(l.Protocol, int64(l.Port)))
	}
	if !reflect.DeepEqual(keys, []string{"tcp/80", "tcp/443", "tcp/8080", "udp/53"}) {
		t.Errorf("listeners sent in order %q", keys)
	}
	if !reflect.DeepEqual(spec.AllowedSourceCIDRs, []string{"10.0.0.0/8", "fd00::/8"}) ||
		!reflect.DeepEqual(spec.Targets, []string{"i-a", "i-b"}) || spec.Tags != nil || spec.HealthCheck != nil {
		t.Fatalf("spec: %+v", spec)
	}
}

// TestListenerRoundTrip: an http(s) listener survives the API -> model ->
// API trip (certificate order kept: the first is the default), and what
// the API leaves out reads as null, as a configuration without it plans.
func TestListenerRoundTrip(t *testing.T) {
	ctx := context.Background()
	for _, l := range []exampleapi.Listener{
		{Protocol: "https", Port: 443, TargetPort: 8080, ProxyProtocol: true, CertificateIDs: []string{"cert-b", "cert-a"},
			StickySessions: &exampleapi.StickySessions{CookieName: "EXLB", TTLSeconds: 60}},
		{Protocol: "http", Port: 80, TargetPort: 8080, RedirectToHTTPSPort: 443},
		{Protocol: "tcp", Port: 22, TargetPort: 22},
	} {
		var diags diag.Diagnostics
		m := listenerFromAPI(l, &diags)
		if got := m.toAPI(ctx, &diags); diags.HasError() || !reflect.DeepEqual(got, l) {
			t.Errorf("%s: round trip gave %+v, want %+v (%v)", listenerKey(l.Protocol, int64(l.Port)), got, l, diags)
		}
		if l.Protocol == "tcp" && (!m.CertificateIDs.IsNull() || !m.RedirectToHTTPSPort.IsNull() || !m.StickySessions.IsNull()) {
			t.Errorf("a tcp listener's http attributes are not null: %+v", m)
		}
	}
}

func TestRouteFromAPI(t *testing.T) {
	rt := &exampleapi.Route{ID: "rt-1", NetworkID: "net-1", DestinationCIDR: "10.244.0.0/24",
		TargetInstanceID: "i-1", Status: exampleapi.RouteStatusBlackhole}
	m := routeFromAPI(rt, routeModel{})
	if m.ID.ValueString() != "rt-1" || m.NetworkID.ValueString() != "net-1" || m.Status.ValueString() != "blackhole" ||
		m.DestinationCIDR.ValueString() != "10.244.0.0/24" || m.TargetInstanceID.ValueString() != "i-1" {
		t.Fatalf("%+v", m)
	}
	// on_destination_conflict is configuration only: kept from the prior
	// model, defaulted when that has none (after an import).
	if got := m.OnDestinationConflict.ValueString(); got != onConflictError {
		t.Errorf("on_destination_conflict without prior = %q, want %q", got, onConflictError)
	}
	m = routeFromAPI(rt, routeModel{OnDestinationConflict: types.StringValue(onDestinationConflictAdopt)})
	if got := m.OnDestinationConflict.ValueString(); got != onDestinationConflictAdopt {
		t.Errorf("on_destination_conflict = %q, want it kept from the prior model", got)
	}
}

func TestTagMismatches(t *testing.T) {
	want := map[string]string{"cluster": "a", "uid": "1", "team": "web"}
	if got := tagMismatches(want, map[string]string{"cluster": "a", "uid": "1", "team": "web", "extra": "x"}); len(got) != 0 {
		t.Errorf("superset of the wanted tags: mismatches %v", got)
	}
	got := tagMismatches(want, map[string]string{"cluster": "a", "uid": "2"})
	if !reflect.DeepEqual(got, []string{`"team" is missing (want "web")`, `"uid" is "2" (want "1")`}) {
		t.Errorf("mismatches = %q", got)
	}
}

func TestInstanceFromAPI(t *testing.T) {
	m := instanceFromAPI(&exampleapi.Instance{ObjectMeta: exampleapi.ObjectMeta{ID: "i-1", Name: "n", Region: "r", CreatedAt: time.Unix(0, 0)},
		Zone: "z", State: "running", PrivateIPv4: "10.0.0.5"})
	if !m.PublicIPv4.IsNull() || !m.IPv6.IsNull() || m.Tags.IsNull() || len(m.Tags.Elements()) != 0 ||
		m.CreatedAt.ValueString() != "1970-01-01T00:00:00Z" {
		t.Fatalf("%+v", m)
	}
}

// An import reads no allowed_source_cidrs as null where the configuration
// says []: the first apply after it records the configuration's form
// without a request to the cloud.
func TestSameRequest(t *testing.T) {
	base := exampleapi.UpdateLoadBalancerRequest{Type: "lb-small", Algorithm: "round_robin", Listeners: []exampleapi.Listener{{Protocol: "tcp", Port: 80, TargetPort: 30080}}}
	empty := base
	empty.AllowedSourceCIDRs, empty.Targets = []string{}, []string{}
	if !sameRequest(base, empty) {
		t.Error("null and empty lists differ")
	}
	other := base
	other.AllowedSourceCIDRs = []string{"10.0.0.0/8"}
	if sameRequest(base, other) {
		t.Error("a source range added is the same request")
	}
}
