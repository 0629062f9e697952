package tfprovider

import (
	"context"
	"fmt"

	"github.com/hashicorp/terraform-plugin-framework-validators/datasourcevalidator"
	"github.com/hashicorp/terraform-plugin-framework/datasource"
	"github.com/hashicorp/terraform-plugin-framework/datasource/schema"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/example/cloud-provider-example/exampleapi"
)

var (
	_ datasource.DataSourceWithConfigure        = (*networkDataSource)(nil)
	_ datasource.DataSourceWithConfigValidators = (*networkDataSource)(nil)
)

type networkDataSource struct {
	dataSourceBase
}

// NewNetworkDataSource is the example_network data source.
func NewNetworkDataSource() datasource.DataSource {
	return &networkDataSource{dataSourceBase{name: "network"}}
}

type networkModel struct {
	ID       types.String `tfsdk:"id"`
	Name     types.String `tfsdk:"name"`
	Region   types.String `tfsdk:"region"`
	CIDR     types.String `tfsdk:"cidr"`
	IPv6CIDR types.String `tfsdk:"ipv6_cidr"`
}

func (d *networkDataSource) Schema(_ context.Context, _ datasource.SchemaRequest, resp *datasource.SchemaResponse) {
	resp.Schema = schema.Schema{
		Description: "Reads one network by id or by name, e.g. to find the id `example_route` needs.",
		Attributes: map[string]schema.Attribute{
			"id": schema.StringAttribute{
				Optional: true, Computed: true,
				Description: "Id (`net-...`) of the network. Exactly one of `id` and `name` is required.",
				Validators:  []validator.String{idValidator("net-")},
			},
			"name": schema.StringAttribute{
				Optional: true, Computed: true,
				Description: "Name of the network, unique per region. Exactly one of `id` and `name` is required.",
				Validators:  nameValidators(),
			},
			"region": schema.StringAttribute{
				Optional: true, Computed: true,
				Description: "Region to look the name up in. Defaults to the provider's `region`; without either, " +
					"every region is searched and the name must be unique. With `id`, it must match the network's region.",
			},
			"cidr":      schema.StringAttribute{Computed: true, Description: "IPv4 CIDR of the network."},
			"ipv6_cidr": schema.StringAttribute{Computed: true, Description: "IPv6 CIDR of the network, null when it has none."},
		},
	}
}

func (d *networkDataSource) ConfigValidators(context.Context) []datasource.ConfigValidator {
	return []datasource.ConfigValidator{
		datasourcevalidator.ExactlyOneOf(path.MatchRoot("id"), path.MatchRoot("name")),
	}
}

func (d *networkDataSource) Read(ctx context.Context, req datasource.ReadRequest, resp *datasource.ReadResponse) {
	var cfg networkModel
	if !loadConfigured(ctx, d.data, &resp.Diagnostics, get(req.Config, &cfg)) {
		return
	}
	var n *exampleapi.Network
	if !cfg.ID.IsNull() {
		if n = readByID(ctx, "network", cfg.ID, cfg.Region, d.data.client.GetNetwork,
			func(n *exampleapi.Network) (string, string) { return n.ID, n.Region }, &resp.Diagnostics); n == nil {
			return
		}
	} else {
		region, name := regionFilter(cfg.Region, d.data), cfg.Name.ValueString()
		list, err := d.data.client.ListNetworks(ctx, region, name)
		if err != nil {
			addAPIError(&resp.Diagnostics, "Cannot list networks", err, nil)
			return
		}
		switch {
		case len(list) == 0 && region == "":
			resp.Diagnostics.AddAttributeError(path.Root("name"), "Network not found",
				fmt.Sprintf("No network named %q exists in any region.", name))
			return
		case len(list) == 0:
			resp.Diagnostics.AddAttributeError(path.Root("name"), "Network not found",
				fmt.Sprintf("No network named %q exists in region %s.", name, region))
			return
		case len(list) > 1:
			resp.Diagnostics.AddAttributeError(path.Root("name"), "Ambiguous network name",
				fmt.Sprintf("%d networks are named %q in different regions; set region.", len(list), name))
			return
		}
		n = &list[0]
	}
	resp.Diagnostics.Append(resp.State.Set(ctx, networkModel{
		ID:       types.StringValue(n.ID),
		Name:     types.StringValue(n.Name),
		Region:   types.StringValue(n.Region),
		CIDR:     types.StringValue(n.CIDR),
		IPv6CIDR: optionalString(n.IPv6CIDR),
	})...)
}
