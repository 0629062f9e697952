package tfprovider

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/hashicorp/terraform-plugin-framework-validators/int64validator"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"github.com/hashicorp/terraform-plugin-log/tflog"

	"github.com/example/cloud-provider-example/exampleapi"
)

var (
	_ resource.ResourceWithConfigure      = (*certificateResource)(nil)
	_ resource.ResourceWithImportState    = (*certificateResource)(nil)
	_ resource.ResourceWithModifyPlan     = (*certificateResource)(nil)
	_ resource.ResourceWithValidateConfig = (*certificateResource)(nil)
)

type certificateResource struct {
	resourceBase
}

// NewCertificateResource is the example_certificate resource.
func NewCertificateResource() resource.Resource {
	return &certificateResource{resourceBase{name: "certificate"}}
}

func (r *certificateResource) Schema(_ context.Context, _ resource.SchemaRequest, resp *resource.SchemaResponse) {
	computed := func(desc string) schema.StringAttribute {
		return schema.StringAttribute{Computed: true, Description: desc}
	}
	resp.Schema = schema.Schema{
		Description: "A TLS certificate with its private key, served by `https` listeners of `example_load_balancer` " +
			"(`certificate_ids`). The private key is a write-only argument (`private_key_wo`): Terraform passes it to the " +
			"provider, which uploads it, and it reaches neither the plan nor the state (the cloud never returns it either). " +
			"Write-only arguments need Terraform 1.11 or later (OpenTofu 1.10 does not support them). A certificate " +
			"cannot change in the cloud: changing `certificate_pem`, `private_key_wo_version`, `name`, `region` or `tags` " +
			"replaces it. To rotate, change `certificate_pem` and `private_key_wo` and bump `private_key_wo_version`, " +
			"with `lifecycle { create_before_destroy = true }`: Terraform then uploads the new certificate, updates the " +
			"load balancers that use it in place (their `certificate_ids`), and only then deletes the old one (the cloud " +
			"refuses to delete a certificate in use, so without it the apply fails at the deletion).",
		Attributes: map[string]schema.Attribute{
			"id": computedStable("Certificate id (`cert-...`)."),
			"name": schema.StringAttribute{
				Optional: true,
				Computed: true,
				Description: "Name (not unique: during a rotation the old and the new certificate may share it). Unset, it is " +
					"`cert-` and the first 16 hex digits of `fingerprint`, known at plan time, so each certificate has its own. " +
					"Changing it replaces the certificate.",
				Validators: nameValidators(),
				// Planned in ModifyPlan, which also replaces on a change.
			},
			"region": regionAttribute("Region, e.g. `ex-west-1`. Defaults to the provider's `region`. Only load balancers of the same " +
				"region can use the certificate. Changing it replaces the certificate."),
			"certificate_pem": immutableString(fmt.Sprintf("The PEM certificate, then its intermediates, each issued by the next (at most %d "+
				"certificates); RSA, ECDSA or Ed25519. Checked at plan time: what the cloud would refuse fails the plan. "+
				"An expired certificate is accepted (see `not_after`). Changing it replaces the certificate.",
				exampleapi.MaxCertificateChain)),
			"private_key_wo": schema.StringAttribute{
				Required:  true,
				WriteOnly: true,
				Sensitive: true,
				Description: fmt.Sprintf("The unencrypted PEM private key of the certificate (PKCS #8, PKCS #1 or SEC 1; RSA keys of "+
					"at least %d bits), checked against the certificate at plan time. Write-only: it is sent to the cloud on "+
					"create and stored in no plan and no state, so Terraform cannot see it change: bump "+
					"`private_key_wo_version` to upload a new key (it comes with a new `certificate_pem` anyway).",
					exampleapi.MinRSAKeyBits),
			},
			"private_key_wo_version": schema.Int64Attribute{
				Optional: true,
				Description: "Any number, stored in state, to change whenever the key changes: write-only arguments are not " +
					"compared between plans, so this is what makes Terraform replace the certificate (and upload the key). " +
					"After an import the first apply only records it.",
				Validators: []validator.Int64{int64validator.AtLeast(0)},
			},
			"tags": replacedTags(fmt.Sprintf("Key/value tags (at most %d). Changing them replaces the certificate.", exampleapi.MaxTags)),
			"on_duplicate": choiceAttribute(fmt.Sprintf("What a create does when the cloud already has the certificate it would upload: same name, "+
				"region, `certificate_pem` and `tags`, and used by no load balancer. That is one an apply uploaded and could not "+
				"record (killed, or its state backend down), holding a copy of the private key. `%s` (default) uploads another; "+
				"`%s` takes it over, with a warning, so no copy of the key is left behind (the cloud checked the key against "+
				"that certificate when it was uploaded); one used only by load balancers with the same tags counts too (the "+
				"apply had moved its load balancer to it). With it, do not bump `private_key_wo_version` without a new "+
				"`certificate_pem`. Changes in place.", onDuplicateUpload, onDuplicateAdopt), onDuplicateUpload, onDuplicateAdopt),
			"delete_leftovers": schema.BoolAttribute{
				Optional: true,
				Description: "When `true`, a create also deletes the certificates of its region with exactly its `tags` that no " +
					"load balancer uses and that this terraform command did not upload: what applies left that uploaded a " +
					"certificate and could not record it, after the configuration moved on (a new `certificate_pem` before " +
					"the next apply), so `on_duplicate` cannot take them over. Only for tags that name one configuration and " +
					"certificates it keeps attached (the controller's tags name the cluster and the Service): a certificate of " +
					"the same tags kept unattached would be deleted. Each deletion is a warning. Changes in place.",
			},
			"fingerprint": computed("SHA-256 of the leaf certificate (DER), lowercase hex."),
			"common_name": computed("The leaf's subject common name, null if it has none."),
			"dns_names": schema.ListAttribute{
				Computed: true, ElementType: stringType,
				Description: "The leaf's DNS subject alternative names, as the certificate lists them.",
			},
			"not_before": computed("Start of the leaf's validity (RFC 3339, UTC)."),
			"not_after":  computed("When the leaf expires (RFC 3339, UTC): watch it, the cloud serves expired certificates."),
			"created_at": computedStable("Upload time (RFC 3339, UTC)."),
		},
	}
}

