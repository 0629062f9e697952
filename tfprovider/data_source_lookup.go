package tfprovider

import (
	"context"
	"fmt"
	"slices"

	"github.com/hashicorp/terraform-plugin-framework-validators/datasourcevalidator"
	"github.com/hashicorp/terraform-plugin-framework/datasource"
	"github.com/hashicorp/terraform-plugin-framework/datasource/schema"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/example/cloud-provider-example/exampleapi"
)

// What the data sources share: reading one object by id or by name, and
// returning listed objects.

// lookup is how a data source reads one object (kind, e.g. "network") by
// id or by name (or, for a kind with byIP, by its IP): exactly one of the
// arguments id, name (and ip), and region. The object's Meta gives its id
// and region.
type lookup[T exampleapi.Object] struct {
	kind     string
	idPrefix string
	get      func(c *exampleapi.Client, ctx context.Context, id string) (*T, error)
	// list lists the objects named name in region ("": every region).
	list func(c *exampleapi.Client, ctx context.Context, name, region string) ([]T, error)
	// ambiguous is the error's detail when several regions (sorted) have
	// the name.
	ambiguous func(name string, regions []string) string
	// byIP, when set, lists the objects holding ip: the data source then
	// has the argument ip.
	byIP func(c *exampleapi.Client, ctx context.Context, ip string) ([]T, error)
}

// namedInRegions is the ambiguous of a kind whose plural is plural, e.g.
// "networks": it counts the regions.
func namedInRegions(plural string) func(name string, regions []string) string {
	return func(name string, regions []string) string {
		return fmt.Sprintf("%d %s are named %q in different regions; set region.", len(regions), plural, name)
	}
}

// keys are the arguments that name the object, in the schema's words.
func (l lookup[T]) keys() (attrs []string, words string) {
	if l.byIP != nil {
		return []string{"id", "name", "ip"}, "`id`, `name` and `ip`"
	}
	return []string{"id", "name"}, "`id` and `name`"
}

// schema is the data source's schema: attrs (the object's other
// attributes, all computed) with id, name and region added. idDesc and
// nameDesc say what the object's id and name are.
func (l lookup[T]) schema(desc, idDesc, nameDesc string, attrs map[string]schema.Attribute) schema.Schema {
	_, words := l.keys()
	oneOf := " Exactly one of " + words + " is required."
	attrs["id"] = schema.StringAttribute{
		Optional: true, Computed: true,
		Description: idDesc + oneOf,
		Validators:  []validator.String{idValidator(l.idPrefix)},
	}
	attrs["name"] = schema.StringAttribute{
		Optional: true, Computed: true,
		Description: nameDesc + oneOf,
		Validators:  nameValidators(),
	}
	if l.byIP != nil {
		attrs["ip"] = schema.StringAttribute{
			Optional: true, Computed: true,
			Description: "IP of the " + l.kind + ", as the cloud writes it (e.g. `203.0.113.7`, `2001:db8:1b::7`)." + oneOf,
			Validators:  []validator.String{ipValidator},
		}
	}
	with := "`id`"
	if l.byIP != nil {
		with = "`id` or `ip`"
	}
	attrs["region"] = regionFilterAttribute("Region to look the name up in. Defaults to the provider's `region`; without either, " +
		"every region is searched and the name must be unique. With " + with + ", it must match the " + l.kind + "'s region.")
	return schema.Schema{Description: desc, Attributes: attrs}
}

func (l lookup[T]) validators() []datasource.ConfigValidator {
	attrs, _ := l.keys()
	roots := make([]path.Expression, len(attrs))
	for i, a := range attrs {
		roots[i] = path.MatchRoot(a)
	}
	return []datasource.ConfigValidator{datasourcevalidator.ExactlyOneOf(roots...)}
}

