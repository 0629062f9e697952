package tfprovider

import (
	"context"
	"strings"

	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/example/cloud-provider-example/exampleapi"
)

// writeOnlyUnsupported explains why a client without write-only support
// cannot manage certificates.
const writeOnlyUnsupported = "example_certificate takes the private key as a write-only argument (private_key_wo), " +
	"so that the key reaches neither the plan nor the state. This Terraform client did not announce support for " +
	"write-only arguments: Terraform 1.11 and later do; OpenTofu 1.10 does not (it would keep the key in its " +
	"plans and state, so the provider refuses it). Manage certificates with Terraform 1.11 or later."

// ValidateConfig refuses a client without write-only arguments, and
// checks the certificate and the key the way the cloud will, so a bad or
// mismatched pair fails the plan. Messages never quote the key.
func (r *certificateResource) ValidateConfig(ctx context.Context, req resource.ValidateConfigRequest, resp *resource.ValidateConfigResponse) {
	if !req.ClientCapabilities.WriteOnlyAttributesAllowed {
		resp.Diagnostics.AddAttributeError(path.Root("private_key_wo"), "Write-only arguments are not supported by this client",
			writeOnlyUnsupported)
	}
	var cert, key types.String
	resp.Diagnostics.Append(req.Config.GetAttribute(ctx, path.Root("certificate_pem"), &cert)...)
	resp.Diagnostics.Append(req.Config.GetAttribute(ctx, path.Root("private_key_wo"), &key)...)
	if resp.Diagnostics.HasError() || cert.IsNull() || cert.IsUnknown() {
		return
	}
	if _, err := exampleapi.InspectCertificate(cert.ValueString()); err != nil {
		resp.Diagnostics.AddAttributeError(path.Root("certificate_pem"), "Invalid certificate",
			"certificate_pem "+providerWords(err.Error())+".")
		return
	}
	if key.IsNull() || key.IsUnknown() {
		return
	}
	if err := exampleapi.CheckPrivateKey(cert.ValueString(), key.ValueString()); err != nil {
		resp.Diagnostics.AddAttributeError(path.Root("private_key_wo"), "Invalid private key",
			"private_key_wo "+providerWords(err.Error())+".")
	}
}

// providerWords renames the API's key field in a shared message.
func providerWords(msg string) string {
	return strings.ReplaceAll(msg, "private_key_pem", "private_key_wo")
}

// ModifyPlan defaults region, shows what the certificate says (fingerprint,
// names, validity) and the derived name at plan time, and replaces the
// certificate when its name or key version changes, except for the first
// version recorded after an import.
func (r *certificateResource) ModifyPlan(ctx context.Context, req resource.ModifyPlanRequest, resp *resource.ModifyPlanResponse) {
	if req.Plan.Raw.IsNull() {
		return // destroy
	}
	if planRegion(ctx, r.data, req, resp); resp.Diagnostics.HasError() {
		return
	}
	var plan certificateModel
	var cfgName types.String
	resp.Diagnostics.Append(resp.Plan.Get(ctx, &plan)...)
	resp.Diagnostics.Append(req.Config.GetAttribute(ctx, path.Root("name"), &cfgName)...)
	var state *certificateModel
	if !req.State.Raw.IsNull() {
		state = &certificateModel{}
		resp.Diagnostics.Append(req.State.Get(ctx, state)...)
	}
	if resp.Diagnostics.HasError() {
		return
	}
	if plan.CertificatePEM.IsUnknown() {
		plan.setInfoUnknown()
		if cfgName.IsNull() {
			plan.Name = types.StringUnknown()
		}
	} else {
		info, err := exampleapi.InspectCertificate(plan.CertificatePEM.ValueString())
		if err != nil {
			return // reported by ValidateConfig
		}
		plan.setInfo(info)
		if cfgName.IsNull() {
			plan.Name = types.StringValue(derivedCertificateName(info.Fingerprint))
			if state != nil && state.Fingerprint.ValueString() == info.Fingerprint {
				plan.Name = state.Name // e.g. imported under another name
			}
		}
	}
	if state != nil {
		if !plan.Name.IsUnknown() && !plan.Name.Equal(state.Name) {
			resp.RequiresReplace.Append(path.Root("name"))
		}
		if !plan.PrivateKeyWOVersion.Equal(state.PrivateKeyWOVersion) {
			mark, diags := req.Private.GetKey(ctx, importedKey)
			resp.Diagnostics.Append(diags...)
			if len(mark) == 0 || !state.PrivateKeyWOVersion.IsNull() {
				resp.RequiresReplace.Append(path.Root("private_key_wo_version"))
			}
		}
	}
	resp.Diagnostics.Append(resp.Plan.Set(ctx, plan)...)
}
