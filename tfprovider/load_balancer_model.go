package tfprovider

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/hashicorp/terraform-plugin-framework-timeouts/resource/timeouts"
	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/example/cloud-provider-example/exampleapi"
)

// loadBalancerModel is the example_load_balancer resource. Collections are
// framework values rather than Go slices so unknown values survive plans.
type loadBalancerModel struct {
	ID                 types.String   `tfsdk:"id"`
	Name               types.String   `tfsdk:"name"`
	Region             types.String   `tfsdk:"region"`
	Type               types.String   `tfsdk:"type"`
	Internal           types.Bool     `tfsdk:"internal"`
	IPFamily           types.String   `tfsdk:"ip_family"`
	Algorithm          types.String   `tfsdk:"algorithm"`
	Listeners          types.Map      `tfsdk:"listeners"`
	HealthCheck        types.Object   `tfsdk:"health_check"`
	AllowedSourceCIDRs types.Set      `tfsdk:"allowed_source_cidrs"`
	Targets            types.Set      `tfsdk:"targets"`
	TargetPoolID       types.String   `tfsdk:"target_pool_id"`
	Rules              types.Map      `tfsdk:"rules"`
	Tags               types.Map      `tfsdk:"tags"`
	OwnerTags          types.Set      `tfsdk:"owner_tags"`
	Status             types.String   `tfsdk:"status"`
	IPv4               types.String   `tfsdk:"ipv4"`
	IPv6               types.String   `tfsdk:"ipv6"`
	Hostname           types.String   `tfsdk:"hostname"`
	CreatedAt          types.String   `tfsdk:"created_at"`
	OnNameConflict     types.String   `tfsdk:"on_name_conflict"`
	Timeouts           timeouts.Value `tfsdk:"timeouts"`
}

type listenerModel struct {
	Protocol            types.String `tfsdk:"protocol"`
	Port                types.Int64  `tfsdk:"port"`
	TargetPort          types.Int64  `tfsdk:"target_port"`
	ProxyProtocol       types.Bool   `tfsdk:"proxy_protocol"`
	CertificateIDs      types.List   `tfsdk:"certificate_ids"`
	RedirectToHTTPSPort types.Int64  `tfsdk:"redirect_to_https_port"`
	StickySessions      types.Object `tfsdk:"sticky_sessions"`
}

type stickySessionsModel struct {
	CookieName types.String `tfsdk:"cookie_name"`
	TTLSeconds types.Int64  `tfsdk:"ttl_seconds"`
}

// listenerAttrTypes is a listener object. The attributes after
// proxy_protocol came without a schema version bump: they are optional
// and null when unset, and a stored listener without them reads as null
// (the framework fills attributes missing from stored JSON), which is
// what a configuration without them plans.
var (
	listenerAttrTypes       = objectType(listenersAttribute()).AttrTypes
	stickySessionsAttrTypes = listenerAttrTypes["sticky_sessions"].(types.ObjectType).AttrTypes
)

// listenerKey is a listener's key in the listeners map, e.g. "tcp/80".
func listenerKey(protocol string, port int64) string {
	return fmt.Sprintf("%s/%d", protocol, port)
}

// compareListeners orders listeners by protocol, then port: the order of
// requests (and so of the API's field indexes) does not depend on Go's
// map iteration.
func compareListeners(a, b exampleapi.Listener) int {
	return cmp.Or(cmp.Compare(a.Protocol, b.Protocol), cmp.Compare(a.Port, b.Port))
}

type healthCheckModel struct {
	Protocol           types.String `tfsdk:"protocol"`
	Port               types.Int64  `tfsdk:"port"`
	Path               types.String `tfsdk:"path"`
	IntervalSeconds    types.Int64  `tfsdk:"interval_seconds"`
	TimeoutSeconds     types.Int64  `tfsdk:"timeout_seconds"`
	HealthyThreshold   types.Int64  `tfsdk:"healthy_threshold"`
	UnhealthyThreshold types.Int64  `tfsdk:"unhealthy_threshold"`
}

