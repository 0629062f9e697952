package tfprovider

import (
	"cmp"
	"context"
	"fmt"
	"reflect"

	"github.com/hashicorp/terraform-plugin-framework-validators/int64validator"
	"github.com/hashicorp/terraform-plugin-framework-validators/setvalidator"
	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"github.com/hashicorp/terraform-plugin-log/tflog"

	"github.com/example/cloud-provider-example/exampleapi"
)

var (
	_ resource.ResourceWithConfigure      = (*targetPoolResource)(nil)
	_ resource.ResourceWithImportState    = (*targetPoolResource)(nil)
	_ resource.ResourceWithModifyPlan     = (*targetPoolResource)(nil)
	_ resource.ResourceWithValidateConfig = (*targetPoolResource)(nil)
)

type targetPoolResource struct {
	resourceBase
}

// NewTargetPoolResource is the example_target_pool resource.
func NewTargetPoolResource() resource.Resource {
	return &targetPoolResource{resourceBase{name: "target_pool"}}
}

type targetPoolModel struct {
	ID         types.String `tfsdk:"id"`
	Name       types.String `tfsdk:"name"`
	Region     types.String `tfsdk:"region"`
	TargetType types.String `tfsdk:"target_type"`
	Targets    types.Set    `tfsdk:"targets"`
	Tags       types.Map    `tfsdk:"tags"`
	// DeregistrationDelay is deregistration_delay_seconds.
	DeregistrationDelay types.Int64  `tfsdk:"deregistration_delay_seconds"`
	OwnerTags           types.Set    `tfsdk:"owner_tags"`
	CreatedAt           types.String `tfsdk:"created_at"`
	// OnNameConflict is configuration only, like owner_tags.
	OnNameConflict types.String `tfsdk:"on_name_conflict"`
}

func (r *targetPoolResource) Schema(_ context.Context, _ resource.SchemaRequest, resp *resource.SchemaResponse) {
	resp.Schema = schema.Schema{
		Description: "A target pool: instances, or with `target_type = \"ip\"` IP:port pairs such as pods', that load " +
			"balancers of its region forward to by reference (`example_load_balancer.target_pool_id`, or a rule's " +
			"`backends`). Changing the pool's `targets` re-targets every load balancer using it at once, in one API " +
			"request and without changing those load balancers. `name`, `region` and `target_type` cannot change " +
			"without replacing the pool; `targets` and `tags` are updated in place. A pool cannot be deleted while a " +
			"load balancer references it: in a configuration that also holds those load balancers, set " +
			"`lifecycle { create_before_destroy = true }` on the pool, so that Terraform moves them off a pool before " +
			"destroying it (by default it destroys first, and the API refuses). With `on_name_conflict = \"" + onNameConflictAdopt + "\"`, " +
			"a create that finds its name taken by a pool with matching tags (left by an interrupted apply) adopts it.",
		Attributes: map[string]schema.Attribute{
			"id":   computedStable("Target pool id (`tp-...`)."),
			"name": nameAttribute("Name, unique per region. Changing it replaces the pool."),
			"region": regionAttribute("Region, e.g. `ex-west-1`. Defaults to the provider's `region`. Changing it replaces the pool; " +
				"only load balancers of the same region can use it."),
			"target_type": replacedChoice(exampleapi.TargetTypeInstance, exampleapi.TargetTypes, "What `targets` are: "+
				"`instance` (default), ids of instances, reached at their private address on the listener's `target_port` "+
				"or the rule backend's `port`; or `ip`, `IP:port` pairs such as pods' (`10.244.1.5:8080`, `[fd00::5]:8080`), "+
				"reached at that address and port, whose IPs must be inside the destination of an active route of a network "+
				"of the pool's region (`example_route`, a node's pod CIDR). A pool of type `ip` is only a rule backend's "+
				"(`backends`, with `port = 0`), never a load balancer's `target_pool_id`. Fixed at creation: changing it "+
				"replaces the pool."),
			"targets": schema.SetAttribute{
				Required:    true,
				ElementType: stringType,
				Description: fmt.Sprintf("The pool's targets (at most %d, possibly none), by `target_type`: ids (`i-...`) of "+
					"instances of the pool's region, or `IP:port` pairs in canonical form (no leading zeros, IPv6 in brackets) "+
					"that a route of the region reaches, which the cloud checks at apply, naming the target. Order does not "+
					"matter. An instance that is deleted leaves the pool (the next plan shows it as a change, as it does for "+
					"any change made outside Terraform).", exampleapi.MaxTargets),
				Validators: []validator.Set{setvalidator.SizeAtMost(exampleapi.MaxTargets)},
			},
			"tags": tagsAttribute(defaultTagsDescription),
			"deregistration_delay_seconds": schema.Int64Attribute{
				Optional: true,
				Description: fmt.Sprintf("How long (0 to %d seconds) a target removed from `targets` keeps the connections it has, "+
					"getting no new ones (the cloud lists it as draining until then); unset or 0, it leaves at once. A change "+
					"applies to the targets removed from then on. Updated in place.", exampleapi.MaxDeregistrationDelay),
				Validators: []validator.Int64{int64validator.Between(0, exampleapi.MaxDeregistrationDelay)},
			},
			"owner_tags": ownerTagsAttribute("Keys of `tags` whose values name the owner, such as a cluster id. As for load balancers, an " +
				"import fails at plan time, and `on_name_conflict` adoption fails, when for any of these keys the " +
				"existing pool has the tag with a value other than this configuration's `tags` value for that key (or " +
				"this configuration does not set that tag). Unset or empty, no owner is checked. Configuration only: " +
				"changing it updates state only."),
			"created_at": computedStable("Creation time (RFC 3339, UTC)."),
			"on_name_conflict": choiceAttribute("What creating does when the name is already taken in the region (the API answers `409`), "+
				"typically by a pool that an apply killed mid-way created but never recorded in state: `"+onConflictError+
				"` (default) fails the apply; `"+onNameConflictAdopt+"` adopts that pool if no tag of `owner_tags` "+
				"names another owner and its tags contain every configured tag with the same value (so `tags` must not "+
				"be empty), puts this configuration's targets and tags on it, records it in state and reports a "+
				"warning. Otherwise the apply fails explaining the conflict. Only consulted on create; changing it "+
				"updates state only.", onConflictError, onNameConflictAdopt),
		},
	}
}

