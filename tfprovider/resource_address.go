package tfprovider

import (
	"context"
	"fmt"
	"net/netip"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/planmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/stringplanmodifier"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"github.com/hashicorp/terraform-plugin-log/tflog"

	"github.com/example/cloud-provider-example/exampleapi"
)

var (
	_ resource.ResourceWithConfigure   = (*addressResource)(nil)
	_ resource.ResourceWithImportState = (*addressResource)(nil)
	_ resource.ResourceWithModifyPlan  = (*addressResource)(nil)
)

type addressResource struct {
	resourceBase
}

// NewAddressResource is the example_address resource.
func NewAddressResource() resource.Resource {
	return &addressResource{resourceBase{name: "address"}}
}

// addressModel is the example_address resource, and the data source of
// the same name: both show the same attributes of an address.
type addressModel struct {
	ID             types.String `tfsdk:"id"`
	Name           types.String `tfsdk:"name"`
	Region         types.String `tfsdk:"region"`
	Family         types.String `tfsdk:"family"`
	LoadBalancerID types.String `tfsdk:"load_balancer_id"`
	Tags           types.Map    `tfsdk:"tags"`
	IP             types.String `tfsdk:"ip"`
	CreatedAt      types.String `tfsdk:"created_at"`
}

func (r *addressResource) Schema(_ context.Context, _ resource.SchemaRequest, resp *resource.SchemaResponse) {
	family := defaultedChoice(exampleapi.AddressFamilyIPv4, exampleapi.AddressFamilies,
		"`ipv4` (default) or `ipv6`: the public pool the IP comes from. An `ipv6` address attaches only to a `dualstack` "+
			"load balancer. Changing it replaces the address (a new IP).")
	family.PlanModifiers = []planmodifier.String{stringplanmodifier.RequiresReplace()}
	resp.Schema = schema.Schema{
		Description: "A reserved address: an IP taken from the region's public pool when the address is created and given " +
			"back only when it is destroyed, whatever happens to the load balancers it is attached to, so deleting and " +
			"re-creating a load balancer does not lose its IP. The attachment belongs to the address (`load_balancer_id`), " +
			"like a floating IP's assignment: changing it attaches, moves or detaches the address in place, in one API " +
			"request, so the address is never on two load balancers and never free in between. Attached, its `ip` is the " +
			"load balancer's `ipv4` (or `ipv6`), in place of the load balancer's own, which the load balancer gets back " +
			"(a new one) when the address leaves: read the load balancer again (refresh) to see it. A load balancer takes " +
			"at most one address per family, an internal one none. Destroying a load balancer leaves its address reserved " +
			"and detached; destroying an attached address detaches it first.",
		Attributes: map[string]schema.Attribute{
			"id":   computedStable("Address id (`addr-...`)."),
			"name": nameAttribute("Name, unique per region. Changing it replaces the address (a new IP)."),
			"region": regionAttribute("Region, e.g. `ex-west-1`. Defaults to the provider's `region`. Changing it replaces the " +
				"address (a new IP); only load balancers of the same region take it."),
			"family": family,
			"load_balancer_id": schema.StringAttribute{
				Optional: true,
				Description: "Id (`lb-...`) of the load balancer the address is attached to; unset, it is attached to none. " +
					"Changes in place: from unset, the address is attached; to another load balancer, it moves in one request; " +
					"to unset, it is detached (and keeps its IP). The cloud refuses (at apply time) an `ipv6` address on a load " +
					"balancer that is not `dualstack`, any address on an `internal` one, a second address of the same family on " +
					"one load balancer, and a load balancer of another region.",
				Validators: []validator.String{idValidator("lb-")},
			},
			"tags": tagsAttribute(defaultTagsDescription),
			"ip": computedStable("The reserved IP, allocated at creation from the region's public pool of `family`; it never " +
				"changes."),
			"created_at": computedStable("Creation time (RFC 3339, UTC)."),
		},
	}
}

// ModifyPlan defaults region to the provider's, replacing the address
// when the effective region changes.
func (r *addressResource) ModifyPlan(ctx context.Context, req resource.ModifyPlanRequest, resp *resource.ModifyPlanResponse) {
	if req.Plan.Raw.IsNull() {
		return // destroy
	}
	planRegion(ctx, r.data, req, resp)
}

