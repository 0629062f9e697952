package tfprovider

import (
	"context"
	"fmt"
	"maps"
	"slices"

	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/example/cloud-provider-example/exampleapi"
)

// ValidateConfig checks what single-attribute validators cannot: listener
// keys that match their listeners, the number of listeners, what each
// protocol allows (validateListenerProtocols), rules and what their
// listeners allow (validateRules), a consistent health check
// and targets or a target pool, not both. Unknown values are
// skipped; the API checks them again at apply time.
func (r *loadBalancerResource) ValidateConfig(ctx context.Context, req resource.ValidateConfigRequest, resp *resource.ValidateConfigResponse) {
	var m loadBalancerModel
	resp.Diagnostics.Append(req.Config.Get(ctx, &m)...)
	if resp.Diagnostics.HasError() {
		return
	}
	validateListeners(ctx, m.Listeners, resp)
	validateListenerProtocols(ctx, m.Listeners, resp)
	validateRules(ctx, m.Rules, m.Listeners, resp)
	validateHealthCheck(ctx, m.HealthCheck, resp)
	validateTargetsOrPool(m.Targets, m.TargetPoolID, resp)
	warnOwnerTagsNotSet(ctx, "load balancer", m.OwnerTags, m.Tags, resp)
}

// validateListeners checks the listener count against the cloud's limit
// (before the elements: they are not worth checking then) and that every
// key is "<protocol>/<port>" of its listener, which also makes ports
// unique per protocol.
func validateListeners(ctx context.Context, listeners types.Map, resp *resource.ValidateConfigResponse) {
	if listeners.IsNull() || listeners.IsUnknown() {
		return
	}
	if n := len(listeners.Elements()); n > exampleapi.MaxListeners {
		resp.Diagnostics.AddAttributeError(path.Root("listeners"), "Too many listeners",
			fmt.Sprintf("listeners has %d entries; the Example cloud allows at most %d listeners per load balancer.",
				n, exampleapi.MaxListeners))
		return
	}
	for _, key := range slices.Sorted(maps.Keys(listeners.Elements())) {
		l, ok := knownAs[listenerModel](ctx, listeners.Elements()[key])
		if !ok || l.Protocol.IsUnknown() || l.Port.IsUnknown() || l.Protocol.IsNull() || l.Port.IsNull() {
			continue
		}
		if want := listenerKey(l.Protocol.ValueString(), l.Port.ValueInt64()); key != want {
			resp.Diagnostics.AddAttributeError(path.Root("listeners").AtMapKey(key), "Listener key does not match the listener",
				fmt.Sprintf("The listener keyed %q has protocol %q and port %d, so its key must be %q. Listeners are keyed "+
					"by \"<protocol>/<port>\" (e.g. \"tcp/80\"), which keeps ports unique per protocol and makes a plan "+
					"show a changed port as one listener removed and one added.",
					key, l.Protocol.ValueString(), l.Port.ValueInt64(), want))
		}
	}
}

// validateTargetsOrPool rejects target_pool_id together with a non-empty
// targets: a load balancer forwards to one or the other. An empty targets
// is allowed, as callers such as the loadbalancer module always pass one.
func validateTargetsOrPool(targets types.Set, pool types.String, resp *resource.ValidateConfigResponse) {
	if pool.IsNull() || pool.IsUnknown() || targets.IsNull() || targets.IsUnknown() || len(targets.Elements()) == 0 {
		return
	}
	resp.Diagnostics.AddAttributeError(path.Root("target_pool_id"), "Conflicting targets and target_pool_id",
		fmt.Sprintf("target_pool_id is set and targets lists %d instances: a load balancer forwards either to the "+
			"instances in targets or to those of the target pool, not both. Remove targets (or set it to []) to use "+
			"the pool, or remove target_pool_id to list the instances.", len(targets.Elements())))
}

func validateHealthCheck(ctx context.Context, obj types.Object, resp *resource.ValidateConfigResponse) {
	hc, ok := knownAs[healthCheckModel](ctx, obj)
	if !ok {
		return
	}
	hcPath := path.Root("health_check")
	if !hc.Protocol.IsUnknown() && !hc.Path.IsUnknown() {
		proto := hc.Protocol.ValueString()
		isHTTP := proto == exampleapi.ProtocolHTTP || proto == exampleapi.ProtocolHTTPS
		switch {
		case isHTTP && hc.Path.IsNull():
			resp.Diagnostics.AddAttributeError(hcPath.AtName("path"), "Missing health check path",
				fmt.Sprintf(`An %s health check needs a path such as "/healthz".`, proto))
		case !isHTTP && !hc.Path.IsNull():
			resp.Diagnostics.AddAttributeError(hcPath.AtName("path"), "Health check path not allowed",
				fmt.Sprintf("path is only allowed with protocol \"http\" or \"https\", not %q.", proto))
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
