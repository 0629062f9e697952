package tfprovider

import (
	"context"

	"github.com/hashicorp/terraform-plugin-framework/datasource"
	"github.com/hashicorp/terraform-plugin-framework/datasource/schema"
	"github.com/hashicorp/terraform-plugin-framework/diag"

	"github.com/example/cloud-provider-example/exampleapi"
)

// NewAddressDataSource is the example_address data source.
func NewAddressDataSource() datasource.DataSource {
	return &dataSource[addressModel]{name: "address", schema: addressDataSchema(), validators: addressLookup.validators(), read: readAddress}
}

var addressLookup = lookup[exampleapi.Address]{
	kind: "address", idPrefix: "addr-",
	get: (*exampleapi.Client).GetAddress,
	list: func(c *exampleapi.Client, ctx context.Context, name, region string) ([]exampleapi.Address, error) {
		return c.ListAddresses(ctx, exampleapi.AddressFilter{Name: name, Region: region})
	},
	byIP: func(c *exampleapi.Client, ctx context.Context, ip string) ([]exampleapi.Address, error) {
		return c.ListAddresses(ctx, exampleapi.AddressFilter{IP: ip})
	},
	ambiguous: namedInRegions("addresses"),
}

func addressDataSchema() schema.Schema {
	computed := func(desc string) schema.StringAttribute {
		return schema.StringAttribute{Computed: true, Description: desc}
	}
	return addressLookup.schema("Reads one reserved address (`example_address`) by id, by name or by its IP, e.g. to attach "+
		"an address another configuration reserved, or to find what holds an IP.",
		"Id (`addr-...`) of the address.", "Name of the address, unique per region.", map[string]schema.Attribute{
			"family":           computed("`ipv4` or `ipv6`."),
			"load_balancer_id": computed("Id (`lb-...`) of the load balancer the address is attached to, null when none."),
			"tags":             schema.MapAttribute{Computed: true, ElementType: stringType, Description: "Key/value tags."},
			"created_at":       computed("Creation time (RFC 3339, UTC)."),
		})
}

func readAddress(ctx context.Context, data *providerData, m *addressModel, diags *diag.Diagnostics) {
	var a *exampleapi.Address
	if !m.IP.IsNull() {
		a = addressLookup.readByIP(ctx, data.client, m.IP, m.Region, diags)
	} else {
		a = addressLookup.read(ctx, data, m.ID, m.Name, m.Region, diags)
	}
	if a == nil {
		return
	}
	// A data source has no prior state: empty tags read as null.
	got, d := addressFromAPI(a, addressModel{})
	diags.Append(d...)
	*m = got
}
