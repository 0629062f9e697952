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
// share at the end of a look has its newest such route refused, and the
// look is made again without it (Translate).

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
	var out []string
	for _, m := range []map[string]int{ad.shares, ad.l.idle, d} {
		for o := range m {
			if o != ad.home && !slices.Contains(out, o) {
				out = append(out, o)
			}
		}
	}
	slices.Sort(out)
	return out
}

// evictions are the routes to refuse at the look's next try: of each
// namespace past its share, its newest admitted routes with a rule that
// may take another host name's requests (their copies and 404s are what
// grew after their admission), as few as bring it back within its share
// by a recount of the fences without them (wideEnough), else its newest
// route. The next try checks again: what the recount cannot see (routes
// of others admitted once these are refused) only adds tries.
func (ad *admission) evictions() map[RouteKey]Reason {
	var out map[RouteKey]Reason
	for _, ns := range ad.tenants(nil) {
		if ad.used(ns, nil) <= MaxTenantRules {
			continue
		}
		keys := ad.wideRoutes(ns)
		if len(keys) == 0 {
			for _, u := range slices.Backward(ad.admitted) {
				if u.key.Namespace == ns {
					keys = []RouteKey{u.key}
					break
				}
			}
		} else {
			keys = keys[:ad.wideEnough(ns, keys)]
		}
		for _, k := range keys {
			if out == nil {
				out = map[RouteKey]Reason{}
			}
			out[k] = evicted(ns)
		}
	}
	return out
}

// wideRoutes are namespace ns's admitted routes with a rule that may
// take another host name's requests, the newest first.
func (ad *admission) wideRoutes(ns string) []RouteKey {
	var out []RouteKey
	for _, u := range slices.Backward(ad.admitted) {
		if u.key.Namespace == ns && !slices.Contains(out, u.key) &&
			slices.ContainsFunc(u.http, func(c candidate) bool { return mayWiden(c.rule.Hostname) }) {
			out = append(out, u.key)
		}
	}
	return out
}

// wideEnough is how many of keys, ns's wide routes newest first, to
// refuse: the fewest without which a recount of the fences finds ns
// within its share (all when none is). Refusing more leaves ns no more
// copies and 404s, so the count falls as n grows.
func (ad *admission) wideEnough(ns string, keys []RouteKey) int {
	fits := func(n int) bool {
		gone := map[string]bool{}
		for _, k := range keys[:n] {
			gone[k.Name] = true // HTTP and GRPC routes of one name: both, so never too many refused
		}
		var kept []candidate
		for _, c := range ad.set.http {
			if c.from == nil || c.from.namespace != ns || !gone[c.from.name] {
				kept = append(kept, c)
			}
		}
		after := countFences(fences(kept, ad.home, ad.holder(nil), ad.l.held))
		used := ad.used(ns, nil) - (len(ad.set.http) - len(kept)) - ad.fenced.owed(ns) + after.owed(ns)
		return used <= MaxTenantRules
	}
	lo, hi := 1, len(keys)
	for lo < hi {
		if mid := (lo + hi) / 2; fits(mid) {
			hi = mid
		} else {
			lo = mid + 1
		}
	}
	return lo
}

// evicted is the refusal of a route of namespace ns at a look's next try.
func evicted(ns string) Reason {
	return Reason{Reason: string(ReasonRuleBudgetExceeded), Message: fmt.Sprintf(
		"its rules do not fit in its namespace's share once the routes attached after it are: a rule without a host name (or of a wildcard) "+
			"of a namespace other than the Gateway's needs a 404 for each host name of another namespace it would take on its listener, and a "+
			"namespace's such rules are copied for each of its own host names where another namespace's wider rule is; these count in its share "+
			"(at most %d rules), and with the host names and rules attached after it the routes of %s are past it: its newest routes with such a "+
			"rule are refused first (a rule with a host name costs none of them)",
		MaxTenantRules, ns)}
}
