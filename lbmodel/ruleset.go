package lbmodel

import (
	"fmt"
	"strings"

	"github.com/example/cloud-provider-example/exampleapi"
	"github.com/example/cloud-provider-example/objectref"
)

// RuleSet is one route's rules on a Gateway's load balancer
// (docs/adr/0028): a rule set of the cloud in a workspace of its own,
// attached to the load balancer the Gateway's workspace applied, so a
// route's change plans and applies its own rules and nothing else.
type RuleSet struct {
	// GatewayNamespace and Gateway name the Gateway; RouteKind,
	// RouteNamespace and Route the route.
	GatewayNamespace string `json:"gatewayNamespace"`
	Gateway          string `json:"gateway"`
	RouteKind        string `json:"routeKind"`
	RouteNamespace   string `json:"routeNamespace"`
	Route            string `json:"route"`
	// LoadBalancerID is the Gateway's load balancer (lb-...), as its
	// workspace applied it.
	LoadBalancerID string `json:"loadBalancerID"`
	// Rules are the route's rules on the Gateway's http and https
	// listeners, each ordered by its OrderKey.
	Rules []Rule `json:"rules,omitempty"`
}

// Ref is the rule set's identity.
func (s RuleSet) Ref() objectref.Ref {
	return objectref.RuleSet(s.GatewayNamespace, s.Gateway, s.RouteKind, s.RouteNamespace, s.Route)
}

// RouteRef names the set's route.
func (s RuleSet) RouteRef() RouteRef {
	return RouteRef{Kind: s.RouteKind, Namespace: s.RouteNamespace, Name: s.Route}
}

// Validate refuses a rule set the cloud could not hold: a load balancer
// that is none, a rule without an order key or with a priority, two rules
// named alike, a rule the cloud refuses on its own.
func (s RuleSet) Validate() error {
	switch {
	case s.Gateway == "" || s.GatewayNamespace == "" || s.Route == "" || s.RouteNamespace == "" || s.RouteKind == "":
		return &InputError{Field: "route", Value: s.Ref().Name, Reason: "is not a Gateway's route"}
	case !strings.HasPrefix(s.LoadBalancerID, "lb-"):
		return &InputError{Field: "loadBalancerID", Value: s.LoadBalancerID, Reason: "is not a load balancer id (lb-...)"}
	case len(s.Rules) > exampleapi.MaxRules:
		return &InputError{Field: "rules", Value: fmt.Sprint(len(s.Rules)), Reason: fmt.Sprintf("are more than %d", exampleapi.MaxRules)}
	}
	names := map[string]bool{}
	for _, r := range s.Rules {
		field := "rules[" + r.Name + "]"
		switch {
		case names[r.Name]:
			return &InputError{Field: field, Reason: "is named twice"}
		case r.OrderKey == "" || r.Priority != 0:
			return &InputError{Field: field, Reason: "is not ordered by a key alone: a rule set's rules have an order key and no priority"}
		}
		names[r.Name] = true
		if err := r.Validate(); err != nil {
			return &InputError{Field: field, Reason: err.Error()}
		}
	}
	return nil
}
