package tfprovider

import (
	"context"
	"fmt"
	"sort"
	"strings"

	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/example/cloud-provider-example/exampleapi"
)

// checkCertificateOwners refuses, at plan, a listener that names a
// certificate of another tenant: one whose tenant tags
// (exampleapi.TenantTags) differ from the load balancer's tags. The
// controller decides who may name which certificate before it renders;
// this is the same rule where any configuration passes, so a hand-written
// one cannot serve another team's certificate either. Ids not yet known
// (certificates created in the same apply) are checked when Terraform
// plans the resource again during the apply, with their values.
func (r *loadBalancerResource) checkCertificateOwners(ctx context.Context, resp *resource.ModifyPlanResponse) {
	if r.data == nil {
		return // not configured yet: planned again once it is
	}
	var plan loadBalancerModel
	if resp.Diagnostics.Append(resp.Plan.Get(ctx, &plan)...); resp.Diagnostics.HasError() {
		return
	}
	if plan.Listeners.IsNull() || plan.Listeners.IsUnknown() {
		return
	}
	listeners := map[string]listenerModel{}
	if resp.Diagnostics.Append(plan.Listeners.ElementsAs(ctx, &listeners, false)...); resp.Diagnostics.HasError() {
		return
	}
	tags := map[string]string{}
	tagsKnown := !plan.Tags.IsUnknown()
	if tagsKnown && !plan.Tags.IsNull() {
		if resp.Diagnostics.Append(plan.Tags.ElementsAs(ctx, &tags, false)...); resp.Diagnostics.HasError() {
			return
		}
	}
	keys := make([]string, 0, len(listeners))
	for k := range listeners {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, key := range keys {
		l := listeners[key]
		if l.CertificateIDs.IsNull() || l.CertificateIDs.IsUnknown() {
			continue
		}
		at := path.Root("listeners").AtMapKey(key).AtName("certificate_ids")
		for i, v := range l.CertificateIDs.Elements() {
			id, ok := knownString(v)
			if !ok {
				continue
			}
			cert, err := r.data.client.GetCertificate(ctx, id)
			switch {
			case exampleapi.IsNotFound(err):
				continue // the API refuses it at apply, naming it
			case err != nil:
				resp.Diagnostics.AddAttributeError(at.AtListIndex(i), "Cannot read certificate", fmt.Sprintf("Reading certificate %s to check whose it is: %v", id, err))
				return
			}
			conflicts := exampleapi.OwnerConflicts(tags, cert.Tags, exampleapi.TenantTags)
			if len(conflicts) == 0 {
				continue
			}
			if !tagsKnown {
				conflicts = []string{"the load balancer's tags are not known until apply, so they cannot be checked against the certificate's"}
			}
			resp.Diagnostics.AddAttributeError(at.AtListIndex(i), "Certificate of another owner",
				fmt.Sprintf("Listener %s names certificate %s, whose tags name another owner than this load balancer's:\n  - %s\n\n"+
					"A load balancer serves only certificates of its own tenant (tags %s), or certificates that carry none of these tags.",
					key, id, strings.Join(conflicts, "\n  - "), strings.Join(exampleapi.TenantTags, ", ")))
		}
	}
}

// knownString is v's value when v is a known, non-null string.
func knownString(v attr.Value) (string, bool) {
	s, ok := v.(types.String)
	if !ok || s.IsNull() || s.IsUnknown() {
		return "", false
	}
	return s.ValueString(), true
}
