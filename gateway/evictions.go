package gateway

import (
	"fmt"
	"slices"
)

// A route's admission may make rules count in another namespace's share
// (docs/adr/0033): the 404s an older rule without a host name (or of a
// wildcard) needs for the names the route serves, the copies of an
// older team's rules for its names beneath the route's wider rule. They
// are not checked against that share then: a namespace's rule that would
// take others' requests yields to their names, and a team's names
// beneath its own wider rules yield to another's wider rule, whatever
// their age (an edit keeps a route's age). A namespace left past its
// share at the end of a look has its newest costly routes refused, and
// the look is made again without them (Translate).

// pastShares is how far namespaces other than ns and the Gateway's
// would be past their shares with fenced counted: what the budget does
// not hold against ns's route, since the look is made again without
// their routes.
func (ad *admission) pastShares(ns string, fenced fenceCounts) int {
	d := fenced.minus(ad.fenced)
	past := 0
	for _, o := range ad.tenants(d) {
		if o != ns {
			past += max(0, ad.used(o, nil)+d[o]-MaxTenantRules)
		}
	}
	return past
}

// tenants are the namespaces other than the Gateway's that hold part of
// their shares, or would with d, sorted.
func (ad *admission) tenants(d map[string]int) []string {
	seen := map[string]bool{ad.home: true}
	var out []string
	for _, m := range []map[string]int{ad.shares, ad.l.idle, d} {
		for o := range m {
			if !seen[o] {
				seen[o] = true
				out = append(out, o)
			}
		}
	}
	slices.Sort(out)
	return out
}

// evictions are the routes to refuse at the look's next try, of one
// namespace past its share: the one whose newest costly route (of a
// rule whose copies or 404s count in its share, costlyRoutes) is the
// newest, since refusing it may bring the others back (its wider rule
// made their copies). Its newest costly routes, as few as a recount
// without them says bring it back (enough), else its newest route. The
// next try checks again: what the recount cannot see (routes of others
// admitted once these are refused) only adds tries.
func (ad *admission) evictions() map[RouteKey]Reason {
	var fs []candidate
	var pick []RouteKey
	pickNs, newest := "", -1
	for _, ns := range ad.tenants(nil) {
		if ad.used(ns, nil) <= MaxTenantRules {
			continue
		}
		if fs == nil {
			fs = fences(ad.set.http, ad.home, ad.holder(nil), ad.l.held)
		}
		keys, at := ad.costlyRoutes(ns, fs)
		if at > newest {
			pick, pickNs, newest = keys, ns, at
		}
	}
	if newest < 0 {
		return nil // past a share by names alone: nothing admitted to refuse
	}
	if len(pick) > 1 {
		pick = pick[:ad.enough(pickNs, pick, fs)]
	}
	out := map[RouteKey]Reason{}
	for _, k := range pick {
		out[k] = evicted(pickNs)
	}
	return out
}

// costlyRoutes are namespace ns's admitted routes with a rule whose
// copies (fs: the fences) or 404s count in its share, the newest first,
// or else its newest route; and the place of the first in admission
// order (-1: none admitted).
func (ad *admission) costlyRoutes(ns string, fs []candidate) ([]RouteKey, int) {
	costly := map[*origin]bool{}
	for _, c := range fs {
		if c.from != nil && c.from.namespace == ns {
			costly[c.from] = true
		}
		if slices.Contains(c.chargedTo, ns) {
			for _, o := range c.by {
				costly[o] = o.namespace == ns || costly[o]
			}
		}
	}
	var out []RouteKey
	at, last := -1, -1
	for i, u := range slices.Backward(ad.admitted) {
		if u.key.Namespace != ns {
			continue
		}
		last = max(last, i)
		if !slices.Contains(out, u.key) && slices.ContainsFunc(u.http, func(c candidate) bool { return costly[c.from] }) {
			out = append(out, u.key)
			at = max(at, i)
		}
	}
	if len(out) == 0 && last >= 0 {
		return []RouteKey{ad.admitted[last].key}, last
	}
	return out, at
}

// enough is how many of keys, namespace ns's costly routes newest first,
// to refuse: the fewest without which ns would be within its share at a
// recount (usedWithout), all when none is. Refusing more leaves ns fewer
// copies and 404s, so the count falls as more are refused. The recount
// is of the names whose fences count in ns's share (fs: the fences now):
// its own, and those its wider rules fence.
func (ad *admission) enough(ns string, keys []RouteKey, fs []candidate) int {
	only := map[string]bool{}
	for _, h := range ad.l.held() {
		if ad.l.holderOf(h) == ns {
			only[h] = true
		}
	}
	for _, c := range fs {
		if slices.Contains(c.chargedTo, ns) {
			only[c.rule.Hostname] = true
		}
	}
	lo, hi := 1, len(keys)
	for lo < hi {
		if mid := (lo + hi) / 2; ad.usedWithout(ns, keys[:mid], only) <= MaxTenantRules {
			hi = mid
		} else {
			lo = mid + 1
		}
	}
	return lo
}

// usedWithout is what namespace ns's share would hold with routes gone
// refused: less their rules and the copies and 404s they make (a recount
// of the fences of the names only), plus one for each name held before
// this look that only they served (idle again); a name only they
// claimed at this look is not held without them.
func (ad *admission) usedWithout(ns string, gone []RouteKey, only map[string]bool) int {
	origins := map[*origin]bool{}
	goneHosts, keptHosts := map[string]bool{}, map[string]bool{}
	for _, u := range ad.admitted {
		switch {
		case u.key.Namespace != ns:
		case slices.Contains(gone, u.key):
			for _, c := range u.http {
				origins[c.from] = true
			}
			for _, h := range u.hosts {
				goneHosts[h] = true
			}
		default:
			for _, h := range u.hosts {
				keptHosts[h] = true
			}
		}
	}
	kept := slices.DeleteFunc(slices.Clone(ad.set.http), func(c candidate) bool { return origins[c.from] })
	idle, dropped := 0, map[string]bool{}
	for h := range goneHosts {
		switch {
		case keptHosts[h] || ad.l.holderOf(h) != ns:
		case ad.l.heldBefore(h) == ns:
			idle++
		default:
			dropped[h] = true
		}
	}
	holder := ad.holder(nil)
	after := countFences(fencesOf(kept, ad.home,
		func(h string) string {
			if dropped[h] {
				return ""
			}
			return holder(h)
		},
		nil, only))
	return ad.used(ns, nil) - (len(ad.set.http) - len(kept)) + idle - ad.fenced.owed(ns) + after.owed(ns)
}

// evicted is the refusal of a route of namespace ns at a look's next try.
func evicted(ns string) Reason {
	return Reason{Reason: string(ReasonRuleBudgetExceeded), Message: fmt.Sprintf(
		"its rules do not fit in its namespace's share once the routes attached after it are: a rule without a host name (or of a wildcard) "+
			"of a namespace other than the Gateway's needs a 404 for each host name of another namespace it would take on its listener, and a "+
			"namespace's such rules are copied for each of its own host names where another namespace's wider rule is; these count in its share "+
			"(at most %d rules), and with the host names and rules attached after it the routes of %s are past it: its newest routes with such "+
			"costly rules are refused first (a rule with a host name costs none of them)",
		MaxTenantRules, ns)}
}
