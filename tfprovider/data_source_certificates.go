package tfprovider

import (
	"context"

	"github.com/hashicorp/terraform-plugin-framework/datasource"
	"github.com/hashicorp/terraform-plugin-framework/datasource/schema"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/example/cloud-provider-example/exampleapi"
)

// NewCertificatesDataSource is the example_certificates data source.
func NewCertificatesDataSource() datasource.DataSource {
	return &dataSource[certificatesModel]{name: "certificates", schema: certificatesSchema(), read: readCertificates}
}

type certificatesModel struct {
	Name         types.String           `tfsdk:"name"`
	Region       types.String           `tfsdk:"region"`
	Certificates []certificateInfoModel `tfsdk:"certificates"`
	IDs          []string               `tfsdk:"ids"`
}

func certificatesSchema() schema.Schema {
	str := func(desc string) schema.StringAttribute {
		return schema.StringAttribute{Computed: true, Description: desc}
	}
	return schema.Schema{
		Description: "Lists the certificates matching the filters, ordered by id, with what the cloud shows of them " +
			"(never a private key), e.g. to find certificates close to `not_after`, or the ones of a name during a rotation.",
		Attributes: map[string]schema.Attribute{
			"name": schema.StringAttribute{Optional: true, Description: "Only the certificates with this name (names are not unique)."},
			"region": regionFilterAttribute("Only certificates of this region. Defaults to the provider's `region`; " +
				"without either, certificates of every region are listed."),
			"certificates": listedObjects("The matching certificates.", map[string]schema.Attribute{
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
			}),
			"ids": listedKeys("Ids of the matching certificates, in the same order."),
		},
	}
}

// readCertificates lists the certificates matching the filters.
func readCertificates(ctx context.Context, data *providerData, m *certificatesModel, diags *diag.Diagnostics) {
	f := exampleapi.CertificateFilter{Name: m.Name.ValueString(), Region: regionFilter(m.Region, data)}
	list, err := data.client.ListCertificates(ctx, f)
	if err != nil {
		addAPIError(diags, "Cannot list certificates", err, nil)
		return
	}
	m.Region = optionalString(f.Region)
	m.Certificates, m.IDs = listed(list,
		func(c *exampleapi.Certificate) certificateInfoModel {
			return certificateInfoFromAPI(c, types.MapNull(types.StringType), diags)
		},
		func(c *exampleapi.Certificate) string { return c.ID })
}
