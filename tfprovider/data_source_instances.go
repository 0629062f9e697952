package tfprovider

import (
	"context"

	"github.com/hashicorp/terraform-plugin-framework/datasource"
	"github.com/hashicorp/terraform-plugin-framework/datasource/schema"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/example/cloud-provider-example/exampleapi"
)

var _ datasource.DataSourceWithConfigure = (*instancesDataSource)(nil)

type instancesDataSource struct {
	dataSourceBase
}

// NewInstancesDataSource is the example_instances data source.
func NewInstancesDataSource() datasource.DataSource {
	return &instancesDataSource{dataSourceBase{name: "instances"}}
}

type instancesModel struct {
	Name      types.String `tfsdk:"name"`
	Zone      types.String `tfsdk:"zone"`
	Region    types.String `tfsdk:"region"`
	Tags      types.Map    `tfsdk:"tags"`
	Instances types.List   `tfsdk:"instances"`
	IDs       types.List   `tfsdk:"ids"`
}

func (d *instancesDataSource) Schema(_ context.Context, _ datasource.SchemaRequest, resp *datasource.SchemaResponse) {
	resp.Schema = schema.Schema{
		Description: "Lists the instances matching all of the given filters, ordered by id.",
		Attributes: map[string]schema.Attribute{
			"name": schema.StringAttribute{Optional: true, Description: "Only the instance(s) with this name."},
			"zone": schema.StringAttribute{Optional: true, Description: "Only instances in this zone."},
			"region": schema.StringAttribute{
				Optional: true, Computed: true,
				Description: "Only instances in this region. Defaults to the provider's `region`; " +
					"without either, instances of every region are listed.",
			},
			"tags": schema.MapAttribute{
				Optional: true, ElementType: types.StringType,
				Description: "Only instances having all these tags. An empty value matches any value of the key.",
			},
			"instances": schema.ListNestedAttribute{
				Computed:     true,
				Description:  "The matching instances.",
				NestedObject: schema.NestedAttributeObject{Attributes: instanceComputedAttributes()},
			},
			"ids": schema.ListAttribute{
				Computed: true, ElementType: types.StringType,
				Description: "Ids of the matching instances, in the same order.",
			},
		},
	}
}

func (d *instancesDataSource) Read(ctx context.Context, req datasource.ReadRequest, resp *datasource.ReadResponse) {
	var m instancesModel
	if !loadConfigured(ctx, d.data, &resp.Diagnostics, get(req.Config, &m)) {
		return
	}
	f := exampleapi.InstanceFilter{Name: m.Name.ValueString(), Zone: m.Zone.ValueString(), Region: regionFilter(m.Region, d.data)}
	f.Tags = knownStringMap(ctx, m.Tags, &resp.Diagnostics)
	list, err := d.data.client.ListInstances(ctx, f)
	if err != nil {
		addAPIError(&resp.Diagnostics, "Cannot list instances", err, nil)
		return
	}
	m.Region = optionalString(f.Region)
	m.Instances, m.IDs = listValues(ctx, list, instanceAttrTypes,
		func(in *exampleapi.Instance) any { return instanceFromAPI(in) },
		func(in *exampleapi.Instance) string { return in.ID }, &resp.Diagnostics)
	resp.Diagnostics.Append(resp.State.Set(ctx, &m)...)
}
