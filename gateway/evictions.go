package gateway

import (
	"cmp"
	"fmt"
	"slices"
)

// A route's admission may make rules count in another namespace's share
// (docs/adr/0033): the 404s an older rule without a host name (or of a
// wildcard) needs for the names the route serves, the copies of an
// older team's rules for its names beneath the route's wider rule, the
// 404s the platform's newer catch-all on another port needs for its
// names. They are not checked against that share then: a namespace's
// rule that would take others' requests yields to their names, and a
// team's names beneath its own wider rules yield to another's wider
// rule, whatever their age (an edit keeps a route's age). A namespace
// left past its share at the end of a look has its newest routes whose
// refusal lowers its share refused, and the look is made again without
// them (Translate).

// pastShares is how far namespaces other than ns and the Gateway's
// would be past their shares with fenced counted: what the budget does
// not hold against ns's route, since the look is made again without
// their routes (none when strict).
func (ad *admission) pastShares(ns string, fenced fenceCounts) int {
	if ad.strict {
		return 0
	}
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

// eviction is what refusing routes of one namespace past its share
// would do: keys, its newest routes whose refusal lowers what its fences
// owe (else its share), as few as bring it back (all when none do), and
// its routes refused for its share after the oldest of them (else each
// would take the room at the next try, and be refused at the end of it:
// a try each); at, the place of the newest in admission order; hosts,
// the names they serve; charged, the names whose 404s count in its
// share; copies, whether copies of its rules do (another namespace's
// wider rule may be why).
type eviction struct {
	ns      string
	keys    []RouteKey
	at      int
	hosts   map[string]bool
	charged map[string]bool
	copies  bool
}

// evictions are the routes to refuse at the look's next try, and
// whether a namespace is past its share with none to refuse (stuck).
// Namespaces whose shares hold no copies of their rules go first (the
// wider rule of one may be why another's rules are copied), as many at
// one try as are independent: neither's refusal changes the other's
// count (no name either's routes serve is one whose 404 the other
// pays); else the namespace whose eviction has the newest route, alone.
// The next try checks again: what a recount cannot see (routes of
// others admitted once these are refused) only adds tries.
func (ad *admission) evictions() (map[RouteKey]Reason, bool) {
	var fs []candidate
	var plans []eviction
	counted, stuck := false, false
	for _, ns := range ad.tenants(nil) {
		if ad.used(ns, nil) <= MaxTenantRules {
			continue
		}
		if !counted {
			fs, counted = fences(ad.set.http, ad.home, ad.holder(nil), ad.l.held), true
		}
		if e, ok := ad.evictionOf(ns, fs); ok {
			plans = append(plans, e)
		} else {
			stuck = true
		}
	}
	if len(plans) == 0 {
		return nil, stuck
	}
	slices.SortFunc(plans, func(a, b eviction) int {
		return cmp.Or(cmp.Compare(boolInt(a.copies), boolInt(b.copies)), cmp.Compare(b.at, a.at))
	})
	taken := plans[:1]
	for _, e := range plans[1:] {
		if !e.copies && !slices.ContainsFunc(taken, func(t eviction) bool { return t.copies || t.touches(e) || e.touches(t) }) {
			taken = append(taken, e)
		}
	}
	out := map[RouteKey]Reason{}
	for _, e := range taken {
		for _, k := range e.keys {
			out[k] = evicted(e.ns)
		}
	}
	return out, stuck
}

// touches tells whether refusing e's routes may change o's count: a
// name they serve is one whose 404 counts in o's share.
func (e eviction) touches(o eviction) bool {
	for h := range e.hosts {
		if o.charged[h] {
			return true
		}
	}
	return false
}

// evictionOf is the eviction of namespace ns (fs: the fences now);
// false when no route of it lowers its share.
func (ad *admission) evictionOf(ns string, fs []candidate) (eviction, bool) {
	e := eviction{ns: ns, at: -1, hosts: map[string]bool{}, charged: map[string]bool{}, copies: ad.fenced.copies[ns] > 0}
	only := map[string]bool{} // the names whose fences count in ns's share
	for _, h := range ad.l.held() {
		if ad.l.holderOf(h) == ns {
			only[h] = true
		}
	}
	for _, c := range fs {
		if slices.Contains(c.chargedTo, ns) {
			only[c.rule.Hostname], e.charged[c.rule.Hostname] = true, true
		}
	}
	// The routes whose refusal lowers what counts in ns's share beyond
	// its rules (their copies and 404s: what grew after their admission,
	// so a rule that would take others' requests goes, not a route of
	// names beside it), else any whose refusal lowers the share.
	used, owed := ad.used(ns, nil), ad.fenced.owed(ns)
	var keys, lower []RouteKey
	for _, u := range slices.Backward(ad.admitted) {
		if u.key.Namespace != ns || slices.Contains(keys, u.key) || slices.Contains(lower, u.key) {
			continue
		}
		switch after, afterOwed := ad.usedWithout(ns, []RouteKey{u.key}, only); {
		case afterOwed < owed:
			keys = append(keys, u.key)
		case after < used:
			lower = append(lower, u.key)
		}
	}
	if len(keys) == 0 {
		keys = lower
	}
	if len(keys) == 0 {
		return e, false
	}
	// The fewest of them, newest first: refusing more leaves ns less.
	lo, hi := 1, len(keys)
	for lo < hi {
		if mid := (lo + hi) / 2; ad.fitsWithout(ns, keys[:mid], only) {
			hi = mid
		} else {
			lo = mid + 1
		}
	}
	e.keys = keys[:lo]
	oldest := ad.looked
	for _, u := range ad.admitted {
		if slices.Contains(e.keys, u.key) {
			for _, h := range u.hosts {
				e.hosts[h] = true
			}
			e.at, oldest = max(e.at, u.at), min(oldest, u.at)
		}
	}
	for _, u := range ad.pastShare {
		if u.key.Namespace == ns && u.at > oldest && !slices.Contains(e.keys, u.key) {
			e.keys = append(e.keys, u.key)
		}
	}
	return e, true
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

// fitsWithout tells whether namespace ns is within its share with
// routes gone refused.
func (ad *admission) fitsWithout(ns string, gone []RouteKey, only map[string]bool) bool {
	used, _ := ad.usedWithout(ns, gone, only)
	return used <= MaxTenantRules
}

// usedWithout is what namespace ns's share would hold with routes gone
// refused, and of it what its fences owe: less their rules and the
// copies and 404s they make (a recount of the fences of the names only),
// plus one for each name held before this look that only they served
// (idle again; a ListenerSet's listener keeps serving its names); a name
// only they claimed at this look is not held without them.
func (ad *admission) usedWithout(ns string, gone []RouteKey, only map[string]bool) (used, owed int) {
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
	rules := 0
	for _, u := range ad.admitted {
		if slices.Contains(gone, u.key) {
			rules += u.rules
		}
	}
	idle, dropped := 0, map[string]bool{}
	for h := range goneHosts {
		switch {
		case keptHosts[h] || ad.setServed[h] || ad.l.holderOf(h) != ns:
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
	return ad.used(ns, nil) - rules + idle - ad.fenced.owed(ns) + after.owed(ns), after.owed(ns)
}

// evicted is the refusal of a route of namespace ns at a look's next try.
func evicted(ns string) Reason {
	return Reason{Reason: string(ReasonRuleBudgetExceeded), Message: fmt.Sprintf(
		"its rules do not fit in its namespace's share once the routes attached after it are: a rule without a host name (or of a wildcard) "+
			"of a namespace other than the Gateway's needs a 404 for each host name of another namespace it would take on its listener, a "+
			"namespace's such rules are copied for each of its own host names where another namespace's wider rule is, and a host name fenced "+
			"by the Gateway's own rules on several ports pays for each 404 but the first; these count in its share (at most %d rules), and with "+
			"the routes attached after it the routes of %s are past it: its newest routes whose refusal brings it back are refused",
		MaxTenantRules, ns)}
}
