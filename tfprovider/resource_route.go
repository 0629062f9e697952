package tfprovider

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"github.com/hashicorp/terraform-plugin-log/tflog"

	"github.com/example/cloud-provider-example/exampleapi"
)

var (
	_ resource.ResourceWithConfigure   = (*routeResource)(nil)
	_ resource.ResourceWithImportState = (*routeResource)(nil)
)

type routeResource struct {
	resourceBase
}

// NewRouteResource is the example_route resource.
func NewRouteResource() resource.Resource { return &routeResource{resourceBase{name: "route"}} }

type routeModel struct {
	ID               types.String `tfsdk:"id"`
	NetworkID        types.String `tfsdk:"network_id"`
	DestinationCIDR  types.String `tfsdk:"destination_cidr"`
	TargetInstanceID types.String `tfsdk:"target_instance_id"`
	Status           types.String `tfsdk:"status"`
	// OnDestinationConflict is configuration only, like timeouts.
	OnDestinationConflict types.String `tfsdk:"on_destination_conflict"`
}

// routeFromAPI converts the API object; prior (plan or state) supplies the
// configuration-only on_destination_conflict.
func routeFromAPI(rt *exampleapi.Route, prior routeModel) routeModel {
	return routeModel{
		ID:                    types.StringValue(rt.ID),
		NetworkID:             types.StringValue(rt.NetworkID),
		DestinationCIDR:       types.StringValue(rt.DestinationCIDR),
		TargetInstanceID:      types.StringValue(rt.TargetInstanceID),
		Status:                types.StringValue(rt.Status),
		OnDestinationConflict: stateOnly(prior.OnDestinationConflict, onConflictError),
	}
}

func (r *routeResource) Schema(_ context.Context, _ resource.SchemaRequest, resp *resource.SchemaResponse) {
	resp.Schema = schema.Schema{
		Description: "A route in a network's route table sending a destination CIDR to an instance " +
			"(e.g. a Kubernetes node's pod CIDR). Routes cannot be changed, only replaced. With " +
			"`on_destination_conflict = \"" + onDestinationConflictAdopt + "\"`, a create that finds its destination " +
			"taken by a route to the same instance (left by an interrupted apply) adopts it.",
		Attributes: map[string]schema.Attribute{
			"id": computedStable("Route id (`rt-...`)."),
			"network_id": immutableString("Id (`net-...`) of the network whose route table holds the route.",
				idValidator("net-")),
			"destination_cidr": immutableString("Destination, an IPv4 or IPv6 CIDR in canonical form such as `10.244.1.0/24`; "+
				"unique within the route table.", cidrValidator),
			"target_instance_id": immutableString("Id (`i-...`) of the instance traffic is sent to, in the network's region.",
				idValidator("i-")),
			"status": computedStable("`active`, or `blackhole` when the target instance no longer exists " +
				"(the route then drops traffic until it is replaced or removed)."),
			"on_destination_conflict": choiceAttribute("What creating does when the route table already has a route for `destination_cidr` "+
				"(the API answers `409`), typically one that an apply killed mid-way created but never recorded in "+
				"state: `"+onConflictError+"` (default) fails the apply; `"+onDestinationConflictAdopt+"` adopts "+
				"that route if it sends traffic to `target_instance_id`, records it in state and reports a warning, "+
				"and fails explaining the conflict if it has another target. Only consulted on create; changing it "+
				"updates state only.", onConflictError, onDestinationConflictAdopt),
		},
	}
}

func (r *routeResource) Create(ctx context.Context, req resource.CreateRequest, resp *resource.CreateResponse) {
	var plan routeModel
	if !loadConfigured(ctx, r.data, &resp.Diagnostics, get(req.Plan, &plan)) {
		return
	}
	in := exampleapi.CreateRouteRequest{
		DestinationCIDR:  plan.DestinationCIDR.ValueString(),
		TargetInstanceID: plan.TargetInstanceID.ValueString(),
	}
	netID := plan.NetworkID.ValueString()
	rt, err := r.create(ctx, netID, in)
	switch {
	case exampleapi.IsConflict(err) && plan.OnDestinationConflict.ValueString() == onDestinationConflictAdopt:
		// Probably ours from an interrupted apply: adopt it if it has the
		// same target.
		adoptCtx, cancel := context.WithTimeout(ctx, objectTimeout)
		rt = r.adopt(adoptCtx, netID, in, err, &resp.Diagnostics)
		cancel()
		if rt == nil {
			return
		}
	case exampleapi.IsConflict(err):
		addRouteConflictError(&resp.Diagnostics, err, netID, in, nil)
		return
	case exampleapi.IsNotFound(err):
		resp.Diagnostics.AddAttributeError(path.Root("network_id"), "Network not found", err.Error())
		return
	case err != nil:
		addAPIError(&resp.Diagnostics, "Cannot create route", err,
			listFieldResolver(map[string]bool{"destination_cidr": true, "target_instance_id": true}, nil))
		return
	default:
		tflog.Info(ctx, "created route", map[string]any{"route_id": rt.ID, "network_id": netID})
	}
	resp.Diagnostics.Append(resp.State.Set(ctx, routeFromAPI(rt, plan))...)
}

