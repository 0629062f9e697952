package routing

import (
	"cmp"
	"slices"
	"strings"

	"github.com/example/cloud-provider-example/exampleapi"
)

// The order a listener looks at its rules in (exampleapi/rulesets.go):
// the load balancer's numbered rules by priority, then the keyed rules of
// the load balancer and of its rule sets together by order key, equal
// keys by set name (the load balancer's own first) and rule name, so that
// the order is total whatever the keys.

// setRule is a rule with the rule set it is in ("": the load balancer's
// own).
type setRule struct {
	set string
	exampleapi.Rule
}

// listenerRules are the rules of lb and sets that route listener l, in
// the order l looks at them.
func listenerRules(lb exampleapi.LoadBalancer, sets []exampleapi.RuleSet, l exampleapi.Listener) []setRule {
	var out []setRule
	add := func(set string, rules []exampleapi.Rule) {
		for _, r := range rules {
			if rl, ok := ListenerOn(lb.Listeners, r.ListenerPort, r.ListenerProtocol); ok && rl.Port == l.Port && rl.Protocol == l.Protocol {
				out = append(out, setRule{set, r})
			}
		}
	}
	add("", lb.Rules)
	for _, s := range sets {
		add(s.Name, s.Rules)
	}
	slices.SortFunc(out, compareRules)
	return out
}

// compareRules orders two rules of one listener.
func compareRules(a, b setRule) int {
	if ka, kb := a.OrderKey != "", b.OrderKey != ""; ka != kb {
		if kb {
			return -1
		}
		return 1
	}
	return cmp.Or(cmp.Compare(a.Priority, b.Priority), strings.Compare(a.OrderKey, b.OrderKey),
		strings.Compare(a.set, b.set), strings.Compare(a.Name, b.Name))
}
