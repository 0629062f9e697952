package tfprovider

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/datasource"
	"github.com/hashicorp/terraform-plugin-framework/datasource/schema"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/example/cloud-provider-example/exampleapi"
)

var _ datasource.DataSourceWithConfigure = (*zonesDataSource)(nil)

type zonesDataSource struct {
	dataSourceBase
}

// NewZonesDataSource is the example_zones data source.
func NewZonesDataSource() datasource.DataSource {
	return &zonesDataSource{dataSourceBase{name: "zones"}}
}

type zonesModel struct {
	Region types.String `tfsdk:"region"`
	Zones  types.List   `tfsdk:"zones"`
	Names  types.List   `tfsdk:"names"`
}

// zoneModel is one element of zones.
type zoneModel struct {
	Name   types.String `tfsdk:"name"`
	Region types.String `tfsdk:"region"`
}

var zoneAttrTypes = map[string]attr.Type{"name": types.StringType, "region": types.StringType}

func (d *zonesDataSource) Schema(_ context.Context, _ datasource.SchemaRequest, resp *datasource.SchemaResponse) {
	resp.Schema = schema.Schema{
		Description: "Lists availability zones, ordered by name.",
		Attributes: map[string]schema.Attribute{
			"region": schema.StringAttribute{
				Optional: true, Computed: true,
				Description: "Only zones of this region. Defaults to the provider's `region`; " +
					"without either, the zones of every region are listed.",
			},
			"zones": schema.ListNestedAttribute{
				Computed:    true,
				Description: "The zones.",
				NestedObject: schema.NestedAttributeObject{Attributes: map[string]schema.Attribute{
					"name":   schema.StringAttribute{Computed: true, Description: "Zone name, e.g. `ex-west-1a`."},
					"region": schema.StringAttribute{Computed: true, Description: "Region of the zone."},
				}},
			},
			"names": schema.ListAttribute{
				Computed: true, ElementType: types.StringType,
				Description: "Zone names, in the same order.",
			},
		},
	}
}

func (d *zonesDataSource) Read(ctx context.Context, req datasource.ReadRequest, resp *datasource.ReadResponse) {
	var m zonesModel
	if !loadConfigured(ctx, d.data, &resp.Diagnostics, get(req.Config, &m)) {
		return
	}
	region := regionFilter(m.Region, d.data)
	zones, err := d.data.client.ListZones(ctx, region)
	if err != nil {
		addAPIError(&resp.Diagnostics, "Cannot list zones", err, listFieldResolver(map[string]bool{"region": true}, nil))
		return
	}
	if len(zones) == 0 && region != "" {
		resp.Diagnostics.AddAttributeError(path.Root("region"), "No zones found",
			fmt.Sprintf("Region %q has no zones; is the region name right?", region))
		return
	}
	slices.SortFunc(zones, func(a, b exampleapi.Zone) int { return strings.Compare(a.Name, b.Name) })
	m.Region = optionalString(region)
	m.Zones, m.Names = listValues(ctx, zones, zoneAttrTypes,
		func(z *exampleapi.Zone) any {
			return zoneModel{Name: types.StringValue(z.Name), Region: types.StringValue(z.Region)}
		},
		func(z *exampleapi.Zone) string { return z.Name }, &resp.Diagnostics)
	resp.Diagnostics.Append(resp.State.Set(ctx, &m)...)
}