func (r *targetPoolResource) ValidateConfig(ctx context.Context, req resource.ValidateConfigRequest, resp *resource.ValidateConfigResponse) {
	var m targetPoolModel
	resp.Diagnostics.Append(req.Config.Get(ctx, &m)...)
	if resp.Diagnostics.HasError() {
		return
	}
	warnOwnerTagsNotSet(ctx, "target pool", m.OwnerTags, m.Tags, resp)
	validatePoolTargets(m.TargetType, m.Targets, resp)
}

// ModifyPlan refuses an imported pool of another owner and defaults region
// to the provider's, replacing the pool when the effective region changes.
func (r *targetPoolResource) ModifyPlan(ctx context.Context, req resource.ModifyPlanRequest, resp *resource.ModifyPlanResponse) {
	if req.Plan.Raw.IsNull() {
		return // destroy
	}
	if checkImportedOwner(ctx, "target pool", req, resp); resp.Diagnostics.HasError() {
		return
	}
	planRegion(ctx, r.data, req, resp)
}

// createRequest is the API's create request for a fully known plan;
// targets are sorted so requests (and API field indexes) are deterministic.
func (m targetPoolModel) createRequest(ctx context.Context) (exampleapi.CreateTargetPoolRequest, diag.Diagnostics) {
	var diags diag.Diagnostics
	req := exampleapi.CreateTargetPoolRequest{
		Name:                       m.Name.ValueString(),
		Region:                     m.Region.ValueString(),
		TargetType:                 m.TargetType.ValueString(),
		Targets:                    sortedStrings(ctx, m.Targets, &diags),
		DeregistrationDelaySeconds: int(m.DeregistrationDelay.ValueInt64()),
	}
	if req.Targets == nil {
		req.Targets = []string{}
	}
	req.Tags = knownStringMap(ctx, m.Tags, &diags)
	return req, diags
}

func (m targetPoolModel) updateRequest(ctx context.Context) (exampleapi.UpdateTargetPoolRequest, diag.Diagnostics) {
	c, diags := m.createRequest(ctx)
	return exampleapi.UpdateTargetPoolRequest{Targets: c.Targets, Tags: c.Tags, DeregistrationDelaySeconds: c.DeregistrationDelaySeconds}, diags
}