func (r *certificateResource) Create(ctx context.Context, req resource.CreateRequest, resp *resource.CreateResponse) {
	var plan certificateModel
	var key types.String
	// The write-only key is in the configuration only.
	if !loadConfigured(ctx, r.data, &resp.Diagnostics, get(req.Plan, &plan),
		getAttribute(req.Config, path.Root("private_key_wo"), &key)) {
		return
	}
	if key.IsNull() || key.IsUnknown() {
		resp.Diagnostics.AddAttributeError(path.Root("private_key_wo"), "Missing private key",
			"private_key_wo has no value at apply time. It is write-only, so it must be in the configuration of every "+
				"apply that creates the certificate, and this Terraform must support write-only arguments (Terraform 1.11 or later).")
		return
	}
	in := exampleapi.CreateCertificateRequest{
		Name:           plan.Name.ValueString(),
		Region:         plan.Region.ValueString(),
		CertificatePEM: plan.CertificatePEM.ValueString(),
		PrivateKeyPEM:  key.ValueString(),
	}
	in.Tags = knownStringMap(ctx, plan.Tags, &resp.Diagnostics)
	// One create at a time per terraform command: a sweep must not see
	// another create's upload before it is known as this command's.
	r.data.uploads.mu.Lock()
	defer r.data.uploads.mu.Unlock()
	var cert *exampleapi.Certificate
	if plan.OnDuplicate.ValueString() == onDuplicateAdopt {
		found, err := r.unrecorded(ctx, in)
		if err != nil {
			addAPIError(&resp.Diagnostics, "Cannot look for a certificate an interrupted apply uploaded", err, nil)
			return
		}
		if found != nil {
			resp.Diagnostics.AddWarning("Certificate adopted",
				fmt.Sprintf("Certificate %s (%s), uploaded %s by an apply that could not record it, is the one this configuration "+
					"uploads (same name, region, certificate and tags; used by no load balancer): on_duplicate = %q took it over "+
					"instead of uploading another copy of the key.", found.ID, found.Name, found.CreatedAt.Format(time.RFC3339), onDuplicateAdopt))
			cert = found
		}
	}
	if cert == nil {
		var err error
		if cert, err = r.create(ctx, in); err != nil {
			addAPIError(&resp.Diagnostics, "Cannot create certificate", err, certificateFieldResolver)
			return
		}
	}
	r.data.uploads.add(cert.ID)
	if plan.DeleteLeftovers.ValueBool() {
		r.sweep(ctx, cert, &resp.Diagnostics)
	}
	tflog.Info(ctx, "created certificate", map[string]any{"certificate_id": cert.ID, "fingerprint": cert.Fingerprint})
	setFromAPI(ctx, &resp.State, &resp.Diagnostics, cert, plan, certificateFromAPI)
}

