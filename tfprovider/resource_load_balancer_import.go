package tfprovider

import (
	"context"

	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-log/tflog"

	"github.com/example/cloud-provider-example/exampleapi"
)

// ImportState fetches the load balancer, so a wrong id fails here rather
// than as a confusing plan, and marks the state as imported.
func (r *loadBalancerResource) ImportState(ctx context.Context, req resource.ImportStateRequest, resp *resource.ImportStateResponse) {
	lb := importByID(ctx, r.data, "load balancer", "lb-", req.ID, (*exampleapi.Client).GetLoadBalancer, &resp.Diagnostics)
	if lb == nil {
		return
	}
	tflog.Info(ctx, "importing load balancer; its owner tags are checked by the next plan",
		map[string]any{"load_balancer_id": lb.ID, "name": lb.Name, "region": lb.Region})
	markImported(ctx, resp, lb.ID)
}

// checkImportedOwner refuses a plan for an imported load balancer whose
// tags show another owner; see the shared checkImportedOwner.
func (r *loadBalancerResource) checkImportedOwner(ctx context.Context, req resource.ModifyPlanRequest, resp *resource.ModifyPlanResponse) {
	checkImportedOwner(ctx, "load balancer", req, resp)
}
