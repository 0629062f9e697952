package renderer

import (
	"cmp"
	"slices"

	"github.com/zclconf/go-cty/cty"

	"github.com/example/cloud-provider-example/exampleapi"
	"github.com/example/cloud-provider-example/lbmodel"
)

// RenderGateway renders the root module of a Gateway: one load balancer
// with its listeners and rules, forwarding only by its rules (it has no
// targets of its own). Like LoadBalancer it does no I/O, and identical
// inputs render byte-identical files.
func RenderGateway(g lbmodel.LoadBalancer, cfg Config) (_ *Module, err error) {
	defer wrap(&err, "render %s", g.Ref().Describe())
	if cfg, err = cfg.validFor(g); err != nil {
		return nil, err
	}
	// What a Service decides of its load balancer, a Gateway's takes
	// from the config; its listeners without a target port take their
	// own.
	g.CloudName, g.Region, g.Type, g.IPFamily, g.Algorithm = lbmodel.GatewayName(g, cfg.ClusterID), cfg.Region, cfg.DefaultLoadBalancerType, exampleapi.IPFamilyIPv4, cfg.DefaultAlgorithm
	g.Tags = lbmodel.OwnerTags(cfg.ClusterID, g.Ref(), lbmodel.TagGatewayName)
	g.Listeners = g.SortedListeners()
	for i := range g.Listeners {
		g.Listeners[i].TargetPort = cmp.Or(g.Listeners[i].TargetPort, g.Listeners[i].Port)
	}
	r, err := ownLoadBalancerRoot(cfg, g.Ref().Describe(), g.UID, "the Gateway, its routes or their Services change")
	if err != nil {
		return nil, err
	}
	if err := r.loadBalancer(g, cfg, rulesInput(g.Rules)); err != nil {
		return nil, err
	}
	r.heldRoutes(g.Rules)
	return newModule(r.bytes(), nil), nil
}

// HeldRoutesOutput is the output of a Gateway's root module that lists
// the routes (RouteRef keys, sorted) whose rules its load balancer holds
// itself: on their way to their rule sets (docs/adr/0028), once. A
// Gateway's root rendered before rule sets has no such output, and held
// every route's rules.
const HeldRoutesOutput = "held_routes"

// heldRoutes renders HeldRoutesOutput: the routes of rules that carry one.
func (r *root) heldRoutes(rules []lbmodel.Rule) {
	var keys []string
	for _, rule := range rules {
		if rule.Route != nil {
			keys = append(keys, rule.Route.Key())
		}
	}
	slices.Sort(keys)
	keys = slices.Compact(keys)
	held := cty.ListValEmpty(cty.String)
	if len(keys) > 0 {
		vals := make([]cty.Value, len(keys))
		for i, k := range keys {
			vals[i] = cty.StringVal(k)
		}
		held = cty.ListVal(vals)
	}
	r.body.AppendNewline()
	b := r.body.AppendNewBlock("output", []string{HeldRoutesOutput}).Body()
	b.SetAttributeValue("description", cty.StringVal("Routes (kind/namespace/name) whose rules the load balancer holds itself, "+
		"until their rule sets hold them."))
	b.SetAttributeValue("value", held)
}
