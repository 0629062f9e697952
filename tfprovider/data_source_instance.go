package tfprovider

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/hashicorp/terraform-plugin-framework-validators/datasourcevalidator"
	"github.com/hashicorp/terraform-plugin-framework/datasource"
	"github.com/hashicorp/terraform-plugin-framework/datasource/schema"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"

	"github.com/example/cloud-provider-example/exampleapi"
)

var (
	_ datasource.DataSourceWithConfigure        = (*instanceDataSource)(nil)
	_ datasource.DataSourceWithConfigValidators = (*instanceDataSource)(nil)
)

type instanceDataSource struct {
	dataSourceBase
}

// NewInstanceDataSource is the example_instance data source.
func NewInstanceDataSource() datasource.DataSource {
	return &instanceDataSource{dataSourceBase{name: "instance"}}
}

func (d *instanceDataSource) Schema(_ context.Context, _ datasource.SchemaRequest, resp *datasource.SchemaResponse) {
	attrs := instanceComputedAttributes()
	attrs["id"] = schema.StringAttribute{
		Optional: true, Computed: true,
		Description: "Id (`i-...`) of the instance to read. Exactly one of `id` and `name` is required.",
		Validators:  []validator.String{idValidator("i-")},
	}
	attrs["name"] = schema.StringAttribute{
		Optional: true, Computed: true,
		Description: "Name of the instance to read. Exactly one of `id` and `name` is required.",
		Validators:  nameValidators(),
	}
	attrs["region"] = schema.StringAttribute{
		Optional: true, Computed: true,
		Description: "Region to look the name up in. Defaults to the provider's `region`; without either, " +
			"every region is searched and the name must be unique. With `id`, it must match the instance's region.",
	}
	resp.Schema = schema.Schema{
		Description: "Reads one instance by id or by name.",
		Attributes:  attrs,
	}
}

func (d *instanceDataSource) ConfigValidators(context.Context) []datasource.ConfigValidator {
	return []datasource.ConfigValidator{
		datasourcevalidator.ExactlyOneOf(path.MatchRoot("id"), path.MatchRoot("name")),
	}
}

func (d *instanceDataSource) Read(ctx context.Context, req datasource.ReadRequest, resp *datasource.ReadResponse) {
	var cfg instanceModel
	if !loadConfigured(ctx, d.data, &resp.Diagnostics, get(req.Config, &cfg)) {
		return
	}
	region := regionFilter(cfg.Region, d.data)
	var found *exampleapi.Instance
	if !cfg.ID.IsNull() {
		if found = readByID(ctx, "instance", cfg.ID, cfg.Region, d.data.client.GetInstance,
			func(in *exampleapi.Instance) (string, string) { return in.ID, in.Region }, &resp.Diagnostics); found == nil {
			return
		}
	} else {
		name := cfg.Name.ValueString()
		list, err := d.data.client.ListInstances(ctx, exampleapi.InstanceFilter{Name: name, Region: region})
		if err != nil {
			addAPIError(&resp.Diagnostics, "Cannot list instances", err, nil)
			return
		}
		switch len(list) {
		case 0:
			where := "any region"
			if region != "" {
				where = "region " + region
			}
			resp.Diagnostics.AddAttributeError(path.Root("name"), "Instance not found",
				fmt.Sprintf("No instance named %q exists in %s.", name, where))
			return
		case 1:
			found = &list[0]
		default:
			regions := make([]string, 0, len(list))
			for _, in := range list {
				regions = append(regions, in.Region)
			}
			slices.Sort(regions)
			resp.Diagnostics.AddAttributeError(path.Root("name"), "Ambiguous instance name",
				fmt.Sprintf("Instances named %q exist in regions %s; set region.", name, strings.Join(regions, ", ")))
			return
		}
	}
	resp.Diagnostics.Append(resp.State.Set(ctx, instanceFromAPI(found))...)
}
