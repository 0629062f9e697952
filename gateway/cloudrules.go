package gateway

import (
	"cmp"
	"errors"
	"fmt"
	"maps"
	"slices"

	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/example/cloud-provider-example/exampleapi"
	"github.com/example/cloud-provider-example/renderer"
)

// A route never fails its Gateway: what the cloud would refuse of a
// route's rules is found here, before rendering, with the cloud's own
// checks (exampleapi.CheckRule), and refuses that route alone
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

// checkPool stands for the target pool of every node in the checks: the
// controller fills in its id after the translation, and the checks read
// only its form.
const checkPool = "tp-every-node"

// refusedRule is why the cloud would refuse one of cs ("" when it takes
// them all), at names where each comes from in its route.
func refusedRule(cs []candidate, at func(candidate) string) string {
	for _, c := range cs {
		var re *exampleapi.RuleError
		if err := exampleapi.CheckRule(cloudRule(c.rule)); errors.As(err, &re) {
			return fmt.Sprintf("%s: the Example load balancer would refuse its rule (%s)", at(c), re)
		} else if err != nil {
			return fmt.Sprintf("%s: the Example load balancer would refuse its rule (%v)", at(c), err)
		}
	}
	return ""
}

// cloudRule is r as the cloud gets it (the loadbalancer module's and the
// provider's conversion): maps become lists sorted by name, and a
// backend without a node port is left out (Program does so).
func cloudRule(r renderer.Rule) exampleapi.Rule {
	out := exampleapi.Rule{Name: r.Name, ListenerPort: r.ListenerPort, ListenerProtocol: r.ListenerProtocol, Priority: r.Priority,
		PathType: r.PathType, Path: r.Path, Method: r.Method, Headers: headerList(r.Headers)}
	if r.Hostname != "" {
		out.Hostnames = []string{r.Hostname}
	}
	for _, b := range r.Backends {
		if b.Port != 0 {
			out.Backends = append(out.Backends, exampleapi.RuleBackend{TargetPoolID: cmp.Or(b.TargetPoolID, checkPool), Port: b.Port, Weight: b.Weight})
		}
	}
	if rd := r.Redirect; rd != nil {
		out.Redirect = &exampleapi.Redirect{Scheme: rd.Scheme, Hostname: rd.Hostname, Port: rd.Port, StatusCode: rd.StatusCode}
	}
	if f := r.FixedResponse; f != nil {
		out.FixedResponse = &exampleapi.FixedResponse{StatusCode: f.StatusCode}
	}
	if h := r.RequestHeaders; h != nil {
		out.RequestHeaders = &exampleapi.HeaderModifier{Set: headerList(h.Set), Add: headerList(h.Add), Remove: h.Remove}
	}
	return out
}

func headerList(m map[string]string) []exampleapi.HeaderMatch {
	var out []exampleapi.HeaderMatch
	for _, name := range slices.Sorted(maps.Keys(m)) {
		out = append(out, exampleapi.HeaderMatch{Name: name, Value: m[name]})
	}
	return out
}

// mergeBackends gives each backend (a node port of a pool) one entry
// with the sum of its weights, at most exampleapi.MaxBackendWeight: a
// rule naming one Service's port twice is one backend to the cloud,
// which refuses duplicates.
func mergeBackends(bs []Backend) []Backend {
	var out []Backend
	for _, b := range bs {
		i := slices.IndexFunc(out, func(o Backend) bool { return o.Port == b.Port && o.TargetPoolID == b.TargetPoolID })
		if i < 0 {
			out = append(out, b)
			continue
		}
		out[i].Weight = min(out[i].Weight+b.Weight, exampleapi.MaxBackendWeight)
	}
	return out
}