// addressFromAPI converts the API object; prior (plan or state) keeps an
// empty tags map empty.
func addressFromAPI(a *exampleapi.Address, prior addressModel) (addressModel, diag.Diagnostics) {
	var diags diag.Diagnostics
	m := addressModel{
		ID:             types.StringValue(a.ID),
		Name:           types.StringValue(a.Name),
		Region:         types.StringValue(a.Region),
		Family:         types.StringValue(a.Family),
		LoadBalancerID: optionalString(a.LoadBalancerID),
		Tags:           stringMap(a.Tags, prior.Tags, &diags),
		IP:             types.StringValue(a.IP),
		CreatedAt:      timeString(a.CreatedAt),
	}
	return m, diags
}

// createRequest is the API's create request for a fully known plan.
func (m addressModel) createRequest(ctx context.Context) (exampleapi.CreateAddressRequest, diag.Diagnostics) {
	var diags diag.Diagnostics
	return exampleapi.CreateAddressRequest{
		Name:           m.Name.ValueString(),
		Region:         m.Region.ValueString(),
		Family:         m.Family.ValueString(),
		LoadBalancerID: m.LoadBalancerID.ValueString(),
		Tags:           knownStringMap(ctx, m.Tags, &diags),
	}, diags
}

// updateRequest is what of createRequest changes in place.
func (m addressModel) updateRequest(ctx context.Context) (exampleapi.UpdateAddressRequest, diag.Diagnostics) {
	c, diags := m.createRequest(ctx)
	return exampleapi.UpdateAddressRequest{LoadBalancerID: c.LoadBalancerID, Tags: c.Tags}, diags
}

func addressNamed(a *exampleapi.Address) namedObject {
	return namedObject{ID: a.ID, Name: a.Name, Region: a.Region, Tags: a.Tags, CreatedAt: a.CreatedAt}
}

func (r *addressResource) Create(ctx context.Context, req resource.CreateRequest, resp *resource.CreateResponse) {
	var plan addressModel
	if !loadConfigured(ctx, r.data, &resp.Diagnostics, get(req.Plan, &plan)) {
		return
	}
	in, diags := plan.createRequest(ctx)
	if resp.Diagnostics.Append(diags...); resp.Diagnostics.HasError() {
		return
	}
	a, err := r.create(ctx, in)
	if err != nil {
		addAPIError(&resp.Diagnostics, "Cannot create address", err, addressFieldResolver)
		return
	}
	tflog.Info(ctx, "created address", map[string]any{"address_id": a.ID, "ip": a.IP, "load_balancer_id": a.LoadBalancerID})
	setFromAPI(ctx, &resp.State, &resp.Diagnostics, a, plan, addressFromAPI)
}

// create reserves the address (see createDetached). After a lost answer,
// the address of this name and region created since we started is ours
// (names are unique per region).
func (r *addressResource) create(ctx context.Context, in exampleapi.CreateAddressRequest) (*exampleapi.Address, error) {
	return createDetached(ctx, objectTimeout, func(ctx context.Context) (*exampleapi.Address, error) {
		return r.data.client.CreateAddress(ctx, in)
	}, lostNamed("address", "taking the address found by name", func(ctx context.Context) ([]exampleapi.Address, error) {
		return r.data.client.ListAddresses(ctx, exampleapi.AddressFilter{Name: in.Name, Region: in.Region})
	}, addressNamed))
}

func (r *addressResource) Read(ctx context.Context, req resource.ReadRequest, resp *resource.ReadResponse) {
	refresh(ctx, r.data, req, resp, "address", (*exampleapi.Client).GetAddress, addressFromAPI)
}

// Update attaches, moves or detaches the address and replaces its tags:
// everything else replaces it.
func (r *addressResource) Update(ctx context.Context, req resource.UpdateRequest, resp *resource.UpdateResponse) {
	var plan, state addressModel
	if !loadConfigured(ctx, r.data, &resp.Diagnostics, get(req.Plan, &plan), get(req.State, &state)) {
		return
	}
	upd, diags := plan.updateRequest(ctx)
	if resp.Diagnostics.Append(diags...); resp.Diagnostics.HasError() {
		return
	}
	id := state.ID.ValueString()
	ctx, cancel := context.WithTimeout(ctx, objectTimeout)
	defer cancel()
	a := putUpdate(ctx, r.data.client, "address", id, (*exampleapi.Client).UpdateAddress, upd, addressFieldResolver, &resp.Diagnostics)
	if a == nil {
		return
	}
	tflog.Info(ctx, "updated address", map[string]any{"address_id": id,
		"from_load_balancer_id": state.LoadBalancerID.ValueString(), "load_balancer_id": a.LoadBalancerID})
	setFromAPI(ctx, &resp.State, &resp.Diagnostics, a, plan, addressFromAPI)
}

