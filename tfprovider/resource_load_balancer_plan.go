package tfprovider

import (
	"context"

	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/example/cloud-provider-example/exampleapi"
)

// ModifyPlan refuses an imported load balancer of another owner (see
// checkImportedOwner) and a listener serving another tenant's certificate
// (checkCertificateOwners), and defaults region to the provider's region. A
// change of the effective region (in configuration or of the provider)
// replaces the load balancer, as the API cannot move one.
func (r *loadBalancerResource) ModifyPlan(ctx context.Context, req resource.ModifyPlanRequest, resp *resource.ModifyPlanResponse) {
	if req.Plan.Raw.IsNull() {
		return // destroy
	}
	if r.checkImportedOwner(ctx, req, resp); resp.Diagnostics.HasError() {
		return
	}
	if planRegion(ctx, r.data, req, resp); resp.Diagnostics.HasError() {
		return
	}
	if r.checkCertificateOwners(ctx, resp); resp.Diagnostics.HasError() {
		return
	}

	// An IPv4-only load balancer never gets an IPv6 address: say so in
	// the plan rather than "(known after apply)".
	var family, ipv6 types.String
	resp.Diagnostics.Append(resp.Plan.GetAttribute(ctx, path.Root("ip_family"), &family)...)
	resp.Diagnostics.Append(resp.Plan.GetAttribute(ctx, path.Root("ipv6"), &ipv6)...)
	if family.ValueString() == exampleapi.IPFamilyIPv4 && ipv6.IsUnknown() {
		resp.Diagnostics.Append(resp.Plan.SetAttribute(ctx, path.Root("ipv6"), types.StringNull())...)
	}
}

// planRegion plans the region attribute of a resource that has one: the
// configured region, else the provider's; a change of the effective
// region replaces the object, as the API cannot move one.
func planRegion(ctx context.Context, d *providerData, req resource.ModifyPlanRequest, resp *resource.ModifyPlanResponse) {
	var cfgRegion, stateRegion types.String
	resp.Diagnostics.Append(req.Config.GetAttribute(ctx, path.Root("region"), &cfgRegion)...)
	if !req.State.Raw.IsNull() {
		resp.Diagnostics.Append(req.State.GetAttribute(ctx, path.Root("region"), &stateRegion)...)
	}
	if resp.Diagnostics.HasError() {
		return
	}
	planned, ok := plannedRegion(cfgRegion, stateRegion, d)
	if !ok {
		resp.Diagnostics.AddAttributeError(path.Root("region"), "Missing region",
			"Set region on the resource, or region in the provider block (or the "+EnvRegion+" environment variable).")
		return
	}
	resp.Diagnostics.Append(resp.Plan.SetAttribute(ctx, path.Root("region"), planned)...)
	if !stateRegion.IsNull() && !planned.Equal(stateRegion) {
		resp.RequiresReplace.Append(path.Root("region"))
	}
}

// plannedRegion is the region a plan gets: the configured one, else the
// provider's, else (for existing objects) the current one. ok is false
// when a new object would have no region at all.
func plannedRegion(cfg, state types.String, d *providerData) (types.String, bool) {
	switch {
	case !cfg.IsNull():
		return cfg, true // known or unknown: taken as configured
	case d == nil:
		if !state.IsNull() {
			return state, true
		}
		return types.StringUnknown(), true // provider not configured yet
	case d.region != "":
		return types.StringValue(d.region), true
	case !state.IsNull():
		return state, true
	}
	return types.StringNull(), false
}
