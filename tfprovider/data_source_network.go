package tfprovider

import (
	"context"

	"github.com/hashicorp/terraform-plugin-framework/datasource"
	"github.com/hashicorp/terraform-plugin-framework/datasource/schema"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/example/cloud-provider-example/exampleapi"
)

// NewNetworkDataSource is the example_network data source.
func NewNetworkDataSource() datasource.DataSource {
	return &dataSource[networkModel]{name: "network", schema: networkSchema(), validators: networkLookup.validators(), read: readNetwork}
}

type networkModel struct {
	ID       types.String `tfsdk:"id"`
	Name     types.String `tfsdk:"name"`
	Region   types.String `tfsdk:"region"`
	CIDR     types.String `tfsdk:"cidr"`
	IPv6CIDR types.String `tfsdk:"ipv6_cidr"`
}

var networkLookup = lookup[exampleapi.Network]{
	kind: "network", idPrefix: "net-",
	get: (*exampleapi.Client).GetNetwork,
	list: func(c *exampleapi.Client, ctx context.Context, name, region string) ([]exampleapi.Network, error) {
		return c.ListNetworks(ctx, region, name)
	},
	ambiguous: namedInRegions("networks"),
}

func networkSchema() schema.Schema {
	return networkLookup.schema("Reads one network by id or by name, e.g. to find the id `example_route` needs.",
		"Id (`net-...`) of the network.", "Name of the network, unique per region.", map[string]schema.Attribute{
			"cidr":      schema.StringAttribute{Computed: true, Description: "IPv4 CIDR of the network."},
			"ipv6_cidr": schema.StringAttribute{Computed: true, Description: "IPv6 CIDR of the network, null when it has none."},
		})
}

func readNetwork(ctx context.Context, data *providerData, m *networkModel, diags *diag.Diagnostics) {
	if n := networkLookup.read(ctx, data, m.ID, m.Name, m.Region, diags); n != nil {
		*m = networkModel{
			ID:       types.StringValue(n.ID),
			Name:     types.StringValue(n.Name),
			Region:   types.StringValue(n.Region),
			CIDR:     types.StringValue(n.CIDR),
			IPv6CIDR: optionalString(n.IPv6CIDR),
		}
	}
}
