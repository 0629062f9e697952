package tfprovider

import (
	"context"
	"fmt"

	"github.com/hashicorp/terraform-plugin-framework-validators/int64validator"
	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/example/cloud-provider-example/exampleapi"
)

// How a rule is placed among its listener's rules (docs/adr/0028,
// exampleapi/rulesets.go): a load balancer's own rule by a priority or an
// order key, a rule set's by an order key only. The rules of
// example_load_balancer and of example_load_balancer_rule_set are one
// schema, one model and one conversion but for that.

type ruleOrder int

const (
	// byPriorityOrKey is a load balancer's own rule: priority or order_key.
	byPriorityOrKey ruleOrder = iota
	// byKey is a rule set's rule: order_key, required; no priority.
	byKey
)

// keyOrderText says how keyed rules are ordered, ties included.
const keyOrderText = "A listener looks at its numbered rules first (by `priority`), then at its keyed rules, the load " +
	"balancer's own and those of all its `example_load_balancer_rule_set`s together, ordered by key byte by byte; " +
	"equal keys are ordered by the rule set's name (the load balancer's own rules first), then by the rule's name."

// attributes are the rule's attributes that order it.
func (o ruleOrder) attributes() map[string]schema.Attribute {
	key := schema.StringAttribute{Validators: []validator.String{orderKeyValidator}}
	if o == byKey {
		key.Required = true
		key.Description = fmt.Sprintf("Where the rule is among its listener's rules: 1-%d printable ASCII characters "+
			"without spaces, compared byte by byte (a Gateway's controller derives it from the Gateway API's "+
			"precedence). ", exampleapi.MaxOrderKeyLen) + keyOrderText
		return map[string]schema.Attribute{"order_key": key}
	}
	key.Optional = true
	key.Description = fmt.Sprintf("Where the rule is among its listener's keyed rules, instead of a `priority` (`http` "+
		"and `https` listeners only): 1-%d printable ASCII characters without spaces, compared byte by byte. ",
		exampleapi.MaxOrderKeyLen) + keyOrderText
	return map[string]schema.Attribute{
		"priority": schema.Int64Attribute{
			Optional: true,
			Description: fmt.Sprintf("Order among the listener's numbered rules, 1-%d, unique among them per listener "+
				"(`tcp/53` and `udp/53` are two): of the rules whose conditions hold, the lowest priority serves the "+
				"request, before any keyed rule (`order_key`). Exactly one of `priority` and `order_key`; the rules of "+
				"`tcp`, `udp` and `tls` listeners have a priority.", exampleapi.MaxRulePriority),
			Validators: []validator.Int64{int64validator.Between(1, exampleapi.MaxRulePriority)},
		},
		"order_key": key,
	}
}

// objectType is the type of a rule ordered so.
func (o ruleOrder) objectType() types.ObjectType {
	if o == byKey {
		return keyedRuleType
	}
	return ruleType
}

// orderKeyValidator is exampleapi.IsOrderKey.
var orderKeyValidator = stringCheck{
	description: "must be an order key: 1-512 printable ASCII characters without spaces",
	summary:     "Invalid rule order key",
	check: func(k string) error {
		if len(k) > exampleapi.MaxOrderKeyLen {
			return fmt.Errorf("the order key is %d characters long: at most %d.", len(k), exampleapi.MaxOrderKeyLen) //nolint:staticcheck // diagnostics are sentences
		}
		if !exampleapi.IsOrderKey(k) {
			return fmt.Errorf("%q is not an order key: 1-%d printable ASCII characters without spaces, compared byte by byte.", //nolint:staticcheck // diagnostics are sentences
				k, exampleapi.MaxOrderKeyLen)
		}
		return nil
	},
}

// ruleAs decodes rule v, of either resource's rules, into a ruleModel: a
// rule set's has no priority, so Priority is null. False, with nothing
// added to diags, when v is not a known object.
func ruleAs(ctx context.Context, v attr.Value, diags *diag.Diagnostics) (ruleModel, bool) {
	o, ok := v.(types.Object)
	if !ok {
		return ruleModel{}, false
	}
	if _, numbered := o.AttributeTypes(ctx)["priority"]; numbered {
		return objectAs[ruleModel](ctx, o, diags)
	}
	k, ok := objectAs[keyedRuleModel](ctx, o, diags)
	return ruleModel{Priority: types.Int64Null(), keyedRuleModel: k}, ok
}

// knownRule is ruleAs for a value that may not be known yet, as knownAs.
func knownRule(ctx context.Context, v attr.Value) (ruleModel, bool) {
	var d diag.Diagnostics
	r, ok := ruleAs(ctx, v, &d)
	if !ok || d.HasError() {
		return ruleModel{}, false
	}
	return r, true
}

// validateRuleOrder checks that a load balancer's own rule has exactly
// one of priority and order_key. What is unknown may be null at apply
// time, so it conflicts with nothing yet.
func validateRuleOrder(name string, rp path.Path, r ruleModel, resp *resource.ValidateConfigResponse) {
	switch {
	case r.Priority.IsNull() && r.OrderKey.IsNull():
		resp.Diagnostics.AddAttributeError(rp, "Missing rule priority or order_key",
			fmt.Sprintf("Rule %q has neither a priority nor an order_key: set one. priority (1-%d) orders the listener's "+
				"numbered rules, looked at first; order_key orders its keyed rules after them (http and https listeners only).",
				name, exampleapi.MaxRulePriority))
	case isKnown(r.Priority) && isKnown(r.OrderKey):
		resp.Diagnostics.AddAttributeError(rp, "Conflicting rule priority and order_key",
			fmt.Sprintf("Rule %q has priority = %d and order_key = %q: a rule is ordered by one of them. Remove one.",
				name, r.Priority.ValueInt64(), r.OrderKey.ValueString()))
	}
}
