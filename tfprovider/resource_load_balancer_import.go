package tfprovider

import (
	"context"
	"fmt"
	"strings"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"github.com/hashicorp/terraform-plugin-log/tflog"

	"github.com/example/cloud-provider-example/exampleapi"
)

// importedKey is the private state key ImportState sets. The import has
// no configuration to check ownership against; the plans that follow do
// (ModifyPlan), for as long as the key is there. A plan that passes the
// check no longer carries it, and Update clears it, so the first apply
// that updates the load balancer ends the checks. (An import planned as a
// no-op keeps the key, as Terraform then keeps the import's private state:
// plans go on checking, which passes as long as the owner tags are
// unchanged. With owner_tags set that cannot happen: the import does not
// know them, so the first plan always updates them in state.)
const importedKey = "imported_unverified"

// ImportState fetches the load balancer, so a wrong id fails here rather
// than as a confusing plan, and marks the state as imported.
func (r *loadBalancerResource) ImportState(ctx context.Context, req resource.ImportStateRequest, resp *resource.ImportStateResponse) {
	if err := checkIDPrefix(req.ID, "lb-"); err != nil {
		resp.Diagnostics.AddError("Invalid import id", err.Error())
		return
	}
	if r.data == nil {
		notConfigured(&resp.Diagnostics)
		return
	}
	lb, err := r.data.client.GetLoadBalancer(ctx, req.ID)
	if exampleapi.IsNotFound(err) {
		resp.Diagnostics.AddError("Cannot import load balancer "+req.ID,
			fmt.Sprintf("Load balancer %q does not exist. Check the id given to the import block or to terraform import.", req.ID))
		return
	}
	if err != nil {
		addAPIError(&resp.Diagnostics, "Cannot import load balancer "+req.ID, err, nil)
		return
	}
	tflog.Info(ctx, "importing load balancer; its owner tags are checked by the next plan",
		map[string]any{"load_balancer_id": lb.ID, "name": lb.Name, "region": lb.Region})
	resp.Diagnostics.Append(resp.State.SetAttribute(ctx, path.Root("id"), lb.ID)...)
	resp.Diagnostics.Append(resp.Private.SetKey(ctx, importedKey, []byte("true"))...)
}

// checkImportedOwner refuses a plan for an imported load balancer whose
// tags show another owner (exampleapi.OwnerConflicts over owner_tags). On
// success it drops the import mark from the planned private state.
func (r *loadBalancerResource) checkImportedOwner(ctx context.Context, req resource.ModifyPlanRequest, resp *resource.ModifyPlanResponse) {
	if req.State.Raw.IsNull() || req.Plan.Raw.IsNull() {
		return
	}
	mark, diags := req.Private.GetKey(ctx, importedKey)
	resp.Diagnostics.Append(diags...)
	if len(mark) == 0 {
		return
	}
	var cfg, state loadBalancerModel
	resp.Diagnostics.Append(req.Config.Get(ctx, &cfg)...)
	resp.Diagnostics.Append(req.State.Get(ctx, &state)...)
	if resp.Diagnostics.HasError() {
		return
	}
	const summary = "Cannot import a load balancer of another owner"
	keys, want, ok := knownOwnerTags(ctx, cfg, &resp.Diagnostics)
	if !ok {
		resp.Diagnostics.AddAttributeError(path.Root("owner_tags"), summary,
			fmt.Sprintf("Load balancer %s was imported, and its owner tags are checked against this configuration "+
				"before it is taken over, but owner_tags or tags are not known until apply. Give them known values.",
				state.ID.ValueString()))
		return
	}
	got := map[string]string{}
	resp.Diagnostics.Append(state.Tags.ElementsAs(ctx, &got, false)...)
	if resp.Diagnostics.HasError() {
		return
	}
	if conflicts := exampleapi.OwnerConflicts(want, got, keys); len(conflicts) > 0 {
		tflog.Warn(ctx, "refusing an imported load balancer: its tags show another owner",
			map[string]any{"load_balancer_id": state.ID.ValueString(), "conflicts": strings.Join(conflicts, "; ")})
		resp.Diagnostics.AddAttributeError(path.Root("tags"), summary,
			fmt.Sprintf("Load balancer %s (name %q, region %s) was imported, but its tags show another owner:\n  - %s\n\n"+
				"owner_tags lists the tags whose values name the owner. Taking this load balancer over would let this "+
				"configuration update, replace or destroy what someone else uses. Check the import id. If the load "+
				"balancer really is yours, correct its tags (or this configuration's) so that they name the same owner.",
				state.ID.ValueString(), state.Name.ValueString(), state.Region.ValueString(), strings.Join(conflicts, "\n  - ")))
		return
	}
	resp.Diagnostics.Append(resp.Private.SetKey(ctx, importedKey, nil)...)
}

// knownOwnerTags returns owner_tags and tags of a configuration; ok is
// false while any of them is unknown.
func knownOwnerTags(ctx context.Context, cfg loadBalancerModel, diags *diag.Diagnostics) (keys []string, tags map[string]string, ok bool) {
	if cfg.OwnerTags.IsUnknown() || cfg.Tags.IsUnknown() {
		return nil, nil, false
	}
	for _, v := range cfg.OwnerTags.Elements() {
		if v.IsUnknown() {
			return nil, nil, false
		}
	}
	tags = map[string]string{}
	for k, v := range cfg.Tags.Elements() {
		s, isString := v.(types.String)
		if !isString || s.IsUnknown() {
			return nil, nil, false
		}
		tags[k] = s.ValueString()
	}
	keys, d := cfg.ownerKeys(ctx)
	diags.Append(d...)
	return keys, tags, true
}
