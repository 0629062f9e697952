package tfprovider

import (
	"context"
	"fmt"

	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-log/tflog"

	"github.com/example/cloud-provider-example/exampleapi"
)

// importedKey is the private state key ImportState sets. The import has
// no configuration to check ownership against; the plans that follow do
// (ModifyPlan), for as long as the key is there. A plan that passes the
// check no longer carries it, and Update clears it, so the first apply
// that updates the load balancer ends the checks. (An import planned as a
// no-op keeps the key, as Terraform then keeps the import's private state:
// plans go on checking, which passes as long as the owner tags are
// unchanged. With owner_tags set that cannot happen: the import does not
// know them, so the first plan always updates them in state.)
const importedKey = "imported_unverified"

// ImportState fetches the load balancer, so a wrong id fails here rather
// than as a confusing plan, and marks the state as imported.
func (r *loadBalancerResource) ImportState(ctx context.Context, req resource.ImportStateRequest, resp *resource.ImportStateResponse) {
	if err := checkIDPrefix(req.ID, "lb-"); err != nil {
		resp.Diagnostics.AddError("Invalid import id", err.Error())
		return
	}
	if r.data == nil {
		notConfigured(&resp.Diagnostics)
		return
	}
	lb, err := r.data.client.GetLoadBalancer(ctx, req.ID)
	if exampleapi.IsNotFound(err) {
		resp.Diagnostics.AddError("Cannot import load balancer "+req.ID,
			fmt.Sprintf("Load balancer %q does not exist. Check the id given to the import block or to terraform import.", req.ID))
		return
	}
	if err != nil {
		addAPIError(&resp.Diagnostics, "Cannot import load balancer "+req.ID, err, nil)
		return
	}
	tflog.Info(ctx, "importing load balancer; its owner tags are checked by the next plan",
		map[string]any{"load_balancer_id": lb.ID, "name": lb.Name, "region": lb.Region})
	resp.Diagnostics.Append(resp.State.SetAttribute(ctx, path.Root("id"), lb.ID)...)
	resp.Diagnostics.Append(resp.Private.SetKey(ctx, importedKey, []byte("true"))...)
}

// checkImportedOwner refuses a plan for an imported load balancer whose
// tags show another owner; see the shared checkImportedOwner.
func (r *loadBalancerResource) checkImportedOwner(ctx context.Context, req resource.ModifyPlanRequest, resp *resource.ModifyPlanResponse) {
	checkImportedOwner(ctx, "load balancer", req, resp)
}
