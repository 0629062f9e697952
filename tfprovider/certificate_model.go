package tfprovider

import (
	"time"

	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/example/cloud-provider-example/exampleapi"
)

// certificateInfoModel is what the cloud shows of a certificate: an
// element of the example_certificates data source, and most of the
// example_certificate resource.
type certificateInfoModel struct {
	ID             types.String `tfsdk:"id"`
	Name           types.String `tfsdk:"name"`
	Region         types.String `tfsdk:"region"`
	CertificatePEM types.String `tfsdk:"certificate_pem"`
	Fingerprint    types.String `tfsdk:"fingerprint"`
	CommonName     types.String `tfsdk:"common_name"`
	DNSNames       types.List   `tfsdk:"dns_names"`
	NotBefore      types.String `tfsdk:"not_before"`
	NotAfter       types.String `tfsdk:"not_after"`
	Tags           types.Map    `tfsdk:"tags"`
	CreatedAt      types.String `tfsdk:"created_at"`
}

// certificateModel is the example_certificate resource. PrivateKeyWO is
// write-only: Terraform hands it to the provider in the configuration
// only, and the plan and state always hold null.
type certificateModel struct {
	certificateInfoModel
	PrivateKeyWO        types.String `tfsdk:"private_key_wo"`
	PrivateKeyWOVersion types.Int64  `tfsdk:"private_key_wo_version"`
	OnDuplicate         types.String `tfsdk:"on_duplicate"`
	DeleteLeftovers     types.Bool   `tfsdk:"delete_leftovers"`
}

// derivedCertificateName is the name of a certificate whose configuration
// sets none: one per certificate, so a rotation's new certificate has its
// own, and readable next to its fingerprint.
func derivedCertificateName(fingerprint string) string {
	return "cert-" + fingerprint[:min(16, len(fingerprint))]
}

// setInfo fills the attributes read from the certificate's leaf; the
// provider computes them at plan time with the cloud's own function
// (exampleapi.InspectCertificate), so plans show them.
func (m *certificateInfoModel) setInfo(info exampleapi.CertificateInfo) {
	m.Fingerprint = types.StringValue(info.Fingerprint)
	m.CommonName = optionalString(info.CommonName)
	m.DNSNames = stringList(info.DNSNames)
	m.NotBefore = types.StringValue(info.NotBefore.UTC().Format(time.RFC3339))
	m.NotAfter = types.StringValue(info.NotAfter.UTC().Format(time.RFC3339))
}

// setInfoUnknown marks the leaf's attributes unknown, for a certificate
// known only at apply time.
func (m *certificateInfoModel) setInfoUnknown() {
	m.Fingerprint, m.CommonName = types.StringUnknown(), types.StringUnknown()
	m.DNSNames = types.ListUnknown(types.StringType)
	m.NotBefore, m.NotAfter = types.StringUnknown(), types.StringUnknown()
}

// stringList is a list of strings, empty (not null) when there are none:
// dns_names is computed, so it is always known once the certificate is.
func stringList(vals []string) types.List {
	elems := make([]attr.Value, len(vals))
	for i, v := range vals {
		elems[i] = types.StringValue(v)
	}
	return types.ListValueMust(types.StringType, elems)
}

// certificateFromAPI is the state of a certificate; prior (plan or state)
// supplies what the API does not know: the key's version,
// on_duplicate and delete_leftovers. The key itself is never in state.
func certificateFromAPI(c *exampleapi.Certificate, prior certificateModel) (certificateModel, diag.Diagnostics) {
	var diags diag.Diagnostics
	return certificateModel{
		certificateInfoModel: certificateInfoFromAPI(c, prior.Tags, &diags),
		PrivateKeyWO:         types.StringNull(),
		PrivateKeyWOVersion:  prior.PrivateKeyWOVersion,
		OnDuplicate:          prior.OnDuplicate,
		DeleteLeftovers:      prior.DeleteLeftovers,
	}, diags
}

// certificateInfoFromAPI converts the API object; priorTags keeps an
// empty tags map empty (see stringMap).
func certificateInfoFromAPI(c *exampleapi.Certificate, priorTags types.Map, diags *diag.Diagnostics) certificateInfoModel {
	m := certificateInfoModel{
		ID:             types.StringValue(c.ID),
		Name:           types.StringValue(c.Name),
		Region:         types.StringValue(c.Region),
		CertificatePEM: types.StringValue(c.CertificatePEM),
		Tags:           stringMap(c.Tags, priorTags, diags),
		CreatedAt:      timeString(c.CreatedAt),
	}
	m.setInfo(c.CertificateInfo)
	return m
}