// read reads the object that id, else name, names. Nil means diags holds
// why.
func (l lookup[T]) read(ctx context.Context, data *providerData, id, name, region types.String, diags *diag.Diagnostics) *T {
	if !id.IsNull() {
		return l.readByID(ctx, data.client, id, region, diags)
	}
	inRegion, n := regionFilter(region, data), name.ValueString()
	found, err := l.list(data.client, ctx, n, inRegion)
	if err != nil {
		addAPIError(diags, "Cannot look up the "+l.kind+" by name", err, nil)
		return nil
	}
	switch len(found) {
	case 0:
		where := "any region"
		if inRegion != "" {
			where = "region " + inRegion
		}
		diags.AddAttributeError(path.Root("name"), capitalize(l.kind)+" not found",
			fmt.Sprintf("No %s named %q exists in %s.", l.kind, n, where))
		return nil
	case 1:
		return &found[0]
	}
	regions := make([]string, 0, len(found))
	for i := range found {
		regions = append(regions, found[i].Meta().Region)
	}
	slices.Sort(regions)
	diags.AddAttributeError(path.Root("name"), "Ambiguous "+l.kind+" name", l.ambiguous(n, regions))
	return nil
}

// readByID reads the object of id; a region set in the configuration must
// be the object's.
func (l lookup[T]) readByID(ctx context.Context, c *exampleapi.Client, id, region types.String, diags *diag.Diagnostics) *T {
	obj, err := l.get(c, ctx, id.ValueString())
	if exampleapi.IsNotFound(err) {
		diags.AddAttributeError(path.Root("id"), capitalize(l.kind)+" not found",
			fmt.Sprintf("No %s with id %q exists.", l.kind, id.ValueString()))
		return nil
	}
	if err != nil {
		addAPIError(diags, "Cannot read "+l.kind, err, nil)
		return nil
	}
	return l.inRegion(obj, region, diags)
}

// readByIP reads the object holding ip; a region set in the configuration
// must be the object's.
func (l lookup[T]) readByIP(ctx context.Context, c *exampleapi.Client, ip, region types.String, diags *diag.Diagnostics) *T {
	found, err := l.byIP(c, ctx, ip.ValueString())
	if err != nil {
		addAPIError(diags, "Cannot look up the "+l.kind+" by IP", err, nil)
		return nil
	}
	if len(found) == 0 {
		diags.AddAttributeError(path.Root("ip"), capitalize(l.kind)+" not found",
			fmt.Sprintf("No %s holds the IP %s.", l.kind, ip.ValueString()))
		return nil
	}
	return l.inRegion(&found[0], region, diags)
}

// inRegion is obj, unless a region set in the configuration is not its.
func (l lookup[T]) inRegion(obj *T, region types.String, diags *diag.Diagnostics) *T {
	if meta := (*obj).Meta(); !region.IsNull() && meta.Region != region.ValueString() {
		diags.AddAttributeError(path.Root("region"), capitalize(l.kind)+" in another region",
			fmt.Sprintf("%s %s is in region %s, not %s.", capitalize(l.kind), meta.ID, meta.Region, region.ValueString()))
		return nil
	}
	return obj
}

// regionFilterAttribute is region in a data source: where it looks (see
// regionFilter), which the state then shows.
func regionFilterAttribute(desc string) schema.StringAttribute {
	return schema.StringAttribute{Optional: true, Computed: true, Description: desc}
}

// listedObjects and listedKeys are the attributes of what listed returns.
func listedObjects(desc string, attrs map[string]schema.Attribute) schema.ListNestedAttribute {
	return schema.ListNestedAttribute{Computed: true, Description: desc, NestedObject: schema.NestedAttributeObject{Attributes: attrs}}
}

func listedKeys(desc string) schema.ListAttribute {
	return schema.ListAttribute{Computed: true, ElementType: types.StringType, Description: desc}
}

// listed is what a list data source returns for found: the objects'
// models (toModel) and their keys (id for most), in the order of found.
// Neither is ever nil: no objects is an empty list, not null.
func listed[T, M any](found []T, toModel func(*T) M, key func(*T) string) ([]M, []string) {
	models, keys := make([]M, 0, len(found)), make([]string, 0, len(found))
	for i := range found {
		models = append(models, toModel(&found[i]))
		keys = append(keys, key(&found[i]))
	}
	return models, keys
}