// deregistrationDelay is the cloud's delay, null for 0 where prior is
// null: unset means 0, and a state from before the attribute existed
// shows neither a drift nor a change.
func deregistrationDelay(seconds int, prior types.Int64) types.Int64 {
	if seconds == 0 && prior.IsNull() {
		return types.Int64Null()
	}
	return types.Int64Value(int64(seconds))
}

// targetPoolFromAPI converts the API object; prior (plan or state) keeps
// an empty tags map empty and supplies the configuration-only arguments.
func targetPoolFromAPI(tp *exampleapi.TargetPool, prior targetPoolModel) (targetPoolModel, diag.Diagnostics) {
	var diags diag.Diagnostics
	m := targetPoolModel{
		ID:                  types.StringValue(tp.ID),
		Name:                types.StringValue(tp.Name),
		Region:              types.StringValue(tp.Region),
		TargetType:          types.StringValue(tp.TargetTypeOrDefault()),
		Tags:                stringMap(tp.Tags, prior.Tags, &diags),
		OwnerTags:           prior.OwnerTags,
		DeregistrationDelay: deregistrationDelay(tp.DeregistrationDelaySeconds, prior.DeregistrationDelay),
		CreatedAt:           timeString(tp.CreatedAt),
		OnNameConflict:      stateOnly(prior.OnNameConflict, onConflictError),
	}
	if m.OwnerTags.ElementType(context.Background()) == nil {
		m.OwnerTags = types.SetNull(types.StringType) // zero value: no prior
	}
	// targets is required, so never null: none is the empty set.
	elems := make([]attr.Value, 0, len(tp.Targets))
	for _, t := range tp.Targets {
		elems = append(elems, types.StringValue(t))
	}
	m.Targets = types.SetValueMust(types.StringType, elems)
	return m, diags
}

func (r *targetPoolResource) Create(ctx context.Context, req resource.CreateRequest, resp *resource.CreateResponse) {
	var plan targetPoolModel
	if !loadConfigured(ctx, r.data, &resp.Diagnostics, get(req.Plan, &plan)) {
		return
	}
	in, diags := plan.createRequest(ctx)
	resp.Diagnostics.Append(diags...)
	ownerKeys := sortedStrings(ctx, plan.OwnerTags, &resp.Diagnostics)
	if resp.Diagnostics.HasError() {
		return
	}
	tp, what := createOrAdopt(ctx, r.adoption(in, ownerKeys), plan.OnNameConflict.ValueString(), objectTimeout, &resp.Diagnostics)
	if tp == nil {
		return
	}
	tflog.Info(ctx, what, map[string]any{"target_pool_id": tp.ID, "targets": len(tp.Targets)})
	setFromAPI(ctx, &resp.State, &resp.Diagnostics, tp, plan, targetPoolFromAPI)
}

// adoption is how a create makes the pool, or adopts the one holding its
// name, with the load balancer's rules; it then gets this configuration's
// targets, tags and delay.
func (r *targetPoolResource) adoption(in exampleapi.CreateTargetPoolRequest, ownerKeys []string) nameAdoption[exampleapi.TargetPool] {
	return nameAdoption[exampleapi.TargetPool]{
		kind: "target pool", name: in.Name, region: in.Region, tags: in.Tags, ownerKeys: ownerKeys,
		create: func(ctx context.Context) (*exampleapi.TargetPool, error) {
			return r.data.client.CreateTargetPool(ctx, in)
		},
		list: func(ctx context.Context) ([]exampleapi.TargetPool, error) {
			return r.data.client.ListTargetPools(ctx, exampleapi.TargetPoolFilter{Name: in.Name, Region: in.Region})
		},
		named: poolNamed,
		immutable: func(tp *exampleapi.TargetPool) (path.Path, []string) {
			if want := cmp.Or(in.TargetType, exampleapi.TargetTypeInstance); tp.TargetTypeOrDefault() != want {
				return path.Root("target_type"), []string{fmt.Sprintf("its target_type is %q, the configuration wants %q", tp.TargetTypeOrDefault(), want)}
			}
			return path.Empty(), nil
		},
		update: func(ctx context.Context, id string) (*exampleapi.TargetPool, error) {
			return r.data.client.UpdateTargetPool(ctx, id, exampleapi.UpdateTargetPoolRequest{Targets: in.Targets, Tags: in.Tags,
				DeregistrationDelaySeconds: in.DeregistrationDelaySeconds}, 0)
		},
		resolve: targetPoolFieldResolver(in.Targets),
	}
}