// timeoutsAttrTypes matches timeouts.Attributes with create, update and delete.
var timeoutsAttrTypes = map[string]attr.Type{
	"create": types.StringType,
	"update": types.StringType,
	"delete": types.StringType,
}

var healthCheckAttrTypes = objectType(healthCheckAttribute()).AttrTypes

// toSpec converts a fully known plan into the API's create request. Sets
// are sent sorted so requests (and API field indexes) are deterministic.
func (m loadBalancerModel) toSpec(ctx context.Context) (exampleapi.LoadBalancerSpec, diag.Diagnostics) {
	var diags diag.Diagnostics
	spec := exampleapi.LoadBalancerSpec{
		Name:     m.Name.ValueString(),
		Region:   m.Region.ValueString(),
		Internal: m.Internal.ValueBool(),
		IPFamily: m.IPFamily.ValueString(),
		LoadBalancerSettings: exampleapi.LoadBalancerSettings{
			Type:      m.Type.ValueString(),
			Algorithm: m.Algorithm.ValueString(),
		},
	}
	var listeners map[string]listenerModel
	diags.Append(m.Listeners.ElementsAs(ctx, &listeners, false)...)
	for _, l := range listeners {
		spec.Listeners = append(spec.Listeners, l.toAPI(ctx, &diags))
	}
	slices.SortFunc(spec.Listeners, compareListeners)
	if hc, ok := objectAs[healthCheckModel](ctx, m.HealthCheck, &diags); ok {
		spec.HealthCheck = &exampleapi.HealthCheck{
			Protocol:           hc.Protocol.ValueString(),
			Port:               int(hc.Port.ValueInt64()),
			Path:               hc.Path.ValueString(),
			IntervalSeconds:    int(hc.IntervalSeconds.ValueInt64()),
			TimeoutSeconds:     int(hc.TimeoutSeconds.ValueInt64()),
			HealthyThreshold:   int(hc.HealthyThreshold.ValueInt64()),
			UnhealthyThreshold: int(hc.UnhealthyThreshold.ValueInt64()),
		}
	}
	spec.AllowedSourceCIDRs = sortedStrings(ctx, m.AllowedSourceCIDRs, &diags)
	spec.Targets = sortedStrings(ctx, m.Targets, &diags)
	spec.TargetPoolID = m.TargetPoolID.ValueString()
	spec.Rules = rulesToAPI(ctx, m.Rules, &diags)
	spec.Tags = knownStringMap(ctx, m.Tags, &diags)
	return spec, diags
}

// toUpdate is the PUT body: every mutable field, replacing what is there.
func (m loadBalancerModel) toUpdate(ctx context.Context) (exampleapi.UpdateLoadBalancerRequest, diag.Diagnostics) {
	s, diags := m.toSpec(ctx)
	return s.LoadBalancerSettings, diags
}

func (l listenerModel) toAPI(ctx context.Context, diags *diag.Diagnostics) exampleapi.Listener {
	out := exampleapi.Listener{
		Protocol:            l.Protocol.ValueString(),
		Port:                int(l.Port.ValueInt64()),
		TargetPort:          int(l.TargetPort.ValueInt64()),
		ProxyProtocol:       l.ProxyProtocol.ValueBool(),
		RedirectToHTTPSPort: int(l.RedirectToHTTPSPort.ValueInt64()),
	}
	if !l.CertificateIDs.IsNull() && !l.CertificateIDs.IsUnknown() {
		// A list: the order matters (the first is the default).
		diags.Append(l.CertificateIDs.ElementsAs(ctx, &out.CertificateIDs, false)...)
	}
	if ss, ok := objectAs[stickySessionsModel](ctx, l.StickySessions, diags); ok {
		out.StickySessions = &exampleapi.StickySessions{CookieName: ss.CookieName.ValueString(), TTLSeconds: int(ss.TTLSeconds.ValueInt64())}
	}
	return out
}

