package tfprovider

import (
	"context"
	"fmt"

	"github.com/hashicorp/terraform-plugin-framework-validators/listvalidator"
	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/example/cloud-provider-example/exampleapi"
)

// A rule backend's TLS (exampleapi.BackendTLS): its schema and conversion
// to and from the API. The checks are the cloud's own, so a plan refuses
// what an apply would.

func backendTLSAttribute() schema.SingleNestedAttribute {
	check := func(summary string, f func(string) error) validator.String {
		return stringCheck{description: summary, summary: summary, check: func(s string) error { return sentence(f(s)) }}
	}
	return schema.SingleNestedAttribute{
		Optional: true,
		Description: "Re-encrypt to the pool's targets: the load balancer speaks HTTP/1.1 over TLS to them, sends " +
			"`server_name` as the SNI name and verifies their certificate against `ca_bundle`. A target whose certificate " +
			"does not verify is not reached: the request gets `502`. Not with `protocol = \"h2c\"`; `http` and `https` " +
			"listeners only.",
		Attributes: map[string]schema.Attribute{
			"ca_bundle": schema.StringAttribute{
				Required: true,
				Description: fmt.Sprintf("The CA certificates the targets' certificates must be issued by: PEM `CERTIFICATE` "+
					"blocks only (1-%d, at most %d KiB), with nothing but whitespace around them.",
					exampleapi.MaxCABundleCertificates, exampleapi.MaxCABundleBytes>>10),
				Validators: []validator.String{check("Invalid CA bundle", exampleapi.CheckCABundle)},
			},
			"server_name": schema.StringAttribute{
				Required: true,
				Description: "The SNI name sent, a lower-case DNS name without a wildcard; without `subject_alt_names`, the " +
					"name the target's certificate must be valid for.",
				Validators: []validator.String{check("Invalid server name", exampleapi.CheckServerName)},
			},
			"subject_alt_names": schema.ListAttribute{
				Optional:    true,
				ElementType: types.StringType,
				Description: fmt.Sprintf("Names the target's certificate must hold one of instead of `server_name` (at most %d, "+
					"distinct): a DNS name, or a URI with its scheme, such as a SPIFFE id `spiffe://trust.domain/workload`. "+
					"Unset: `server_name`.", exampleapi.MaxSubjectAltNames),
				Validators: []validator.List{listvalidator.SizeAtMost(exampleapi.MaxSubjectAltNames), listvalidator.UniqueValues(),
					listvalidator.ValueStringsAre(check("Invalid subject alt name", exampleapi.CheckSubjectAltName))},
			},
		},
	}
}

type backendTLSModel struct {
	CABundle        types.String `tfsdk:"ca_bundle"`
	ServerName      types.String `tfsdk:"server_name"`
	SubjectAltNames types.List   `tfsdk:"subject_alt_names"`
}

var backendTLSType = objectType(backendTLSAttribute())

// backendTLSToAPI is o as the API's backend TLS; null or unknown is nil.
func backendTLSToAPI(ctx context.Context, o types.Object, diags *diag.Diagnostics) *exampleapi.BackendTLS {
	m, ok := objectAs[backendTLSModel](ctx, o, diags)
	if !ok {
		return nil
	}
	return &exampleapi.BackendTLS{CABundle: m.CABundle.ValueString(), ServerName: m.ServerName.ValueString(),
		SubjectAltNames: listStrings(ctx, m.SubjectAltNames, diags)}
}

// backendTLSFromAPI is the tls attribute of the API's, for the backend
// at index i of prior's backends; no names read as null unless that
// backend has them an empty list.
func backendTLSFromAPI(t *exampleapi.BackendTLS, prior types.List, i int, diags *diag.Diagnostics) types.Object {
	if t == nil {
		return types.ObjectNull(backendTLSType.AttrTypes)
	}
	var was backendTLSModel
	if isKnown(prior) && i < len(prior.Elements()) {
		if b, ok := knownAs[ruleBackendModel](context.Background(), prior.Elements()[i]); ok {
			was, _ = knownAs[backendTLSModel](context.Background(), b.TLS)
		}
	}
	return objectValue(backendTLSType, map[string]attr.Value{"ca_bundle": types.StringValue(t.CABundle),
		"server_name": types.StringValue(t.ServerName), "subject_alt_names": optionalStringList(t.SubjectAltNames, was.SubjectAltNames)}, diags)
}