// Delete detaches the address if it is attached (the cloud refuses to
// delete it otherwise), then releases it.
func (r *addressResource) Delete(ctx context.Context, req resource.DeleteRequest, resp *resource.DeleteResponse) {
	deleteByID(ctx, r.data, req, resp, deletion{kind: "address", timeout: objectTimeout, del: detachAndDelete,
		inUse: addressInUse})
}

// detachAndDelete detaches the address from the load balancer it is on,
// as the cloud has it now (not as state has it), then deletes it.
func detachAndDelete(c *exampleapi.Client, ctx context.Context, id string) error {
	a, err := c.GetAddress(ctx, id)
	if err != nil {
		return err
	}
	if a.LoadBalancerID != "" {
		// Unconditional: whatever it is attached to now, it is going.
		if _, err := c.UpdateAddress(ctx, id, exampleapi.UpdateAddressRequest{Tags: a.Tags}, 0); err != nil {
			return fmt.Errorf("detaching it from load balancer %s first: %w", a.LoadBalancerID, err)
		}
		tflog.Info(ctx, "detached address before deleting it", map[string]any{"load_balancer_id": a.LoadBalancerID})
	}
	return c.DeleteAddress(ctx, id)
}

// addressInUse is the way out when the address was attached again between
// the provider's detach and its delete.
const addressInUse = "The Example cloud does not delete an address attached to a load balancer. The provider detached " +
	"it, but something (another configuration or workspace, or a change outside Terraform) attached it again before " +
	"the delete. Find what attaches it, stop it, then apply again; the address stays in state until then."

// ImportState takes the address id (addr-...) or its IP, in any notation:
// the address is looked up by IP, so a team can import the address its
// DNS records point at.
func (r *addressResource) ImportState(ctx context.Context, req resource.ImportStateRequest, resp *resource.ImportStateResponse) {
	ip, ipErr := netip.ParseAddr(req.ID)
	if ipErr != nil {
		if err := checkIDPrefix(req.ID, "addr-"); err != nil {
			resp.Diagnostics.AddError("Invalid import id", err.Error()+", or an IP address")
			return
		}
	}
	if r.data == nil {
		notConfigured(&resp.Diagnostics)
		return
	}
	summary := "Cannot import address " + req.ID
	var a *exampleapi.Address
	var err error
	if ipErr == nil {
		var found []exampleapi.Address
		found, err = r.data.client.ListAddresses(ctx, exampleapi.AddressFilter{IP: ip.String()})
		if err == nil && len(found) == 0 {
			resp.Diagnostics.AddError(summary, fmt.Sprintf("No address holds the IP %s: it is not reserved (a load balancer's "+
				"own IP is not an address; create an example_address instead). Check the IP given to the import block "+
				"or to terraform import, or import by the address id (addr-...).", ip))
			return
		}
		if err == nil {
			a = &found[0]
		}
	} else {
		a, err = r.data.client.GetAddress(ctx, req.ID)
		if exampleapi.IsNotFound(err) {
			resp.Diagnostics.AddError(summary, fmt.Sprintf("Address %q does not exist. Check the id given to the import block "+
				"or to terraform import.", req.ID))
			return
		}
	}
	if err != nil {
		addAPIError(&resp.Diagnostics, summary, err, nil)
		return
	}
	tflog.Info(ctx, "importing address", map[string]any{"address_id": a.ID, "ip": a.IP, "name": a.Name, "region": a.Region})
	resp.Diagnostics.Append(resp.State.SetAttribute(ctx, path.Root("id"), a.ID)...)
}

// addressFieldResolver maps the API's field errors onto the attributes of
// the same names.
var addressFieldResolver = listFieldResolver(map[string]bool{
	"name": true, "region": true, "family": true, "load_balancer_id": true, "tags": true,
}, nil)
