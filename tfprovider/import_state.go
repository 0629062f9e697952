package tfprovider

import (
	"context"
	"fmt"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource"

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

// importByID starts ImportState for an object imported by its id, which
// has prefix (e.g. "lb-"): it fetches the object (kind, e.g. "load
// balancer"), so a wrong id fails here rather than as a confusing plan.
// Nil means diags holds why.
func importByID[T any](ctx context.Context, data *providerData, kind, prefix, id string,
	get func(*exampleapi.Client, context.Context, string) (*T, error), diags *diag.Diagnostics) *T {
	if err := checkIDPrefix(id, prefix); err != nil {
		diags.AddError("Invalid import id", err.Error())
		return nil
	}
	if data == nil {
		notConfigured(diags)
		return nil
	}
	obj, err := get(data.client, ctx, id)
	if exampleapi.IsNotFound(err) {
		diags.AddError("Cannot import "+kind+" "+id,
			fmt.Sprintf("%s %q does not exist. Check the id given to the import block or to terraform import.", capitalize(kind), id))
		return nil
	}
	if err != nil {
		addAPIError(diags, "Cannot import "+kind+" "+id, err, nil)
		return nil
	}
	return obj
}

// markImported sets the imported object's id and the mark that makes the
// next plans check its owner (importedKey).
func markImported(ctx context.Context, resp *resource.ImportStateResponse, id string) {
	resp.Diagnostics.Append(resp.State.SetAttribute(ctx, path.Root("id"), id)...)
	resp.Diagnostics.Append(resp.Private.SetKey(ctx, importedKey, []byte("true"))...)
}
