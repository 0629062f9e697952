package tfprovider

import (
	"context"
	"fmt"
	"time"

	"github.com/hashicorp/terraform-plugin-framework-validators/stringvalidator"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-log/tflog"

	"github.com/example/cloud-provider-example/exampleapi"
)

var (
	_ resource.ResourceWithConfigure      = (*ruleSetResource)(nil)
	_ resource.ResourceWithImportState    = (*ruleSetResource)(nil)
	_ resource.ResourceWithValidateConfig = (*ruleSetResource)(nil)
)

// ruleSetResource is a load balancer's rule set (docs/adr/0028): rules
// written on their own, so that a route's change is a small plan of its
// set, not one of the load balancer with all its rules.
type ruleSetResource struct {
	resourceBase
}

// NewRuleSetResource is the example_load_balancer_rule_set resource.
func NewRuleSetResource() resource.Resource {
	return &ruleSetResource{resourceBase{name: "load_balancer_rule_set"}}
}

func (r *ruleSetResource) Schema(_ context.Context, _ resource.SchemaRequest, resp *resource.SchemaResponse) {
	resp.Schema = schema.Schema{
		Description: "A named group of `http` and `https` rules attached to an `example_load_balancer`, written on its own: " +
			"a change of the set is a plan and apply of its rules alone, however many rules the load balancer and its " +
			"other sets have (a Gateway's route each). The set's rules carry an `order_key` instead of a priority and " +
			"are ordered among the load balancer's keyed rules and those of its other sets. A rule routes the `http` or " +
			"`https` listener of its `listener_port` when the load balancer has one, and nothing until then, so the set " +
			"and the listeners change in either order. The load balancer cannot be deleted while it has sets: a set " +
			"refers to it by `load_balancer_id`, so Terraform destroys the set first. Creating a set whose name the load balancer already " +
			"has fails (import it instead, or see `on_name_conflict`); `load_balancer_id` and `name` cannot change without " +
			"replacing the set, its rules are updated in place.",
		Attributes: withTypes(map[string]schema.Attribute{
			"id": computedStable("`<load_balancer_id>/<name>`, e.g. `lb-0123456789abcdef/routes`."),
			"load_balancer_id": immutableString("Id (`lb-...`) of the load balancer the set's rules route. Changing it "+
				"replaces the set.", idValidator("lb-")),
			"name": immutableString("Name of the set on its load balancer: 1-128 letters, digits and `._-/:@#*`. Equal "+
				"order keys of rules of different sets are ordered by it. Changing it replaces the set.",
				stringvalidator.RegexMatches(exampleapi.RuleNameRE, "must be a rule set name: 1-128 letters, digits and ._-/:@#*")),
			"rules": ruleMapAttribute(fmt.Sprintf("The set's rules, keyed by rule name (1-128 letters, digits and "+
				"`._-/:@#*`, unique in the set), so a plan shows a changed rule as that rule updated in place. They route "+
				"the load balancer's `http` and `https` listeners only, and count towards its %d rules. Each has the "+
				"arguments of the load balancer's `rules` but `priority`: it is placed by its `order_key`. Their backends' "+
				"target pools are of the load balancer's region. Unset (the default) means none.", exampleapi.MaxRules), byKey),
			"on_name_conflict": choiceAttribute("What creating does when the load balancer already has a rule set of this "+
				"`name`, typically one that an apply killed mid-way created but never recorded in state: `"+onConflictError+
				"` (default) fails the apply, naming the import that takes it; `"+onRuleSetConflictAdopt+"` takes it over: "+
				"its rules become the configuration's (one write, refused if the set changes meanwhile), it is recorded in "+
				"state, and a warning says so. A set has no tags to prove whose it is: adopt only on a load balancer whose "+
				"sets this configuration alone writes (the controller's Gateways'). Only consulted on create; changing it "+
				"updates state only.", onConflictError, onRuleSetConflictAdopt),
		}),
	}
}