// create posts the route (see createDetached). After a lost answer, a
// route with this destination and target is ours (destinations are
// unique per table).
func (r *routeResource) create(ctx context.Context, netID string, in exampleapi.CreateRouteRequest) (*exampleapi.Route, error) {
	return createDetached(ctx, objectTimeout, func(ctx context.Context) (*exampleapi.Route, error) {
		return r.data.client.CreateRoute(ctx, netID, in)
	}, lostAnswer[exampleapi.Route]{
		find: func(ctx context.Context, _ time.Time) *exampleapi.Route {
			routes, err := r.data.client.ListRoutes(ctx, netID)
			if err != nil {
				return nil
			}
			for i := range routes {
				if routes[i].DestinationCIDR == in.DestinationCIDR && routes[i].TargetInstanceID == in.TargetInstanceID {
					return &routes[i]
				}
			}
			return nil
		},
		taking: "adopting the matching route",
		idKey:  "route_id",
		id:     func(rt *exampleapi.Route) string { return rt.ID },
	})
}

// Read refreshes the route; routes are addressed within their network.
func (r *routeResource) Read(ctx context.Context, req resource.ReadRequest, resp *resource.ReadResponse) {
	var netID string
	resp.Diagnostics.Append(req.State.GetAttribute(ctx, path.Root("network_id"), &netID)...)
	refresh(ctx, r.data, req, resp, "route", func(c *exampleapi.Client, ctx context.Context, id string) (*exampleapi.Route, error) {
		return c.GetRoute(ctx, netID, id)
	}, func(rt *exampleapi.Route, prior routeModel) (routeModel, diag.Diagnostics) {
		return routeFromAPI(rt, prior), nil
	})
}

// Update only changes on_destination_conflict, which lives in state alone:
// every other argument requires replacement.
func (r *routeResource) Update(ctx context.Context, req resource.UpdateRequest, resp *resource.UpdateResponse) {
	var plan routeModel
	resp.Diagnostics.Append(req.Plan.Get(ctx, &plan)...)
	resp.Diagnostics.Append(resp.State.Set(ctx, plan)...)
}

func (r *routeResource) Delete(ctx context.Context, req resource.DeleteRequest, resp *resource.DeleteResponse) {
	var state routeModel
	if !loadConfigured(ctx, r.data, &resp.Diagnostics, get(req.State, &state)) {
		return
	}
	err := r.data.client.DeleteRoute(ctx, state.NetworkID.ValueString(), state.ID.ValueString())
	if err != nil && !exampleapi.IsNotFound(err) {
		addAPIError(&resp.Diagnostics, "Cannot delete route "+state.ID.ValueString(), err, nil)
		return
	}
	tflog.Info(ctx, "deleted route", map[string]any{"route_id": state.ID.ValueString()})
}

// ImportState takes "<network_id>/<route_id>": routes are addressed within
// their network.
func (r *routeResource) ImportState(ctx context.Context, req resource.ImportStateRequest, resp *resource.ImportStateResponse) {
	netID, routeID, ok := strings.Cut(req.ID, "/")
	if !ok || checkIDPrefix(netID, "net-") != nil || checkIDPrefix(routeID, "rt-") != nil {
		resp.Diagnostics.AddError("Invalid import id",
			fmt.Sprintf("%q: want <network_id>/<route_id>, e.g. net-123/rt-456.", req.ID))
		return
	}
	resp.Diagnostics.Append(resp.State.SetAttribute(ctx, path.Root("network_id"), netID)...)
	resp.Diagnostics.Append(resp.State.SetAttribute(ctx, path.Root("id"), routeID)...)
}
