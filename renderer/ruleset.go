package renderer

import (
	"fmt"

	"github.com/zclconf/go-cty/cty"

	"github.com/example/cloud-provider-example/lbmodel"
	"github.com/example/cloud-provider-example/objectref"
)

// RuleSetModuleName is the module call in a rule set's root module.
const (
	RuleSetModuleName          = "ruleset"
	DefaultRuleSetModuleSource = "./modules/ruleset"
)

var ruleSetOutputs = []output{
	{"id", "Id of the rule set: <load balancer id>/<name>."},
}

// RuleSetName is the cloud name of rule set ref on its load balancer: a
// hash, so the name tells nobody whose route it is, and a new route of an
// old name (another Gateway's, another namespace's) never meets it.
func RuleSetName(ref objectref.Ref) string {
	return objectref.HashedName("route-", 16, ref.Key())
}

// RuleSetRoot renders the root module of one route's rule set on its
// Gateway's load balancer (docs/adr/0028): the ruleset module with the
// route's rules, so a route's change is a plan of this workspace alone.
func RuleSetRoot(s lbmodel.RuleSet, cfg Config) (_ *Module, err error) {
	ref := s.Ref()
	defer wrap(&err, "render %s", ref.Describe())
	if cfg, err = cfg.validFor(s); err != nil {
		return nil, err
	}
	src := ModuleSource{Source: DefaultRuleSetModuleSource}
	r, err := newModuleRoot(cfg, src, DefaultRuleSetModuleSource, heading{
		about:   fmt.Sprintf("the rules of %s %s/%s on Gateway %s/%s", s.RouteKind, s.RouteNamespace, s.Route, s.GatewayNamespace, s.Gateway),
		notes:   []string{fmt.Sprintf("It holds %d rule(s) on load balancer %s.", len(s.Rules), s.LoadBalancerID)},
		rewrite: "the route, or what its rules forward to, changes",
	})
	if err != nil {
		return nil, err
	}
	inputs := []input{
		{name: "load_balancer_id", value: cty.StringVal(s.LoadBalancerID)},
		{name: "name", value: cty.StringVal(RuleSetName(ref))},
		{name: "rules", value: rulesValue(s.Rules)},
	}
	if err := r.moduleCall(RuleSetModuleName, src, inputs); err != nil {
		return nil, err
	}
	r.outputs(RuleSetModuleName, ruleSetOutputs)
	return newModule(r.bytes(), nil), nil
}
