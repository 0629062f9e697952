package tfprovider

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/hashicorp/terraform-plugin-framework/datasource"
	"github.com/hashicorp/terraform-plugin-framework/datasource/schema"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/example/cloud-provider-example/exampleapi"
)

// NewZonesDataSource is the example_zones data source.
func NewZonesDataSource() datasource.DataSource {
	return &dataSource[zonesModel]{name: "zones", schema: zonesSchema(), read: readZones}
}

type zonesModel struct {
	Region types.String `tfsdk:"region"`
	Zones  []zoneModel  `tfsdk:"zones"`
	Names  []string     `tfsdk:"names"`
}

// zoneModel is one element of zones.
type zoneModel struct {
	Name   types.String `tfsdk:"name"`
	Region types.String `tfsdk:"region"`
}

func zonesSchema() schema.Schema {
	return schema.Schema{
		Description: "Lists availability zones, ordered by name.",
		Attributes: map[string]schema.Attribute{
			"region": regionFilterAttribute("Only zones of this region. Defaults to the provider's `region`; " +
				"without either, the zones of every region are listed."),
			"zones": listedObjects("The zones.", map[string]schema.Attribute{
				"name":   schema.StringAttribute{Computed: true, Description: "Zone name, e.g. `ex-west-1a`."},
				"region": schema.StringAttribute{Computed: true, Description: "Region of the zone."},
			}),
			"names": listedKeys("Zone names, in the same order."),
		},
	}
}

// readZones lists the zones of the region, or of every region.
func readZones(ctx context.Context, data *providerData, m *zonesModel, diags *diag.Diagnostics) {
	region := regionFilter(m.Region, data)
	zones, err := data.client.ListZones(ctx, region)
	if err != nil {
		addAPIError(diags, "Cannot list zones", err, listFieldResolver(map[string]bool{"region": true}, nil))
		return
	}
	if len(zones) == 0 && region != "" {
		diags.AddAttributeError(path.Root("region"), "No zones found",
			fmt.Sprintf("Region %q has no zones; is the region name right?", region))
		return
	}
	slices.SortFunc(zones, func(a, b exampleapi.Zone) int { return strings.Compare(a.Name, b.Name) })
	m.Region = optionalString(region)
	m.Zones, m.Names = listed(zones,
		func(z *exampleapi.Zone) zoneModel {
			return zoneModel{Name: types.StringValue(z.Name), Region: types.StringValue(z.Region)}
		},
		func(z *exampleapi.Zone) string { return z.Name })
}
