package tfprovider

import (
	"context"

	"github.com/hashicorp/terraform-plugin-framework/datasource"
	"github.com/hashicorp/terraform-plugin-framework/datasource/schema"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/example/cloud-provider-example/exampleapi"
)

var _ datasource.DataSourceWithConfigure = (*certificatesDataSource)(nil)

type certificatesDataSource struct {
	dataSourceBase
}

// NewCertificatesDataSource is the example_certificates data source.
func NewCertificatesDataSource() datasource.DataSource {
	return &certificatesDataSource{dataSourceBase{name: "certificates"}}
}

type certificatesModel struct {
	Name         types.String `tfsdk:"name"`
	Region       types.String `tfsdk:"region"`
	Certificates types.List   `tfsdk:"certificates"`
	IDs          types.List   `tfsdk:"ids"`
}

func (d *certificatesDataSource) Schema(_ context.Context, _ datasource.SchemaRequest, resp *datasource.SchemaResponse) {
	str := func(desc string) schema.StringAttribute {
		return schema.StringAttribute{Computed: true, Description: desc}
	}
	resp.Schema = schema.Schema{
		Description: "Lists the certificates matching the filters, ordered by id, with what the cloud shows of them " +
			"(never a private key), e.g. to find certificates close to `not_after`, or the ones of a name during a rotation.",
		Attributes: map[string]schema.Attribute{
			"name": schema.StringAttribute{Optional: true, Description: "Only the certificates with this name (names are not unique)."},
			"region": schema.StringAttribute{
				Optional: true, Computed: true,
				Description: "Only certificates of this region. Defaults to the provider's `region`; " +
					"without either, certificates of every region are listed.",
			},
			"certificates": schema.ListNestedAttribute{
				Computed:    true,
				Description: "The matching certificates.",
				NestedObject: schema.NestedAttributeObject{Attributes: map[string]schema.Attribute{
					"id":              str("Certificate id (`cert-...`)."),
					"name":            str("Name."),
					"region":          str("Region."),
					"certificate_pem": str("The certificate chain as uploaded."),
					"fingerprint":     str("SHA-256 of the leaf certificate (DER), lowercase hex."),
					"common_name":     str("The leaf's subject common name, null if none."),
					"dns_names": schema.ListAttribute{Computed: true, ElementType: types.StringType,
						Description: "The leaf's DNS subject alternative names."},
					"not_before": str("Start of the leaf's validity (RFC 3339, UTC)."),
					"not_after":  str("When the leaf expires (RFC 3339, UTC)."),
					"tags": schema.MapAttribute{Computed: true, ElementType: types.StringType,
						Description: "Tags, null if none."},
					"created_at": str("Upload time (RFC 3339, UTC)."),
				}},
			},
			"ids": schema.ListAttribute{
				Computed: true, ElementType: types.StringType,
				Description: "Ids of the matching certificates, in the same order.",
			},
		},
	}
}

func (d *certificatesDataSource) Read(ctx context.Context, req datasource.ReadRequest, resp *datasource.ReadResponse) {
	var m certificatesModel
	if !loadConfigured(ctx, d.data, &resp.Diagnostics, get(req.Config, &m)) {
		return
	}
	f := exampleapi.CertificateFilter{Name: m.Name.ValueString(), Region: regionFilter(m.Region, d.data)}
	list, err := d.data.client.ListCertificates(ctx, f)
	if err != nil {
		addAPIError(&resp.Diagnostics, "Cannot list certificates", err, nil)
		return
	}
	m.Region = optionalString(f.Region)
	m.Certificates, m.IDs = listValues(ctx, list, certificateAttrTypes,
		func(c *exampleapi.Certificate) any { return certificateInfoFromAPI(c, &resp.Diagnostics) },
		func(c *exampleapi.Certificate) string { return c.ID }, &resp.Diagnostics)
	resp.Diagnostics.Append(resp.State.Set(ctx, &m)...)
}
