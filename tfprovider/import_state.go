package tfprovider

import (
	"context"
	"fmt"

	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-log/tflog"

	"github.com/example/cloud-provider-example/exampleapi"
)

// importedKey is the private state key ImportState sets. The import has
// no configuration to check ownership against; the plans that follow do
// (ModifyPlan), for as long as the key is there. A plan that passes the
// check no longer carries it, and Update clears it, so the first apply
// that updates the object ends the checks. (An import planned as a
// no-op keeps the key, as Terraform then keeps the import's private state:
// plans go on checking, which passes as long as the owner tags are
// unchanged. With owner_tags set that cannot happen: the import does not
// know them, so the first plan always updates them in state.)
const importedKey = "imported_unverified"

// importByID is ImportState for an object imported by its id, which has
// prefix (e.g. "lb-"): it fetches the object (kind, e.g. "load balancer"),
// so a wrong id fails here rather than as a confusing plan, then sets the
// id and the mark that makes the next plans check its owner (importedKey).
// Nil means diags holds why.
func importByID[T any](ctx context.Context, data *providerData, kind, prefix string,
	req resource.ImportStateRequest, resp *resource.ImportStateResponse,
	get func(*exampleapi.Client, context.Context, string) (*T, error), named func(*T) namedObject) *T {
	id := req.ID
	if err := checkIDPrefix(id, prefix); err != nil {
		resp.Diagnostics.AddError("Invalid import id", err.Error())
		return nil
	}
	if data == nil {
		notConfigured(&resp.Diagnostics)
		return nil
	}
	obj, err := get(data.client, ctx, id)
	if exampleapi.IsNotFound(err) {
		resp.Diagnostics.AddError("Cannot import "+kind+" "+id,
			fmt.Sprintf("%s %q does not exist. Check the id given to the import block or to terraform import.", capitalize(kind), id))
		return nil
	}
	if err != nil {
		addAPIError(&resp.Diagnostics, "Cannot import "+kind+" "+id, err, nil)
		return nil
	}
	n := named(obj)
	tflog.Info(ctx, "importing "+kind, map[string]any{idKey(kind): n.ID, "name": n.Name, "region": n.Region})
	resp.Diagnostics.Append(resp.State.SetAttribute(ctx, path.Root("id"), n.ID)...)
	resp.Diagnostics.Append(resp.Private.SetKey(ctx, importedKey, []byte("true"))...)
	return obj
}
