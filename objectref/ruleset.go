package objectref

import "strings"

// RuleSet is the identity of the rule set of route kind routeNamespace/
// route on Gateway gatewayNamespace/gateway: the route's rules on that
// Gateway's load balancer (a route attached to two Gateways has two).
func RuleSet(gatewayNamespace, gateway, kind, routeNamespace, route string) Ref {
	return Ref{Kind: KindRuleSet, Namespace: gatewayNamespace, Name: RuleSetName(gateway, kind, routeNamespace, route)}
}

// RuleSetName is a rule set's name: the Gateway's, the route's kind,
// namespace and name ("gw:HTTPRoute:shop:web"), joined by ':', which no
// Kubernetes name holds, so it reads back whole.
func RuleSetName(gateway, kind, routeNamespace, route string) string {
	return strings.Join([]string{gateway, kind, routeNamespace, route}, ":")
}

// ParseRuleSetName reads a RuleSetName back.
func ParseRuleSetName(name string) (gateway, kind, routeNamespace, route string, ok bool) {
	parts := strings.Split(name, ":")
	if len(parts) != 4 || parts[0] == "" || parts[1] == "" || parts[2] == "" || parts[3] == "" {
		return "", "", "", "", false
	}
	return parts[0], parts[1], parts[2], parts[3], true
}