func poolNamed(tp *exampleapi.TargetPool) namedObject {
	return namedObject{ID: tp.ID, Name: tp.Name, Region: tp.Region, Tags: tp.Tags, CreatedAt: tp.CreatedAt}
}

func (r *targetPoolResource) Read(ctx context.Context, req resource.ReadRequest, resp *resource.ReadResponse) {
	refresh(ctx, r.data, req, resp, "target pool", (*exampleapi.Client).GetTargetPool, targetPoolFromAPI)
}

func (r *targetPoolResource) Update(ctx context.Context, req resource.UpdateRequest, resp *resource.UpdateResponse) {
	var plan, state targetPoolModel
	if !loadConfigured(ctx, r.data, &resp.Diagnostics, get(req.Plan, &plan), get(req.State, &state)) {
		return
	}
	upd, diags := plan.updateRequest(ctx)
	resp.Diagnostics.Append(diags...)
	if resp.Diagnostics.HasError() {
		return
	}
	id := state.ID.ValueString()
	// An import's ownership was checked by the plan being applied.
	resp.Diagnostics.Append(resp.Private.SetKey(ctx, importedKey, nil)...)
	if current, _ := state.updateRequest(ctx); reflect.DeepEqual(current, upd) {
		// Only state-only arguments (on_name_conflict, owner_tags)
		// changed, or target_type is recorded in a state from before it
		// existed: nothing to send.
		state.OnNameConflict, state.OwnerTags, state.TargetType = plan.OnNameConflict, plan.OwnerTags, plan.TargetType
		resp.Diagnostics.Append(resp.State.Set(ctx, state)...)
		return
	}
	ctx, cancel := context.WithTimeout(ctx, objectTimeout)
	defer cancel()
	tp := putUpdate(ctx, r.data.client, "target pool", id, (*exampleapi.Client).UpdateTargetPool, upd,
		targetPoolFieldResolver(upd.Targets), &resp.Diagnostics)
	if tp == nil {
		return
	}
	tflog.Info(ctx, "updated target pool", map[string]any{"target_pool_id": id, "targets": len(tp.Targets)})
	setFromAPI(ctx, &resp.State, &resp.Diagnostics, tp, plan, targetPoolFromAPI)
}

func (r *targetPoolResource) Delete(ctx context.Context, req resource.DeleteRequest, resp *resource.DeleteResponse) {
	deleteByID(ctx, r.data, req, resp, deletion{kind: "target pool", timeout: objectTimeout,
		del: (*exampleapi.Client).DeleteTargetPool, inUse: targetPoolInUse})
}

// targetPoolInUse is the way out when the cloud refuses to delete a pool
// that load balancers forward to.
const targetPoolInUse = "The Example cloud does not delete a target pool that load balancers still forward to. " +
	"Point them at another pool (target_pool_id) or at targets, or delete them, then apply again; the pool " +
	"stays in state until then. If they are managed elsewhere (another configuration or workspace, such as " +
	"the one of a Kubernetes Service, or outside Terraform), apply that change first. If they are in this " +
	"configuration, set lifecycle { create_before_destroy = true } on the pool: Terraform then updates the " +
	"load balancers before it destroys the pool, instead of the other way round."

// ImportState fetches the pool, so a wrong id fails here rather than as a
// confusing plan, and marks the state as imported for the owner check of
// the plans that follow (see importedKey).
func (r *targetPoolResource) ImportState(ctx context.Context, req resource.ImportStateRequest, resp *resource.ImportStateResponse) {
	importByID(ctx, r.data, "target pool", "tp-", req, resp, (*exampleapi.Client).GetTargetPool, poolNamed)
}

// targetPoolFieldResolver maps API field errors onto the pool's
// attributes; targets[i] is named by the value that was sent.
func targetPoolFieldResolver(targets []string) fieldResolver {
	roots := map[string]bool{"name": true, "region": true, "target_type": true, "targets": true, "tags": true, "deregistration_delay_seconds": true}
	return listFieldResolver(roots, func(name string, i int) (path.Path, bool) {
		if name != "targets" {
			return path.Empty(), false
		}
		if i >= len(targets) {
			return path.Root(name), true
		}
		return path.Root(name).AtSetValue(types.StringValue(targets[i])), true
	})
}
