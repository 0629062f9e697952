package tfprovider

import (
	"context"

	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/datasource"
	"github.com/hashicorp/terraform-plugin-framework/datasource/schema"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/example/cloud-provider-example/exampleapi"
)

var _ datasource.DataSourceWithConfigure = (*instancesDataSource)(nil)

type instancesDataSource struct {
	data *providerData
}

// NewInstancesDataSource is the example_instances data source.
func NewInstancesDataSource() datasource.DataSource { return &instancesDataSource{} }

type instancesModel struct {
	Name      types.String `tfsdk:"name"`
	Zone      types.String `tfsdk:"zone"`
	Region    types.String `tfsdk:"region"`
	Tags      types.Map    `tfsdk:"tags"`
	Instances types.List   `tfsdk:"instances"`
	IDs       types.List   `tfsdk:"ids"`
}

func (d *instancesDataSource) Metadata(_ context.Context, req datasource.MetadataRequest, resp *datasource.MetadataResponse) {
	resp.TypeName = req.ProviderTypeName + "_instances"
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

func (d *instancesDataSource) Configure(_ context.Context, req datasource.ConfigureRequest, resp *datasource.ConfigureResponse) {
	d.data = configuredData(req.ProviderData, &resp.Diagnostics)
}

func (d *instancesDataSource) Read(ctx context.Context, req datasource.ReadRequest, resp *datasource.ReadResponse) {
	if d.data == nil {
		notConfigured(&resp.Diagnostics)
		return
	}
	var m instancesModel
	resp.Diagnostics.Append(req.Config.Get(ctx, &m)...)
	if resp.Diagnostics.HasError() {
		return
	}
	f := exampleapi.InstanceFilter{Name: m.Name.ValueString(), Zone: m.Zone.ValueString(), Region: regionFilter(m.Region, d.data)}
	if !m.Tags.IsNull() {
		f.Tags = map[string]string{}
		resp.Diagnostics.Append(m.Tags.ElementsAs(ctx, &f.Tags, false)...)
	}
	list, err := d.data.client.ListInstances(ctx, f)
	if err != nil {
		addAPIError(&resp.Diagnostics, "Cannot list instances", err, nil)
		return
	}
	objs := make([]attr.Value, 0, len(list))
	ids := make([]attr.Value, 0, len(list))
	for i := range list {
		obj, diags := types.ObjectValueFrom(ctx, instanceAttrTypes, instanceFromAPI(&list[i]))
		resp.Diagnostics.Append(diags...)
		objs = append(objs, obj)
		ids = append(ids, types.StringValue(list[i].ID))
	}
	m.Region = optionalString(f.Region)
	m.Instances = types.ListValueMust(types.ObjectType{AttrTypes: instanceAttrTypes}, objs)
	m.IDs = types.ListValueMust(types.StringType, ids)
	resp.Diagnostics.Append(resp.State.Set(ctx, &m)...)
}
