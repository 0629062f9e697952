package tfprovider

import (
	"context"
	"fmt"
	"strings"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/example/cloud-provider-example/exampleapi"
)

// ruleSetModel is the example_load_balancer_rule_set resource. Its rules
// are a load balancer's rules but ordered by key only (ruleOrder byKey).
type ruleSetModel struct {
	ID             types.String `tfsdk:"id"`
	LoadBalancerID types.String `tfsdk:"load_balancer_id"`
	Name           types.String `tfsdk:"name"`
	Rules          types.Map    `tfsdk:"rules"`
	// OnNameConflict is configuration only.
	OnNameConflict types.String `tfsdk:"on_name_conflict"`
}

// ruleSetID is a set's id, "<load balancer id>/<name>": the cloud names
// a set within its load balancer.
func ruleSetID(lbID, name string) string { return lbID + "/" + name }

// parseRuleSetID splits a rule set's id. A set's name may hold "/", a load
// balancer's id not: the first "/" ends the load balancer's id.
func parseRuleSetID(id string) (lbID, name string, err error) {
	lbID, name, ok := strings.Cut(id, "/")
	if !ok || checkIDPrefix(lbID, "lb-") != nil || !exampleapi.RuleNameRE.MatchString(name) {
		return "", "", fmt.Errorf("%q is not a rule set id: want <load_balancer_id>/<name>, e.g. "+
			"lb-0123456789abcdef/routes, the name 1-128 letters, digits and ._-/:@#*", id)
	}
	return lbID, name, nil
}

// ruleSetRequest is the PUT body of a known plan: the set's rules, [] for
// none.
func (m ruleSetModel) ruleSetRequest(ctx context.Context) (exampleapi.PutRuleSetRequest, diag.Diagnostics) {
	var diags diag.Diagnostics
	rules := rulesToAPI(ctx, m.Rules, &diags)
	if rules == nil {
		rules = []exampleapi.Rule{}
	}
	return exampleapi.PutRuleSetRequest{Rules: rules}, diags
}

// ruleSetFromAPI is the model of the cloud's set; prior (plan or state)
// keeps the empty collections the cloud cannot tell from none.
func ruleSetFromAPI(ctx context.Context, rs *exampleapi.RuleSet, prior ruleSetModel) (ruleSetModel, diag.Diagnostics) {
	var diags diag.Diagnostics
	m := ruleSetModel{
		ID:             types.StringValue(ruleSetID(rs.LoadBalancerID, rs.Name)),
		LoadBalancerID: types.StringValue(rs.LoadBalancerID),
		Name:           types.StringValue(rs.Name),
		Rules:          rulesFromAPI(ctx, rs.Rules, prior.Rules, byKey, &diags),
		OnNameConflict: stateOnly(prior.OnNameConflict, onConflictError),
	}
	return m, diags
}

// ruleSetFieldResolver maps the cloud's field errors of a PUT of req onto
// the set's attributes: rules[i], and any field inside it, on the rule of
// that key (onRule).
func ruleSetFieldResolver(req exampleapi.PutRuleSetRequest) fieldResolver {
	return onRule(listFieldResolver(map[string]bool{"name": true, "rules": true}, func(name string, i int) (path.Path, bool) {
		if name != "rules" {
			return path.Empty(), false
		}
		return ruleAt(req.Rules, i), true
	}))
}

// The client's rule set calls by the set's id, as refresh, putUpdate and
// deleteByID take them.

func getRuleSet(c *exampleapi.Client, ctx context.Context, id string) (*exampleapi.RuleSet, error) {
	lbID, name, err := parseRuleSetID(id)
	if err != nil {
		return nil, err
	}
	return c.GetRuleSet(ctx, lbID, name)
}

func putRuleSet(c *exampleapi.Client, ctx context.Context, id string, in exampleapi.PutRuleSetRequest, ifMatch int64) (*exampleapi.RuleSet, error) {
	lbID, name, err := parseRuleSetID(id)
	if err != nil {
		return nil, err
	}
	return c.PutRuleSet(ctx, lbID, name, in, ifMatch)
}

func deleteRuleSet(c *exampleapi.Client, ctx context.Context, id string) error {
	lbID, name, err := parseRuleSetID(id)
	if err != nil {
		return err
	}
	return c.DeleteRuleSet(ctx, lbID, name)
}
