package tfprovider

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"

	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-go/tfprotov6"
	"github.com/hashicorp/terraform-plugin-go/tftypes"
)

var _ resource.ResourceWithUpgradeState = (*loadBalancerResource)(nil)

// UpgradeState converts states of earlier schema versions. Version 0 had
// listeners as a list; version 1 keys them by "<protocol>/<port>".
func (r *loadBalancerResource) UpgradeState(context.Context) map[int64]resource.StateUpgrader {
	return map[int64]resource.StateUpgrader{
		// No PriorSchema: the upgrade works on the stored JSON, so it
		// needs no frozen copy of the version 0 schema, and attributes
		// added since (owner_tags) read as null.
		0: {StateUpgrader: upgradeLoadBalancerStateV0},
	}
}

func upgradeLoadBalancerStateV0(ctx context.Context, req resource.UpgradeStateRequest, resp *resource.UpgradeStateResponse) {
	const summary = "Cannot upgrade load balancer state from schema version 0"
	if req.RawState == nil || req.RawState.JSON == nil {
		resp.Diagnostics.AddError(summary, "The stored state has no JSON form (written by Terraform 0.11 or earlier?).")
		return
	}
	upgraded, err := upgradeListenersV0(req.RawState.JSON)
	if err != nil {
		resp.Diagnostics.AddError(summary, err.Error())
		return
	}
	typ := resp.State.Schema.Type().TerraformType(ctx)
	raw := tfprotov6.RawState{JSON: upgraded}
	v, err := raw.UnmarshalWithOpts(typ, tfprotov6.UnmarshalOpts{
		ValueFromJSONOpts: tftypes.ValueFromJSONOpts{IgnoreUndefinedAttributes: true},
	})
	if err != nil {
		resp.Diagnostics.AddError(summary, fmt.Sprintf("The upgraded state does not fit the current schema: %v", err))
		return
	}
	resp.State.Raw = v
}

// listenerV0 is a listener as version 0 stored it, in its list.
type listenerV0 struct {
	Protocol      string      `json:"protocol"`
	Port          json.Number `json:"port"`
	TargetPort    json.Number `json:"target_port"`
	ProxyProtocol *bool       `json:"proxy_protocol"`
}

// upgradeListenersV0 rewrites the state JSON's listeners list as the map
// keyed "<protocol>/<port>". Everything else is kept as stored.
func upgradeListenersV0(state []byte) ([]byte, error) {
	var attrs map[string]json.RawMessage
	if err := json.Unmarshal(state, &attrs); err != nil {
		return nil, fmt.Errorf("decoding stored state: %w", err)
	}
	stored, ok := attrs["listeners"]
	if !ok {
		return state, nil // read as null, as attributes missing from a state are
	}
	var list []listenerV0
	if err := json.Unmarshal(stored, &list); err != nil {
		return nil, fmt.Errorf("decoding stored listeners: %w", err)
	}
	if list == nil {
		attrs["listeners"] = json.RawMessage("null")
	} else {
		byKey := make(map[string]listenerV0, len(list))
		for i, l := range list {
			port, err := strconv.ParseInt(l.Port.String(), 10, 64)
			if err != nil {
				return nil, fmt.Errorf("listeners[%d]: port %q is not a whole number", i, l.Port)
			}
			key := listenerKey(l.Protocol, port)
			if _, dup := byKey[key]; dup {
				return nil, fmt.Errorf("listeners[%d]: listener %q appears twice; the API never allows that, "+
					"so the stored state was edited by hand: remove the duplicate or run terraform state rm and import again", i, key)
			}
			byKey[key] = l
		}
		b, err := json.Marshal(byKey)
		if err != nil {
			return nil, fmt.Errorf("encoding listeners: %w", err)
		}
		attrs["listeners"] = b
	}
	return json.Marshal(attrs)
}
