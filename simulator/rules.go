package simulator

import (
	"errors"
	"fmt"

	"github.com/example/cloud-provider-example/exampleapi"
	"github.com/example/cloud-provider-example/simulator/routing"
)

// A load balancer's rules (exampleapi/rules.go): each rule's own checks
// are exampleapi.CheckRule's, those of the load balancer here (those only
// tcp, udp and tls listeners have in l4rules.go), the target pools they
// forward to checked against the store on create and update.

// listenerPriority is a rule's priority on its listener.
type listenerPriority struct {
	protocol       string
	port, priority int
}

// validateRules checks rules against the load balancer's listeners ls.
func validateRules(ls []exampleapi.Listener, rules []exampleapi.Rule) error {
	if n := len(rules); n > exampleapi.MaxRules {
		return invalid("rules", "has %d rules (at most %d)", n, exampleapi.MaxRules)
	}
	priorities := map[listenerPriority]int{}
	names := map[string]int{}
	for i, r := range rules {
		f := fmt.Sprintf("rules[%d]", i)
		if err := checkRuleName(f, i, r.Name, names, "load balancer"); err != nil {
			return err
		}
		l, err := pickListener(ls, r.ListenerPort, r.ListenerProtocol, f+".listener_port", f+".listener_protocol", "the load balancer")
		if err != nil {
			return err
		}
		if l.RedirectToHTTPSPort != 0 {
			return invalid(f+".listener_port", "listener http/%d redirects every request to https: it has no requests to route", r.ListenerPort)
		}
		if err := validateRuleOrder(f, l, r); err != nil {
			return err
		}
		// By listener: tcp/53 and udp/53 each have their own priorities;
		// keyed rules have none.
		if key := (listenerPriority{l.Protocol, l.Port, r.Priority}); r.OrderKey == "" {
			if k, dup := priorities[key]; dup {
				return invalid(f+".priority", "priority %d is also rules[%d]'s on listener %s/%d; priorities are unique per listener",
					r.Priority, k, l.Protocol, r.ListenerPort)
			}
			priorities[key] = i
		}
		if err := validateL4Rule(f, l, r); err != nil {
			return err
		}
		if err := validateRule(f, r); err != nil {
			return err
		}
	}
	return nil
}

// validateRule checks what rule r (field f) holds on its own: the
// cloud's checks, shared with the Gateway front-end
// (exampleapi.CheckRule).
func validateRule(f string, r exampleapi.Rule) error {
	var re *exampleapi.RuleError
	if err := exampleapi.CheckRule(r); errors.As(err, &re) {
		return invalid(f+"."+re.Field, "%s", re.Reason)
	} else if err != nil {
		return invalid(f, "%v", err)
	}
	return nil
}

// validateRuleOrder checks how rule r (field f) of listener l is ordered:
// by a priority, or on an http or https listener by an order key instead
// (exampleapi/rulesets.go); never both.
func validateRuleOrder(f string, l exampleapi.Listener, r exampleapi.Rule) error {
	switch {
	case r.OrderKey == "":
		return validateRange(f+".priority", r.Priority, 1, exampleapi.MaxRulePriority)
	case r.Priority != 0:
		return invalid(f+".order_key", "is exclusive with priority: a rule is numbered or keyed")
	case !routing.IsHTTP(l):
		return invalid(f+".order_key", "is not allowed on listener %s/%d: only http and https rules are ordered by key", l.Protocol, l.Port)
	}
	return nil
}

// checkRuleName checks the name of rule i (field f), unique in scope
// among names, which it is added to.
func checkRuleName(f string, i int, name string, names map[string]int, scope string) error {
	if !exampleapi.RuleNameRE.MatchString(name) {
		return invalid(f+".name", "%q is not a rule name (1-128 letters, digits and ._-/:@#*)", name)
	}
	if k, dup := names[name]; dup {
		return invalid(f+".name", "%q is also rules[%d]'s; names are unique per %s", name, k, scope)
	}
	names[name] = i
	return nil
}
