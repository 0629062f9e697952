package tfprovider

import (
	"context"
	"fmt"

	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"github.com/hashicorp/terraform-plugin-framework/types/basetypes"

	"github.com/example/cloud-provider-example/exampleapi"
)

// ValidateConfig checks what single-attribute validators cannot: listener
// ports unique per protocol and a consistent health check. Unknown values
// are skipped; the API checks them again at apply time.
func (r *loadBalancerResource) ValidateConfig(ctx context.Context, req resource.ValidateConfigRequest, resp *resource.ValidateConfigResponse) {
	var m loadBalancerModel
	resp.Diagnostics.Append(req.Config.Get(ctx, &m)...)
	if resp.Diagnostics.HasError() {
		return
	}
	validateListenerPorts(ctx, m.Listeners, resp)
	validateHealthCheck(ctx, m.HealthCheck, resp)
}

func validateListenerPorts(ctx context.Context, listeners types.List, resp *resource.ValidateConfigResponse) {
	if listeners.IsNull() || listeners.IsUnknown() {
		return
	}
	seen := map[string]int{}
	for i, e := range listeners.Elements() {
		obj, ok := e.(types.Object)
		if !ok || obj.IsNull() || obj.IsUnknown() {
			continue
		}
		var l listenerModel
		if d := obj.As(ctx, &l, basetypes.ObjectAsOptions{}); d.HasError() {
			continue
		}
		if l.Protocol.IsUnknown() || l.Port.IsUnknown() || l.Protocol.IsNull() || l.Port.IsNull() {
			continue
		}
		key := fmt.Sprintf("%s/%d", l.Protocol.ValueString(), l.Port.ValueInt64())
		if j, dup := seen[key]; dup {
			resp.Diagnostics.AddAttributeError(path.Root("listeners").AtListIndex(i).AtName("port"),
				"Duplicate listener port",
				fmt.Sprintf("listeners[%d] repeats listener %s of listeners[%d]; ports must be unique per protocol.", i, key, j))
			continue
		}
		seen[key] = i
	}
}

func validateHealthCheck(ctx context.Context, obj types.Object, resp *resource.ValidateConfigResponse) {
	if obj.IsNull() || obj.IsUnknown() {
		return
	}
	var hc healthCheckModel
	if d := obj.As(ctx, &hc, basetypes.ObjectAsOptions{}); d.HasError() {
		return
	}
	hcPath := path.Root("health_check")
	if !hc.Protocol.IsUnknown() && !hc.Path.IsUnknown() {
		isHTTP := hc.Protocol.ValueString() == exampleapi.ProtocolHTTP
		switch {
		case isHTTP && hc.Path.IsNull():
			resp.Diagnostics.AddAttributeError(hcPath.AtName("path"), "Missing health check path",
				`An http health check needs a path such as "/healthz".`)
		case !isHTTP && !hc.Path.IsNull():
			resp.Diagnostics.AddAttributeError(hcPath.AtName("path"), "Health check path not allowed",
				fmt.Sprintf("path is only allowed with protocol = \"http\", not %q.", hc.Protocol.ValueString()))
		}
	}
	if hc.IntervalSeconds.IsUnknown() || hc.TimeoutSeconds.IsUnknown() {
		return
	}
	// Unset values take their defaults, which also must be consistent.
	interval, timeout := int64(defaultHCInterval), int64(defaultHCTimeout)
	if !hc.IntervalSeconds.IsNull() {
		interval = hc.IntervalSeconds.ValueInt64()
	}
	if !hc.TimeoutSeconds.IsNull() {
		timeout = hc.TimeoutSeconds.ValueInt64()
	}
	if timeout >= interval {
		resp.Diagnostics.AddAttributeError(hcPath.AtName("timeout_seconds"), "Health check timeout too long",
			fmt.Sprintf("timeout_seconds (%d) must be less than interval_seconds (%d).", timeout, interval))
	}
}
