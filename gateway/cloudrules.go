package gateway

import (
	"errors"
	"fmt"
	"slices"

	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/example/cloud-provider-example/exampleapi"
)

// A route never fails its Gateway: what the cloud would refuse of a
// route's rules is found here, before rendering, with the cloud's own
// checks (lbmodel.Rule.Validate, exampleapi.CheckRule), and refuses that route alone
// (UnsupportedValue). The rule budget is admission.go's.

// Route condition reasons of this implementation, where the Gateway API
// has none that fits.
const (
	// ReasonRuleBudgetExceeded: the route's rules do not fit in what the
	// load balancer has left (exampleapi.MaxRules in all).
	ReasonRuleBudgetExceeded gatewayv1.RouteConditionReason = "RuleBudgetExceeded"
	// ReasonHostnameInUse: another namespace holds a host name the
	// route would serve, and has not consented.
	ReasonHostnameInUse gatewayv1.RouteConditionReason = "HostnameInUse"
)

// refusedRule is why the cloud would refuse one of cs ("" when it takes
// them all), at names where each comes from in its route.
func refusedRule(cs []candidate, at func(candidate) string) string {
	for _, c := range cs {
		var re *exampleapi.RuleError
		if err := c.rule.Validate(); errors.As(err, &re) {
			return fmt.Sprintf("%s: the Example load balancer would refuse its rule (%s)", at(c), re)
		} else if err != nil {
			return fmt.Sprintf("%s: the Example load balancer would refuse its rule (%v)", at(c), err)
		}
	}
	return ""
}

// mergeBackends gives each backend (a node port of a pool, or a Service
// port's pods) one entry
// with the sum of its weights, at most exampleapi.MaxBackendWeight: a
// rule naming one Service's port twice is one backend to the cloud,
// which refuses duplicates.
func mergeBackends(bs []Backend) []Backend {
	var out []Backend
	for _, b := range bs {
		i := slices.IndexFunc(out, b.Same)
		if i < 0 {
			out = append(out, b)
			continue
		}
		out[i].Weight = min(out[i].Weight+b.Weight, exampleapi.MaxBackendWeight)
	}
	return out
}
