package tfprovider

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"github.com/hashicorp/terraform-plugin-log/tflog"

	"github.com/example/cloud-provider-example/exampleapi"
)

// The ownership rules shared by the resources that have owner_tags and tags
// (example_load_balancer, example_target_pool): an import or an adoption
// must not take over an object whose owner tags name another owner.

// checkImportedOwner refuses a plan for an imported object (kind, e.g.
// "load balancer") whose tags show another owner (exampleapi.OwnerConflicts
// over owner_tags). On success it drops the import mark from the planned
// private state. It reads owner_tags and tags from the configuration and
// id, name, region and tags from the state.
func checkImportedOwner(ctx context.Context, kind string, req resource.ModifyPlanRequest, resp *resource.ModifyPlanResponse) {
	if req.State.Raw.IsNull() || req.Plan.Raw.IsNull() {
		return
	}
	mark, diags := req.Private.GetKey(ctx, importedKey)
	resp.Diagnostics.Append(diags...)
	if len(mark) == 0 {
		return
	}
	var cfgOwnerTags types.Set
	var cfgTags, stateTags types.Map
	var id, name, region types.String
	resp.Diagnostics.Append(req.Config.GetAttribute(ctx, path.Root("owner_tags"), &cfgOwnerTags)...)
	resp.Diagnostics.Append(req.Config.GetAttribute(ctx, path.Root("tags"), &cfgTags)...)
	resp.Diagnostics.Append(req.State.GetAttribute(ctx, path.Root("tags"), &stateTags)...)
	resp.Diagnostics.Append(req.State.GetAttribute(ctx, path.Root("id"), &id)...)
	resp.Diagnostics.Append(req.State.GetAttribute(ctx, path.Root("name"), &name)...)
	resp.Diagnostics.Append(req.State.GetAttribute(ctx, path.Root("region"), &region)...)
	if resp.Diagnostics.HasError() {
		return
	}
	summary := "Cannot import a " + kind + " of another owner"
	keys, want, ok := knownOwnerTags(ctx, cfgOwnerTags, cfgTags, &resp.Diagnostics)
	if !ok {
		resp.Diagnostics.AddAttributeError(path.Root("owner_tags"), summary,
			fmt.Sprintf("%s %s was imported, and its owner tags are checked against this configuration "+
				"before it is taken over, but owner_tags or tags are not known until apply. Give them known values.",
				capitalize(kind), id.ValueString()))
		return
	}
	got := knownStringMap(ctx, stateTags, &resp.Diagnostics)
	if resp.Diagnostics.HasError() {
		return
	}
	if conflicts := exampleapi.OwnerConflicts(want, got, keys); len(conflicts) > 0 {
		tflog.Warn(ctx, "refusing an imported "+kind+": its tags show another owner",
			map[string]any{strings.ReplaceAll(kind, " ", "_") + "_id": id.ValueString(), "conflicts": strings.Join(conflicts, "; ")})
		resp.Diagnostics.AddAttributeError(path.Root("tags"), summary,
			fmt.Sprintf("%s %s (name %q, region %s) was imported, but its tags show another owner:\n  - %s\n\n"+
				"owner_tags lists the tags whose values name the owner. Taking this %s over would let this "+
				"configuration update, replace or destroy what someone else uses. Check the import id. If the "+
				"%s really is yours, correct its tags (or this configuration's) so that they name the same owner.",
				capitalize(kind), id.ValueString(), name.ValueString(), region.ValueString(), strings.Join(conflicts, "\n  - "),
				kind, kind))
		return
	}
	resp.Diagnostics.Append(resp.Private.SetKey(ctx, importedKey, nil)...)
}

// knownOwnerTags returns owner_tags and tags of a configuration; ok is
// false while any of them is unknown.
func knownOwnerTags(ctx context.Context, ownerTags types.Set, cfgTags types.Map, diags *diag.Diagnostics) (keys []string, tags map[string]string, ok bool) {
	if ownerTags.IsUnknown() || cfgTags.IsUnknown() {
		return nil, nil, false
	}
	for _, v := range ownerTags.Elements() {
		if v.IsUnknown() {
			return nil, nil, false
		}
	}
	tags = map[string]string{}
	for k, v := range cfgTags.Elements() {
		s, isString := v.(types.String)
		if !isString || s.IsUnknown() {
			return nil, nil, false
		}
		tags[k] = s.ValueString()
	}
	return sortedStrings(ctx, ownerTags, diags), tags, true
}

// warnOwnerTagsNotSet warns about owner_tags keys that tags does not set:
// every existing object (kind) carrying such a tag counts as another
// owner's, which is safe but rarely meant.
func warnOwnerTagsNotSet(ctx context.Context, kind string, ownerTags types.Set, tags types.Map, resp *resource.ValidateConfigResponse) {
	if ownerTags.IsNull() || ownerTags.IsUnknown() || tags.IsUnknown() {
		return
	}
	var diags diag.Diagnostics
	keys := sortedStrings(ctx, ownerTags, &diags)
	if diags.HasError() {
		return
	}
	set := tags.Elements()
	var missing []string
	for _, k := range keys {
		if _, ok := set[k]; !ok {
			missing = append(missing, strconv.Quote(k))
		}
	}
	if len(missing) > 0 {
		resp.Diagnostics.AddAttributeWarning(path.Root("owner_tags"), "Owner tag not set",
			fmt.Sprintf("owner_tags names %s, which tags does not set. Every existing %s with such a tag "+
				"counts as another owner's, so importing or adopting it will fail.", strings.Join(missing, ", "), kind))
	}
}

// capitalize upper-cases the first letter of an ASCII phrase.
func capitalize(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}
