package tfprovider

import (
	"maps"

	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/datasource/schema"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/example/cloud-provider-example/exampleapi"
)

// instanceModel is one instance as the data sources expose it.
type instanceModel struct {
	ID          types.String `tfsdk:"id"`
	Name        types.String `tfsdk:"name"`
	Type        types.String `tfsdk:"type"`
	Region      types.String `tfsdk:"region"`
	Zone        types.String `tfsdk:"zone"`
	State       types.String `tfsdk:"state"`
	PrivateIPv4 types.String `tfsdk:"private_ipv4"`
	PublicIPv4  types.String `tfsdk:"public_ipv4"`
	IPv6        types.String `tfsdk:"ipv6"`
	Tags        types.Map    `tfsdk:"tags"`
	CreatedAt   types.String `tfsdk:"created_at"`
}

// instanceDescriptions documents every instance attribute once for both
// data sources.
var instanceDescriptions = map[string]string{
	"id":           "Instance id (`i-...`).",
	"name":         "Name, unique per region.",
	"type":         "Instance type, e.g. `standard-2`.",
	"region":       "Region of the instance.",
	"zone":         "Zone of the instance, e.g. `ex-west-1a`.",
	"state":        "`running` or `stopped`.",
	"private_ipv4": "Private IPv4 address.",
	"public_ipv4":  "Public IPv4 address, null when it has none.",
	"ipv6":         "IPv6 address, null when it has none.",
	"tags":         "Tags (an empty map when there are none).",
	"created_at":   "Creation time (RFC 3339, UTC).",
}

// instanceComputedAttributes are the all-computed attributes of an
// instance, as used inside example_instances' list.
func instanceComputedAttributes() map[string]schema.Attribute {
	attrs := map[string]schema.Attribute{}
	for name, desc := range instanceDescriptions {
		if name == "tags" {
			attrs[name] = schema.MapAttribute{Computed: true, ElementType: types.StringType, Description: desc}
			continue
		}
		attrs[name] = schema.StringAttribute{Computed: true, Description: desc}
	}
	return attrs
}

func instanceFromAPI(in *exampleapi.Instance) instanceModel {
	tags := map[string]attr.Value{}
	for k, v := range maps.All(in.Tags) {
		tags[k] = types.StringValue(v)
	}
	return instanceModel{
		ID:          types.StringValue(in.ID),
		Name:        types.StringValue(in.Name),
		Type:        types.StringValue(in.Type),
		Region:      types.StringValue(in.Region),
		Zone:        types.StringValue(in.Zone),
		State:       types.StringValue(in.State),
		PrivateIPv4: optionalString(in.PrivateIPv4),
		PublicIPv4:  optionalString(in.PublicIPv4),
		IPv6:        optionalString(in.IPv6),
		Tags:        types.MapValueMust(types.StringType, tags),
		CreatedAt:   timeString(in.CreatedAt),
	}
}

// regionFilter is the region a data source looks in: its own region
// argument, else the provider's, else "" (all regions).
func regionFilter(v types.String, d *providerData) string {
	if !v.IsNull() && !v.IsUnknown() {
		return v.ValueString()
	}
	return d.region
}
