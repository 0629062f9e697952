package tfprovider

import (
	"context"

	"github.com/hashicorp/terraform-plugin-framework/resource/schema/planmodifier"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/example/cloud-provider-example/exampleapi"
)

var stringType = types.StringType

// activeAfterUpdate plans status "active" for an in-place update: Update
// waits for that status (or fails), so "(known after apply)" would only be
// noise in every plan.
type activeAfterUpdate struct{}

func (activeAfterUpdate) Description(context.Context) string {
	return "An updated load balancer is active again when the update finishes."
}

func (m activeAfterUpdate) MarkdownDescription(ctx context.Context) string { return m.Description(ctx) }

func (activeAfterUpdate) PlanModifyString(_ context.Context, req planmodifier.StringRequest, resp *planmodifier.StringResponse) {
	if req.State.Raw.IsNull() || req.Plan.Raw.IsNull() || !req.PlanValue.IsUnknown() {
		return
	}
	resp.PlanValue = types.StringValue(exampleapi.LBStatusActive)
}