// ValidateConfig checks the rules as the load balancer's are checked
// (validateEachRule), but for what only the load balancer knows (its
// listeners): a set's rules route http and https listeners only, so a
// rule naming another listener protocol is refused here.
func (r *ruleSetResource) ValidateConfig(ctx context.Context, req resource.ValidateConfigRequest, resp *resource.ValidateConfigResponse) {
	var m ruleSetModel
	resp.Diagnostics.Append(req.Config.Get(ctx, &m)...)
	if resp.Diagnostics.HasError() {
		return
	}
	validateEachRule(ctx, m.Rules, resp, func(name string, rp path.Path, r ruleModel) {
		if p := r.ListenerProtocol.ValueString(); p != "" && p != exampleapi.ProtocolHTTP && p != exampleapi.ProtocolHTTPS {
			resp.Diagnostics.AddAttributeError(rp.AtName("listener_protocol"), "Rule set rule on a "+p+" listener",
				fmt.Sprintf("Rule %q has listener_protocol = %q, but a rule set's rules route http and https listeners "+
					"only: they are ordered by order_key, which the rules of tcp, udp and tls listeners do not have. Put "+
					"the rule in the load balancer's rules, with a priority.", name, p))
		}
	})
}

func (r *ruleSetResource) Create(ctx context.Context, req resource.CreateRequest, resp *resource.CreateResponse) {
	var plan ruleSetModel
	if !loadConfigured(ctx, r.data, &resp.Diagnostics, get(req.Plan, &plan)) {
		return
	}
	in, diags := plan.ruleSetRequest(ctx)
	resp.Diagnostics.Append(diags...)
	if resp.Diagnostics.HasError() {
		return
	}
	id := ruleSetID(plan.LoadBalancerID.ValueString(), plan.Name.ValueString())
	ctx = tflog.SetField(ctx, "rule_set_id", id)
	c := r.data.client
	getCtx, cancel := context.WithTimeout(ctx, objectTimeout)
	found, err := getRuleSet(c, getCtx, id)
	cancel()
	switch {
	case err == nil && plan.OnNameConflict.ValueString() == onRuleSetConflictAdopt:
		r.adopt(ctx, id, found, in, plan, resp)
		return
	case err == nil:
		// A PUT would silently take it over: it is another
		// configuration's, or one an interrupted apply left.
		resp.Diagnostics.AddAttributeError(path.Root("name"), "Rule set already exists",
			fmt.Sprintf("Load balancer %s already has a rule set named %q. To manage it with this configuration, import "+
				"it: terraform import <resource address> %s (or an import block with id = %q). Otherwise choose another "+
				"name. If an interrupted apply of this configuration created it, on_name_conflict = %q takes it over.",
				plan.LoadBalancerID.ValueString(), plan.Name.ValueString(), id, id, onRuleSetConflictAdopt))
		return
	case !exampleapi.IsNotFound(err):
		addAPIError(&resp.Diagnostics, "Cannot create rule set "+id, err, nil)
		return
	}
	// The set was not there: after a lost answer, the one found is ours.
	rs, err := createDetached(ctx, objectTimeout, func(ctx context.Context) (*exampleapi.RuleSet, error) {
		return putRuleSet(c, ctx, id, in, 0)
	}, lostAnswer[exampleapi.RuleSet]{
		find: func(ctx context.Context, _ time.Time) *exampleapi.RuleSet {
			rs, _ := getRuleSet(c, ctx, id)
			return rs
		},
		taking: "taking the rule set found by its name",
		idKey:  "rule_set_id",
		id:     func(rs *exampleapi.RuleSet) string { return ruleSetID(rs.LoadBalancerID, rs.Name) },
	})
	if err != nil {
		addRuleSetError(&resp.Diagnostics, "Cannot create rule set "+id, plan.LoadBalancerID.ValueString(), err, in)
		return
	}
	tflog.Info(ctx, "created rule set")
	setFromAPI(ctx, &resp.State, &resp.Diagnostics, rs, plan, setFromAPIIn(ctx))
}

// adopt takes over found, the set of the plan's name, under
// on_name_conflict = "adopt": its rules become in's, written only if the
// set is still found's version.
func (r *ruleSetResource) adopt(ctx context.Context, id string, found *exampleapi.RuleSet, in exampleapi.PutRuleSetRequest,
	plan ruleSetModel, resp *resource.CreateResponse) {
	putCtx, cancel := context.WithTimeout(ctx, objectTimeout)
	defer cancel()
	rs, err := putRuleSet(r.data.client, putCtx, id, in, found.Version)
	if err != nil {
		addRuleSetError(&resp.Diagnostics, "Cannot adopt rule set "+id, plan.LoadBalancerID.ValueString(), err, in)
		return
	}
	tflog.Warn(ctx, "adopted an existing rule set")
	resp.Diagnostics.AddWarning("Adopted existing rule set "+id,
		fmt.Sprintf("Load balancer %s already had a rule set named %q (%d rule(s)), probably created by an interrupted "+
			"apply; on_name_conflict = %q took it over, and its rules are now this configuration's.",
			plan.LoadBalancerID.ValueString(), plan.Name.ValueString(), len(found.Rules), onRuleSetConflictAdopt))
	setFromAPI(ctx, &resp.State, &resp.Diagnostics, rs, plan, setFromAPIIn(ctx))
}

