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
	data *providerData
}

// NewInstanceDataSource is the example_instance data source.
func NewInstanceDataSource() datasource.DataSource { return &instanceDataSource{} }

func (d *instanceDataSource) Metadata(_ context.Context, req datasource.MetadataRequest, resp *datasource.MetadataResponse) {
	resp.TypeName = req.ProviderTypeName + "_instance"
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

func (d *instanceDataSource) Configure(_ context.Context, req datasource.ConfigureRequest, resp *datasource.ConfigureResponse) {
	d.data = configuredData(req.ProviderData, &resp.Diagnostics)
}

func (d *instanceDataSource) Read(ctx context.Context, req datasource.ReadRequest, resp *datasource.ReadResponse) {
	if d.data == nil {
		notConfigured(&resp.Diagnostics)
		return
	}
	var cfg instanceModel
	resp.Diagnostics.Append(req.Config.Get(ctx, &cfg)...)
	if resp.Diagnostics.HasError() {
		return
	}
	region := regionFilter(cfg.Region, d.data)
	var found *exampleapi.Instance
	if !cfg.ID.IsNull() {
		in, err := d.data.client.GetInstance(ctx, cfg.ID.ValueString())
		if exampleapi.IsNotFound(err) {
			resp.Diagnostics.AddAttributeError(path.Root("id"), "Instance not found",
				fmt.Sprintf("No instance with id %q exists.", cfg.ID.ValueString()))
			return
		}
		if err != nil {
			addAPIError(&resp.Diagnostics, "Cannot read instance", err, nil)
			return
		}
		if !cfg.Region.IsNull() && in.Region != cfg.Region.ValueString() {
			resp.Diagnostics.AddAttributeError(path.Root("region"), "Instance in another region",
				fmt.Sprintf("Instance %s is in region %s, not %s.", in.ID, in.Region, cfg.Region.ValueString()))
			return
		}
		found = in
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