// listenerFromAPI is a listener's model; what the API leaves out (no
// certificates, no redirect, no sticky sessions) is null, as unset.
func listenerFromAPI(l exampleapi.Listener, diags *diag.Diagnostics) listenerModel {
	m := listenerModel{
		Protocol:            types.StringValue(l.Protocol),
		Port:                types.Int64Value(int64(l.Port)),
		TargetPort:          types.Int64Value(int64(l.TargetPort)),
		ProxyProtocol:       types.BoolValue(l.ProxyProtocol),
		CertificateIDs:      types.ListNull(types.StringType),
		RedirectToHTTPSPort: types.Int64Null(),
		StickySessions:      types.ObjectNull(stickySessionsAttrTypes),
	}
	if len(l.CertificateIDs) > 0 {
		elems := make([]attr.Value, len(l.CertificateIDs))
		for i, id := range l.CertificateIDs {
			elems[i] = types.StringValue(id)
		}
		var d diag.Diagnostics
		m.CertificateIDs, d = types.ListValue(types.StringType, elems)
		diags.Append(d...)
	}
	if l.RedirectToHTTPSPort != 0 {
		m.RedirectToHTTPSPort = types.Int64Value(int64(l.RedirectToHTTPSPort))
	}
	if ss := l.StickySessions; ss != nil {
		var d diag.Diagnostics
		m.StickySessions, d = types.ObjectValue(stickySessionsAttrTypes, map[string]attr.Value{
			"cookie_name": types.StringValue(ss.CookieName),
			"ttl_seconds": types.Int64Value(int64(ss.TTLSeconds)),
		})
		diags.Append(d...)
	}
	return m
}

// sortedStrings decodes a set of strings, sorted; null or unknown is nil.
func sortedStrings(ctx context.Context, s types.Set, diags *diag.Diagnostics) []string {
	if s.IsNull() || s.IsUnknown() {
		return nil
	}
	var out []string
	diags.Append(s.ElementsAs(ctx, &out, false)...)
	slices.Sort(out)
	return out
}

// knownStringMap decodes a map of strings such as tags; null or unknown is nil,
// a known empty map is empty (the API tells "no tags" from "unchanged").
func knownStringMap(ctx context.Context, m types.Map, diags *diag.Diagnostics) map[string]string {
	if m.IsNull() || m.IsUnknown() {
		return nil
	}
	out := map[string]string{}
	diags.Append(m.ElementsAs(ctx, &out, false)...)
	return out
}

