package tfprovider

import (
	"context"

	"github.com/hashicorp/terraform-plugin-framework/resource"

	"github.com/example/cloud-provider-example/exampleapi"
)

// ImportState fetches the load balancer, so a wrong id fails here rather
// than as a confusing plan, and marks the state as imported: its owner
// tags are checked by the next plan.
func (r *loadBalancerResource) ImportState(ctx context.Context, req resource.ImportStateRequest, resp *resource.ImportStateResponse) {
	importByID(ctx, r.data, "load balancer", "lb-", req, resp, (*exampleapi.Client).GetLoadBalancer, lbNamed)
}

// checkImportedOwner refuses a plan for an imported load balancer whose
// tags show another owner; see the shared checkImportedOwner.
func (r *loadBalancerResource) checkImportedOwner(ctx context.Context, req resource.ModifyPlanRequest, resp *resource.ModifyPlanResponse) {
	checkImportedOwner(ctx, "load balancer", req, resp)
}
