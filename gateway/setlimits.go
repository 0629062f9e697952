package gateway

import (
	"fmt"
	"slices"

	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/example/cloud-provider-example/exampleapi"
)

// The ListenerSets' listeners share the Gateway's one load balancer, and
// its limits with every team: the cloud refuses a load balancer of more
// than exampleapi.MaxListeners listeners whole; and each listener whose
// host name another of its port covers ends with a catch-all (isolation)
// in the load balancer's rule budget. Unbounded, one namespace that
// allowedListeners admits could fail the Gateway, or fill its rules so
// that no other team's route fits. So they are admitted against those
// limits, the Gateway's own listeners counted first, then the oldest
// ListenerSet's: one past a limit is not built, and the catch-alls a
// listener causes (its own, and those of the listeners its host name
// covers) and its host name (newNames) count in its namespace's share of
// the rules (MaxTenantRules) before any route's. An HTTPS listener's certificates are counted by
// Program, as they resolve (pastLimits): a certificateRef that does not
// resolve takes no other team's place.

// reasonListenerRuleBudget: a ListenerSet's listener's catch-alls do not
// fit in its namespace's share, or in the budget (the routes' reason).
const reasonListenerRuleBudget = gatewayv1.ListenerConditionReason(ReasonRuleBudgetExceeded)

// cloudListener is a cloud listener: one per port and protocol.
type cloudListener struct {
	port     int32
	protocol string
}

func cloudListenerOf(l *listener) cloudListener {
	return cloudListener{l.spec.Port, cloudProtocol(l.spec.Protocol)}
}

// capacity is what the accepted listeners take of the load balancer.
type capacity struct {
	// built are the accepted listeners, by cloud listener.
	built map[cloudListener][]*listener
	// isolated are the accepted listeners with a catch-all; rules counts
	// them.
	isolated map[*listener]bool
	rules    int
}

// newCapacity is what gw's own accepted listeners ls take: whatever they
// take, ListenerSets' listeners come after them.
func newCapacity(ls []*listener) *capacity {
	c := &capacity{built: map[cloudListener][]*listener{}, isolated: map[*listener]bool{}}
	for _, l := range ls {
		if l.refused == "" {
			c.take(l, c.catchAlls(l))
		}
	}
	return c
}

// catchAlls are the listeners that l, built, would give a catch-all:
// itself where a built listener covers its host name, and the built ones
// without one that its host name covers.
func (c *capacity) catchAlls(l *listener) []*listener {
	var out []*listener
	built := c.built[cloudListenerOf(l)]
	if slices.ContainsFunc(built, func(o *listener) bool { return coveredBy(l, o) }) {
		out = append(out, l)
	}
	for _, o := range built {
		if !c.isolated[o] && coveredBy(o, l) {
			out = append(out, o)
		}
	}
	return out
}

// take records l built, with its catch-alls.
func (c *capacity) take(l *listener, catchAlls []*listener) {
	cl := cloudListenerOf(l)
	c.built[cl] = append(c.built[cl], l)
	for _, o := range catchAlls {
		c.isolated[o] = true
	}
	c.rules += len(catchAlls)
}

// fit builds ListenerSet listener l where the load balancer's limits
// leave room, or says why not: a cloud listener past the cloud's, or
// catch-alls (with the names it claims, new to its namespace) past its
// namespace's share, or catch-alls past the budget. The message names only l's namespace.
func (ad *admission) fit(c *capacity, l *listener, names int) (gatewayv1.ListenerConditionReason, string) {
	const order = "listeners are built the Gateway's first, then the oldest ListenerSet's"
	cl := cloudListenerOf(l)
	if _, ok := c.built[cl]; !ok && len(c.built) >= exampleapi.MaxListeners {
		return gatewayv1.ListenerReasonPortUnavailable, fmt.Sprintf("port %d would need a listener of its own on the Example load balancer, "+
			"which takes at most %d listeners (one per port and protocol), all of them taken by the listeners before this one (%s)",
			l.spec.Port, exampleapi.MaxListeners, order)
	}
	iso := c.catchAlls(l)
	ns := l.set.Namespace
	if used := ad.used(ns, []string{l.hostname()}); ns != ad.home && used+len(iso)+names > MaxTenantRules {
		return reasonListenerRuleBudget, fmt.Sprintf("its catch-all rules and host name do not fit in its namespace's share: the routes and listeners of a namespace "+
			"other than the Gateway's (their host names one each, as the names it holds in their grace) hold at most %d of its rules, and those of %s before this one hold %d, "+
			"for the %d it would add (a listener ends with a rule answering 404 where another listener of its port covers its host name, "+
			"and so does each listener its own covers; %s)",
			MaxTenantRules, ns, used, len(iso)+names, order)
	}
	if c.rules+len(iso) > exampleapi.MaxRules {
		return reasonListenerRuleBudget, fmt.Sprintf("its catch-all rules do not fit: the Example load balancer holds at most %d rules, "+
			"and the listeners before this one leave %d of them, for the %d it would add (%s)",
			exampleapi.MaxRules, max(exampleapi.MaxRules-c.rules, 0), len(iso), order)
	}
	c.take(l, iso)
	if ns != ad.home {
		ad.shares[ns] += len(iso) + names
	}
	return "", ""
}

// newNames is how many of the host names a ListenerSet's listener of
// namespace ns claims (uses) are new to ns at this look: each counts one
// in its share, as an idle name does, for the 404s that keep it ns's on
// every listener where another namespace's rule without a host name
// would take it (fences.go). A name held by another namespace (served
// with its consent) is that namespace's.
func (ad *admission) newNames(ns string, uses []hostUse) int {
	n := 0
	for _, u := range uses {
		if h := ad.l.holderOf(u.host); (h == "" || h == ns) && !ad.l.served[u.host] {
			n++
		}
	}
	return n
}