// loadBalancerFromAPI converts the API object into the resource model.
// prior (plan or state) decides what the API cannot express: an empty
// collection stays empty rather than becoming null when the user wrote
// "[]" or "{}", and timeouts and on_name_conflict are configuration only.
func loadBalancerFromAPI(ctx context.Context, lb *exampleapi.LoadBalancer, prior loadBalancerModel) (loadBalancerModel, diag.Diagnostics) {
	var diags diag.Diagnostics
	m := loadBalancerModel{
		ID:        types.StringValue(lb.ID),
		Name:      types.StringValue(lb.Name),
		Region:    types.StringValue(lb.Region),
		Type:      types.StringValue(lb.Type),
		Internal:  types.BoolValue(lb.Internal),
		IPFamily:  types.StringValue(lb.IPFamily),
		Algorithm: types.StringValue(lb.Algorithm),
		Status:    types.StringValue(lb.Status),
		IPv4:      optionalString(lb.IPv4),
		IPv6:      optionalString(lb.IPv6),
		Hostname:  optionalString(lb.Hostname),
		CreatedAt: timeString(lb.CreatedAt),
		// The API never shows a pool's targets on the load balancer, so
		// a pool change is no drift here.
		TargetPoolID: optionalString(lb.TargetPoolID),
		Timeouts:     prior.Timeouts,
		// Configuration only, like timeouts: the API knows nothing of them.
		OnNameConflict: stateOnly(prior.OnNameConflict, onConflictError),
		OwnerTags:      prior.OwnerTags,
	}
	if m.OwnerTags.ElementType(ctx) == nil {
		m.OwnerTags = types.SetNull(types.StringType) // zero value: no prior
	}
	if len(m.Timeouts.AttributeTypes(ctx)) == 0 {
		// Zero value (no prior): a typed null, or state cannot hold it.
		m.Timeouts = timeouts.Value{Object: types.ObjectNull(timeoutsAttrTypes)}
	}

	// The API keeps listeners unique per protocol and port, so keys are.
	listeners := make(map[string]listenerModel, len(lb.Listeners))
	for _, l := range lb.Listeners {
		listeners[listenerKey(l.Protocol, int64(l.Port))] = listenerFromAPI(l, &diags)
	}
	var d diag.Diagnostics
	m.Listeners, d = types.MapValueFrom(ctx, types.ObjectType{AttrTypes: listenerAttrTypes}, listeners)
	diags.Append(d...)

	m.HealthCheck = types.ObjectNull(healthCheckAttrTypes)
	if hc := lb.HealthCheck; hc != nil {
		m.HealthCheck, d = types.ObjectValueFrom(ctx, healthCheckAttrTypes, healthCheckModel{
			Protocol:           types.StringValue(hc.Protocol),
			Port:               types.Int64Value(int64(hc.Port)),
			Path:               optionalString(hc.Path),
			IntervalSeconds:    types.Int64Value(int64(hc.IntervalSeconds)),
			TimeoutSeconds:     types.Int64Value(int64(hc.TimeoutSeconds)),
			HealthyThreshold:   types.Int64Value(int64(hc.HealthyThreshold)),
			UnhealthyThreshold: types.Int64Value(int64(hc.UnhealthyThreshold)),
		})
		diags.Append(d...)
	}

	m.AllowedSourceCIDRs = stringSet(lb.AllowedSourceCIDRs, prior.AllowedSourceCIDRs, &diags)
	m.Targets = stringSet(lb.Targets, prior.Targets, &diags)
	m.Tags = stringMap(lb.Tags, prior.Tags, &diags)
	m.Rules = rulesFromAPI(ctx, lb.Rules, prior.Rules, byPriorityOrKey, &diags)
	return m, diags
}

// stringSet builds a set, keeping an empty prior set empty (not null) so a
// configured "[]" does not read back as a change.
func stringSet(vals []string, prior types.Set, diags *diag.Diagnostics) types.Set {
	if len(vals) == 0 {
		if !prior.IsNull() && !prior.IsUnknown() && len(prior.Elements()) == 0 {
			return types.SetValueMust(types.StringType, []attr.Value{})
		}
		return types.SetNull(types.StringType)
	}
	elems := make([]attr.Value, 0, len(vals))
	for _, v := range vals {
		elems = append(elems, types.StringValue(v))
	}
	s, d := types.SetValue(types.StringType, elems)
	diags.Append(d...)
	return s
}

// stringMap is stringSet for maps.
func stringMap(vals map[string]string, prior types.Map, diags *diag.Diagnostics) types.Map {
	if len(vals) == 0 {
		if !prior.IsNull() && !prior.IsUnknown() && len(prior.Elements()) == 0 {
			return types.MapValueMust(types.StringType, map[string]attr.Value{})
		}
		return types.MapNull(types.StringType)
	}
	elems := make(map[string]attr.Value, len(vals))
	for k, v := range vals {
		elems[k] = types.StringValue(v)
	}
	m, d := types.MapValue(types.StringType, elems)
	diags.Append(d...)
	return m
}

// optionalString maps the API's "absent" (empty string) to null.
func optionalString(s string) types.String {
	if s == "" {
		return types.StringNull()
	}
	return types.StringValue(s)
}

func timeString(t time.Time) types.String {
	if t.IsZero() {
		return types.StringNull()
	}
	return types.StringValue(t.UTC().Format(time.RFC3339))
}

// ownerKeys is owner_tags as a slice; nil when null or unknown.
func (m loadBalancerModel) ownerKeys(ctx context.Context) ([]string, diag.Diagnostics) {
	var diags diag.Diagnostics
	return sortedStrings(ctx, m.OwnerTags, &diags), diags
}
