package renderer

import (
	"errors"
	"fmt"
	"slices"

	"github.com/zclconf/go-cty/cty"

	"github.com/example/cloud-provider-example/lbmodel"
)

// RoutesModuleName is the module call in the cluster's routes root module.
const RoutesModuleName = "routes"

var routesOutputs = []output{
	{"network_id", "Id of the network holding the routes."},
	{"route_ids", "Route id by destination CIDR."},
	{"routes", "Routes by destination CIDR: id, target_instance_id and status."},
}

// Routes renders the root module of the cluster's routes: one module call
// whose map is keyed by destination, so adding a node's route never
// touches another's. Order of routes does not matter.
func Routes(routes []lbmodel.Route, cfg Config) (_ *Module, err error) {
	defer wrap(&err, "render routes")
	cfg, err = cfg.withDefaults()
	if err != nil {
		return nil, err
	}
	if cfg.NetworkID == "" && cfg.NetworkName == "" {
		return nil, configError("networkName", "", "is required to render routes (or networkID)")
	}
	targets := map[string]string{}
	nodes := map[string]string{}
	for i, r := range routes {
		field := fmt.Sprintf("routes[%d]", i)
		if err := r.Validate(); err != nil {
			var in *lbmodel.InputError
			if errors.As(err, &in) {
				return nil, &lbmodel.InputError{Field: field + "." + in.Field, Value: in.Value, Reason: in.Reason}
			}
			return nil, err
		}
		if prev, dup := targets[r.Destination]; dup {
			return nil, &lbmodel.InputError{Field: field + ".destination", Value: r.Destination,
				Reason: fmt.Sprintf("is routed twice (to %s and %s)", prev, r.TargetInstanceID)}
		}
		targets[r.Destination] = r.TargetInstanceID
		if r.NodeName != "" {
			nodes[r.Destination] = "node " + r.NodeName
		}
	}
	dests := make([]string, 0, len(targets))
	for d := range targets {
		dests = append(dests, d)
	}
	slices.Sort(dests) // Terraform's own order for map keys

	r, err := newModuleRoot(cfg, cfg.RoutesModule, DefaultRoutesModuleSource,
		heading{about: "the routes of cluster " + cfg.ClusterID, rewrite: "the cluster's nodes change"})
	if err != nil {
		return nil, err
	}
	var inputs []input
	if cfg.NetworkID != "" {
		inputs = append(inputs, input{name: "network_id", value: cty.StringVal(cfg.NetworkID)})
	} else {
		inputs = append(inputs,
			input{name: "network_name", value: cty.StringVal(cfg.NetworkName)},
			input{name: "region", value: cty.StringVal(cfg.Region)})
	}
	inputs = append(inputs, input{
		name:   "routes",
		value:  stringMap(targets),
		tokens: commentedMapTokens(dests, targets, nodes),
	})
	if err := r.moduleCall(RoutesModuleName, cfg.RoutesModule, inputs); err != nil {
		return nil, err
	}
	r.outputs(RoutesModuleName, routesOutputs)
	return newModule(r.bytes(), nil), nil
}