// addRuleSetError reports a failed PUT of in: a load balancer that does
// not exist on load_balancer_id, a refused rule on that rule.
func addRuleSetError(diags *diag.Diagnostics, summary, lbID string, err error, in exampleapi.PutRuleSetRequest) {
	if exampleapi.IsNotFound(err) {
		diags.AddAttributeError(path.Root("load_balancer_id"), summary,
			fmt.Sprintf("Load balancer %s does not exist: %s", lbID, err))
		return
	}
	addAPIError(diags, summary, err, ruleSetFieldResolver(in))
}

// setFromAPIIn is ruleSetFromAPI in ctx, as refresh and setFromAPI take it.
func setFromAPIIn(ctx context.Context) func(*exampleapi.RuleSet, ruleSetModel) (ruleSetModel, diag.Diagnostics) {
	return func(rs *exampleapi.RuleSet, prior ruleSetModel) (ruleSetModel, diag.Diagnostics) {
		return ruleSetFromAPI(ctx, rs, prior)
	}
}

func (r *ruleSetResource) Read(ctx context.Context, req resource.ReadRequest, resp *resource.ReadResponse) {
	refresh(ctx, r.data, req, resp, "rule set", getRuleSet, setFromAPIIn(ctx))
}

func (r *ruleSetResource) Update(ctx context.Context, req resource.UpdateRequest, resp *resource.UpdateResponse) {
	var plan, state ruleSetModel
	if !loadConfigured(ctx, r.data, &resp.Diagnostics, get(req.Plan, &plan), get(req.State, &state)) {
		return
	}
	if plan.Rules.Equal(state.Rules) {
		// Only on_name_conflict, configuration only: nothing to write.
		state.OnNameConflict = plan.OnNameConflict
		resp.Diagnostics.Append(resp.State.Set(ctx, &state)...)
		return
	}
	in, diags := plan.ruleSetRequest(ctx)
	resp.Diagnostics.Append(diags...)
	if resp.Diagnostics.HasError() {
		return
	}
	id := state.ID.ValueString()
	ctx = tflog.SetField(ctx, "rule_set_id", id)
	ctx, cancel := context.WithTimeout(ctx, objectTimeout)
	defer cancel()
	// Unconditional, as putUpdate: the configuration is the desired state.
	rs, err := putRuleSet(r.data.client, ctx, id, in, 0)
	if err != nil {
		addRuleSetError(&resp.Diagnostics, "Cannot update rule set "+id, state.LoadBalancerID.ValueString(), err, in)
		return
	}
	tflog.Info(ctx, "updated rule set")
	setFromAPI(ctx, &resp.State, &resp.Diagnostics, rs, plan, setFromAPIIn(ctx))
}

func (r *ruleSetResource) Delete(ctx context.Context, req resource.DeleteRequest, resp *resource.DeleteResponse) {
	deleteByID(ctx, r.data, req, resp, deletion{kind: "rule set", timeout: objectTimeout, del: deleteRuleSet})
}

// ImportState takes "<load_balancer_id>/<name>" and fetches the set, so a
// wrong id fails here rather than as a confusing plan.
func (r *ruleSetResource) ImportState(ctx context.Context, req resource.ImportStateRequest, resp *resource.ImportStateResponse) {
	if _, _, err := parseRuleSetID(req.ID); err != nil {
		resp.Diagnostics.AddError("Invalid import id", err.Error()+".")
		return
	}
	if r.data == nil {
		notConfigured(&resp.Diagnostics)
		return
	}
	_, err := getRuleSet(r.data.client, ctx, req.ID)
	switch {
	case exampleapi.IsNotFound(err):
		resp.Diagnostics.AddError("Cannot import rule set "+req.ID,
			fmt.Sprintf("Rule set %q does not exist (or its load balancer does not). Check the id given to the import "+
				"block or to terraform import: <load_balancer_id>/<name>.", req.ID))
		return
	case err != nil:
		addAPIError(&resp.Diagnostics, "Cannot import rule set "+req.ID, err, nil)
		return
	}
	tflog.Info(ctx, "importing rule set", map[string]any{"rule_set_id": req.ID})
	resp.Diagnostics.Append(resp.State.SetAttribute(ctx, path.Root("id"), req.ID)...)
}
