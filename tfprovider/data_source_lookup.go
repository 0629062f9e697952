package tfprovider

import (
	"context"
	"fmt"

	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/example/cloud-provider-example/exampleapi"
)

// What the data sources share: reading one object by id, and returning
// listed objects.

// readByID reads the object (kind, e.g. "network") a data source names by
// id; a region set in the configuration must be the object's. Nil means
// diags holds why.
func readByID[T any](ctx context.Context, kind string, id, region types.String, get func(context.Context, string) (*T, error),
	where func(*T) (id, region string), diags *diag.Diagnostics) *T {
	obj, err := get(ctx, id.ValueString())
	if exampleapi.IsNotFound(err) {
		diags.AddAttributeError(path.Root("id"), capitalize(kind)+" not found",
			fmt.Sprintf("No %s with id %q exists.", kind, id.ValueString()))
		return nil
	}
	if err != nil {
		addAPIError(diags, "Cannot read "+kind, err, nil)
		return nil
	}
	if objID, objRegion := where(obj); !region.IsNull() && objRegion != region.ValueString() {
		diags.AddAttributeError(path.Root("region"), capitalize(kind)+" in another region",
			fmt.Sprintf("%s %s is in region %s, not %s.", capitalize(kind), objID, objRegion, region.ValueString()))
		return nil
	}
	return obj
}

// listValues is what a list data source returns for list: the objects
// (toModel gives each one's model, of attrTypes) and their keys (id for
// most), in the order of list.
func listValues[T any](ctx context.Context, list []T, attrTypes map[string]attr.Type, toModel func(*T) any, key func(*T) string,
	diags *diag.Diagnostics) (objects, keys types.List) {
	objs := make([]attr.Value, 0, len(list))
	ks := make([]attr.Value, 0, len(list))
	for i := range list {
		obj, d := types.ObjectValueFrom(ctx, attrTypes, toModel(&list[i]))
		diags.Append(d...)
		objs = append(objs, obj)
		ks = append(ks, types.StringValue(key(&list[i])))
	}
	return types.ListValueMust(types.ObjectType{AttrTypes: attrTypes}, objs), types.ListValueMust(types.StringType, ks)
}
