package tfprovider

import (
	"context"

	"github.com/hashicorp/terraform-plugin-framework/datasource"
	"github.com/hashicorp/terraform-plugin-framework/datasource/schema"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/example/cloud-provider-example/exampleapi"
)

// NewInstancesDataSource is the example_instances data source.
func NewInstancesDataSource() datasource.DataSource {
	return &dataSource[instancesModel]{name: "instances", schema: instancesSchema(), read: readInstances}
}

type instancesModel struct {
	Name      types.String    `tfsdk:"name"`
	Zone      types.String    `tfsdk:"zone"`
	Region    types.String    `tfsdk:"region"`
	Tags      types.Map       `tfsdk:"tags"`
	Instances []instanceModel `tfsdk:"instances"`
	IDs       []string        `tfsdk:"ids"`
}

func instancesSchema() schema.Schema {
	return schema.Schema{
		Description: "Lists the instances matching all of the given filters, ordered by id.",
		Attributes: map[string]schema.Attribute{
			"name": schema.StringAttribute{Optional: true, Description: "Only the instance(s) with this name."},
			"zone": schema.StringAttribute{Optional: true, Description: "Only instances in this zone."},
			"region": regionFilterAttribute("Only instances in this region. Defaults to the provider's `region`; " +
				"without either, instances of every region are listed."),
			"tags": schema.MapAttribute{
				Optional: true, ElementType: types.StringType,
				Description: "Only instances having all these tags. An empty value matches any value of the key.",
			},
			"instances": listedObjects("The matching instances.", instanceComputedAttributes()),
			"ids":       listedKeys("Ids of the matching instances, in the same order."),
		},
	}
}

// readInstances lists the instances matching the filters.
func readInstances(ctx context.Context, data *providerData, m *instancesModel, diags *diag.Diagnostics) {
	f := exampleapi.InstanceFilter{Name: m.Name.ValueString(), Zone: m.Zone.ValueString(), Region: regionFilter(m.Region, data)}
	f.Tags = knownStringMap(ctx, m.Tags, diags)
	list, err := data.client.ListInstances(ctx, f)
	if err != nil {
		addAPIError(diags, "Cannot list instances", err, nil)
		return
	}
	m.Region = optionalString(f.Region)
	m.Instances, m.IDs = listed(list, instanceFromAPI, func(in *exampleapi.Instance) string { return in.ID })
}