// create uploads the certificate (see createDetached). After a lost
// answer, a certificate of this name, region and fingerprint uploaded
// since we started is ours (names are not unique, the fingerprint makes
// the match).
func (r *certificateResource) create(ctx context.Context, in exampleapi.CreateCertificateRequest) (*exampleapi.Certificate, error) {
	return createDetached(ctx, objectTimeout, func(ctx context.Context) (*exampleapi.Certificate, error) {
		return r.data.client.CreateCertificate(ctx, in)
	}, lostNamed("certificate", "taking the certificate found by name and fingerprint",
		func(ctx context.Context) ([]exampleapi.Certificate, error) {
			info, err := exampleapi.InspectCertificate(in.CertificatePEM)
			if err != nil {
				return nil, err
			}
			found, err := r.data.client.ListCertificates(ctx, exampleapi.CertificateFilter{Name: in.Name, Region: in.Region})
			return slices.DeleteFunc(found, func(c exampleapi.Certificate) bool { return c.Fingerprint != info.Fingerprint }), err
		}, certificateNamed))
}

func (r *certificateResource) Read(ctx context.Context, req resource.ReadRequest, resp *resource.ReadResponse) {
	refresh(ctx, r.data, req, resp, "certificate", (*exampleapi.Client).GetCertificate, certificateFromAPI)
}

// Update only records private_key_wo_version after an import (see
// ModifyPlan), on_duplicate and delete_leftovers: every change of the
// certificate itself replaces it.
func (r *certificateResource) Update(ctx context.Context, req resource.UpdateRequest, resp *resource.UpdateResponse) {
	var plan, state certificateModel
	resp.Diagnostics.Append(req.Plan.Get(ctx, &plan)...)
	resp.Diagnostics.Append(req.State.Get(ctx, &state)...)
	if resp.Diagnostics.HasError() {
		return
	}
	state.PrivateKeyWOVersion, state.OnDuplicate, state.DeleteLeftovers = plan.PrivateKeyWOVersion, plan.OnDuplicate, plan.DeleteLeftovers
	resp.Diagnostics.Append(resp.Private.SetKey(ctx, importedKey, nil)...)
	resp.Diagnostics.Append(resp.State.Set(ctx, state)...)
}

func (r *certificateResource) Delete(ctx context.Context, req resource.DeleteRequest, resp *resource.DeleteResponse) {
	deleteByID(ctx, r.data, req, resp, deletion{kind: "certificate", timeout: objectTimeout,
		del: (*exampleapi.Client).DeleteCertificate, inUse: certificateInUse})
}

// certificateInUse is the way out when the cloud refuses to delete a
// certificate that listeners serve.
const certificateInUse = "The Example cloud does not delete a certificate that https listeners still serve. Point them " +
	"at another certificate (certificate_ids) or delete them, then apply again; the certificate stays in state " +
	"until then. If the load balancers are in this configuration, set lifecycle { create_before_destroy = true } " +
	"on the certificate: a replacement then uploads the new certificate and updates the load balancers before it " +
	"deletes the old one, instead of deleting first."

// ImportState checks the certificate exists. An imported certificate has
// no key in Terraform (there never is one in state, and the cloud does not
// return it): the configuration must still give private_key_wo, which the
// next plan checks against the certificate.
func (r *certificateResource) ImportState(ctx context.Context, req resource.ImportStateRequest, resp *resource.ImportStateResponse) {
	cert := importByID(ctx, r.data, "certificate", "cert-", req, resp, (*exampleapi.Client).GetCertificate, certificateNamed)
	if cert == nil {
		return
	}
	// Not the cloud's: the default, as a create would have had it.
	resp.Diagnostics.Append(resp.State.SetAttribute(ctx, path.Root("on_duplicate"), onDuplicateUpload)...)
}

func certificateNamed(c *exampleapi.Certificate) namedObject {
	return namedObject{ID: c.ID, Name: c.Name, Region: c.Region, Tags: c.Tags, CreatedAt: c.CreatedAt}
}

// certificateFieldResolver maps the API's field names onto attributes;
// the key is private_key_wo here.
func certificateFieldResolver(field string) (path.Path, bool) {
	switch field {
	case "name", "region", "certificate_pem", "tags":
		return path.Root(field), true
	case "private_key_pem":
		return path.Root("private_key_wo"), true
	}
	return path.Empty(), false
}
