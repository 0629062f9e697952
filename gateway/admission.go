package gateway

import (
	"cmp"
	"fmt"
	"maps"
	"slices"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/example/cloud-provider-example/exampleapi"
	"github.com/example/cloud-provider-example/lbmodel"
	"github.com/example/cloud-provider-example/tenancy"
)

// unit is one parentRef of a route naming the Gateway: admitted whole,
// or refused whole (never half a route), oldest route first.
type unit struct {
	key     RouteKey
	created metav1.Time
	// parent is its entry's index in Translation.Parents[key].
	parent int
	a      attachment
	// refused is why it is refused before admission ("" for not).
	refused Reason
	// http and sni are its HTTP and TLS passthrough rules; streams the
	// TCP and UDP listeners it attaches to, each forwarding to stream.
	http, sni []candidate
	streams   []*listener
	stream    []Backend
	// hosts are the host names it serves, for claims ("" is none).
	hosts []string
	// at is its place in admission order; rules what its admission added
	// to its namespace's rules (evictions).
	at, rules int
}

// newUnit adds to t the entry of route key's parentRef ref (Accepted,
// resolved) and returns its unit.
func newUnit(key RouteKey, meta metav1.ObjectMeta, ref gatewayv1.ParentReference, resolved Reason, t *Translation) *unit {
	t.Parents[key] = append(t.Parents[key], Parent{Ref: ref, Accepted: Reason{Reason: string(gatewayv1.RouteReasonAccepted)}, ResolvedRefs: resolved})
	return &unit{key: key, created: meta.CreationTimestamp, parent: len(t.Parents[key]) - 1}
}

func (u *unit) refuse(reason, message string) {
	if u.refused.Reason == "" {
		u.refused = Reason{Reason: reason, Message: message}
	}
}

// serves records that u serves host name h.
func (u *unit) serves(h string) {
	if h != "" && !slices.Contains(u.hosts, h) {
		u.hosts = append(u.hosts, h)
	}
}

// admittedBy is the consent of the ListenerSet whose listeners u
// attached through (nil: it attached to the Gateway's own).
func (u *unit) admittedBy() *admittance {
	if len(u.a.listeners) == 0 || u.a.listeners[0].set == nil {
		return nil
	}
	a := &admittance{namespace: u.a.listeners[0].set.Namespace}
	for _, l := range u.a.listeners {
		if h := l.hostname(); h != "" {
			a.hosts = append(a.hosts, h)
		}
	}
	return a
}

// oldestFirst orders units as routes are admitted: the oldest route,
// then the first by namespace/name and kind, then its parentRefs in
// order.
func oldestFirst(a, b *unit) int {
	return cmp.Or(a.created.Compare(b.created.Time), cmp.Compare(a.key.Namespace+"/"+a.key.Name, b.key.Namespace+"/"+b.key.Name),
		cmp.Compare(a.key.Kind, b.key.Kind), cmp.Compare(a.parent, b.parent))
}

// streamRule is the rule of a TCP or UDP listener l forwarding to route
// key's backends.
func streamRule(key RouteKey, l *listener, backends []Backend) lbmodel.Rule {
	port := int(l.spec.Port)
	r := lbmodel.Rule{Name: l4RuleName(key.Namespace, key.Name, key.Kind, port, ""), ListenerPort: port, Priority: 1, Backends: backends}
	if l.spec.Protocol == gatewayv1.UDPProtocolType {
		r.ListenerProtocol = "udp"
	}
	return r
}

// ruleSet is the rules of the admitted units. A set with builds shares
// the slices of the one it is built from (appending past their length),
// so a look at a unit costs its rules, not all of them: only the
// admitted set is built from again.
type ruleSet struct {
	http, sni []candidate
	streams   []lbmodel.Rule
	// named indexes http by rule name: the admitted rules' (keep), then
	// added those with adds; wide counts http's rules that may take
	// another host name's requests (mayWiden).
	named, added map[string]int
	wide         int
	// movedWide: with moved an admitted rule that may widen to a more
	// specific listener (a route's second parentRef), changing the fences
	// of names other than the route's own.
	movedWide bool
}

// with is s and u's rules, u taking the TCP/UDP listeners takes.
func (s ruleSet) with(u *unit, takes []*listener) ruleSet {
	out := s
	out.added, out.movedWide = map[string]int{}, false
	shared := true
	for _, c := range u.http {
		k, ok := s.named[c.rule.Name]
		if !ok {
			k, ok = out.added[c.rule.Name]
		}
		switch {
		case !ok:
			out.added[c.rule.Name] = len(out.http)
			out.http = append(out.http, c)
			if mayWiden(c.rule.Hostname) {
				out.wide++
			}
		case compareHosts(c.listenerHost, out.http[k].listenerHost) < 0:
			if shared && k < len(s.http) { // s's rule: changed in a copy, s may stay the admitted set
				out.http, shared = slices.Clone(out.http), false
			}
			out.http[k].listenerHost = c.listenerHost
			out.movedWide = out.movedWide || mayWiden(c.rule.Hostname)
		}
	}
	for _, c := range u.sni {
		if !slices.ContainsFunc(out.sni, func(o candidate) bool { return o.rule.Name == c.rule.Name }) {
			out.sni = append(out.sni, c)
		}
	}
	for _, l := range takes {
		out.streams = append(out.streams, streamRule(u.key, l, u.stream))
	}
	return out
}

// keep makes s the admitted set, indexing the rules with added.
func (s *ruleSet) keep() {
	if s.named == nil {
		s.named = map[string]int{}
	}
	for name, k := range s.added {
		s.named[name] = k
	}
	s.added = nil
}

// count is how many cloud rules s makes with the listeners' catch-alls
// iso, but for the fences of its host names (fences.go).
func (s ruleSet) count(iso []candidate) int {
	return len(s.http) + len(iso) + len(s.sni) + len(s.streams)
}

// admission admits units oldest first, under the Gateway's ownership and
// the load balancer's rule budget.
type admission struct {
	t     *Translation
	own   Ownership
	grace string
	l     *ledger
	iso   []candidate
	set   ruleSet
	// taken are the TCP/UDP listeners given at this look, to which route.
	taken map[gatewayv1.SectionName]RouteKey
	// home is the Gateway's namespace; shares the rules admitted of each
	// other namespace (MaxTenantRules): its ListenerSets' listeners'
	// catch-alls and names (setlimits.go), then its routes' rules and
	// the copies made of them (fenceCounts); used adds its idle names.
	home   string
	shares map[string]int
	// fenced is how many fences (with their copies) the admitted rules
	// need.
	fenced fenceCounts
	// admitted are the units admitted, oldest first, pastShare those
	// refused for their namespace's share, looked how many were looked
	// at, and setServed the host names ListenerSets' listeners serve
	// (evictions); strict holds against a route what counts past other
	// namespaces' shares too.
	admitted, pastShare []*unit
	looked              int
	setServed           map[string]bool
	strict              bool
}

// fenceCounts are how many fences rules need: all, and of them what
// counts in each namespace's share (fences.go): the copies of its rules
// (they are its rules, made again for its names) and the 404s its wider
// rules make needed for other namespaces' names (its rules would take
// their requests), or the Gateway's rules for its names on listeners
// beyond the first. A namespace's names are bounded by its share (one
// each while nothing serves them, a rule at least once served).
type fenceCounts struct {
	all              int
	copies, notFound map[string]int
}

// countFences counts fs.
func countFences(fs []candidate) fenceCounts {
	n := fenceCounts{all: len(fs), copies: map[string]int{}, notFound: map[string]int{}}
	for _, c := range fs {
		if c.from != nil {
			n.copies[c.from.namespace]++
		}
		for _, ns := range c.chargedTo {
			n.notFound[ns]++
		}
	}
	return n
}

// owed is what n counts in namespace ns's share.
func (n fenceCounts) owed(ns string) int { return n.copies[ns] + n.notFound[ns] }

// minus is what n counts in each namespace's share beyond was (less:
// negative); nil when neither counts anything (most looks).
func (n fenceCounts) minus(was fenceCounts) map[string]int {
	if len(n.copies)+len(n.notFound)+len(was.copies)+len(was.notFound) == 0 {
		return nil
	}
	d := map[string]int{}
	addCounts(d, n.copies, 1)
	addCounts(d, n.notFound, 1)
	addCounts(d, was.copies, -1)
	addCounts(d, was.notFound, -1)
	return d
}

// plus is n changed by what after counts beyond before (of some host
// names: fenceCount).
func (n fenceCounts) plus(after, before fenceCounts) fenceCounts {
	out := fenceCounts{all: n.all + after.all - before.all, copies: maps.Clone(n.copies), notFound: maps.Clone(n.notFound)}
	if out.copies == nil {
		out.copies = map[string]int{}
	}
	if out.notFound == nil {
		out.notFound = map[string]int{}
	}
	addCounts(out.copies, after.copies, 1)
	addCounts(out.copies, before.copies, -1)
	addCounts(out.notFound, after.notFound, 1)
	addCounts(out.notFound, before.notFound, -1)
	return out
}

// addCounts adds sign times src to dst, dropping what reaches zero.
func addCounts(dst, src map[string]int, sign int) {
	for ns, k := range src {
		if dst[ns] += sign * k; dst[ns] == 0 {
			delete(dst, ns)
		}
	}
}

// MaxTenantRules is the most rules the routes of one namespace other
// than the Gateway's may hold of its load balancer, with the catch-alls
// its ListenerSets' listeners cause and their names (counted first), the
// copies of its rules its names' fences need, the 404s its wider rules
// make needed for other namespaces' names (and the Gateway's rules for
// its names, past the first listener), and its idle names (used).
// Every apply of a Gateway evaluates all its rules (docs/scale.md), so one team's routes
// would otherwise slow every other team's changes by filling the
// load balancer's whole budget (exampleapi.MaxRules); the platform's own
// namespace has the whole budget.
const MaxTenantRules = 200

// admit decides u: refused (for what it was refused already, a host name
// another namespace holds, or the rule budget), or admitted, its rules
// added and its claims made. Admitted, a route a TCP or UDP listener is
// not given stays attached, parked.
func (ad *admission) admit(u *unit) {
	u.at = ad.looked
	ad.looked++
	p := &ad.t.Parents[u.key][u.parent]
	if u.refused.Reason != "" {
		p.Accepted = u.refused
		return
	}
	var uses []hostUse
	if ad.own == OwnershipNamespace {
		var refused string
		if uses, refused = ad.l.hostsFor(u.key, u.hosts, u.admittedBy()); refused != "" {
			p.Accepted = ad.hostnameInUse(u.key, refused)
			return
		}
	}
	var takes []*listener
	parked := ""
	for _, l := range u.streams {
		if why := ad.holds(u.key, l); why != "" {
			parked = why
			continue
		}
		takes = append(takes, l)
	}
	next := ad.set.with(u, takes)
	// The rules u adds: none twice (a route through two parentRefs to one
	// listener makes its rules once).
	ns, adds := u.key.Namespace, next.count(nil)-ad.set.count(nil)
	if len(u.http)+len(u.sni)+len(u.streams) == 0 {
		adds += len(u.hosts) // names served by no rule (a GRPCRoute may have none) count one each, as idle ones
	}
	used, rules := ad.used(ns, u.hosts), adds
	// Before counting fences, refused alike without their cost, unless
	// fences count in ns's share (u may make them unneeded). A route that
	// adds nothing (a parked one) is never refused for the share: ns may
	// be past it by what newer routes made count there (evictions.go).
	if ns != ad.home && adds > 0 && used+adds > MaxTenantRules && ad.fenced.owed(ns) == 0 {
		ad.refuseShare(p, u, used, adds)
		return
	}
	fenced := ad.fenceCount(u, next)
	// What u's admission makes count in its namespace's share counts with
	// its rules: the copies of its rules for its names beneath another
	// namespace's wider rule, the 404s its wider rules make needed for
	// other namespaces' names. What it makes count in another namespace's
	// share counts there (below), never in u's.
	adds += fenced.owed(ns) - ad.fenced.owed(ns)
	if ns != ad.home && adds > 0 && used+adds > MaxTenantRules {
		ad.refuseShare(p, u, used, adds)
		return
	}
	// Past the budget, what would count past other namespaces' shares is
	// not held against u (unless strict): those namespaces' costly routes
	// are refused at the end of the look (evictions), and the look made
	// again.
	if n := next.count(ad.iso) + fenced.all; n > exampleapi.MaxRules && n-ad.pastShares(ns, fenced) > exampleapi.MaxRules {
		used := ad.set.count(ad.iso) + ad.fenced.all
		p.Accepted = Reason{Reason: string(ReasonRuleBudgetExceeded), Message: fmt.Sprintf(
			"its rules do not fit: the Example load balancer holds at most %d rules, and the listeners and the routes attached before this one leave %d "+
				"of them, for the %d it would add (routes are built oldest first, each whole or not at all)",
			exampleapi.MaxRules, max(exampleapi.MaxRules-used, 0), n-used)}
		return
	}
	// What u's rules make count in another namespace's share (copies of
	// its rules for its names beneath u's wider rule, 404s its wider rule
	// makes needed for u's names), or make unneeded, count there.
	for other, d := range fenced.minus(ad.fenced) {
		if other != ns && other != ad.home {
			ad.shares[other] += d
		}
	}
	ad.set, ad.fenced = next, fenced
	ad.set.keep()
	if testHookFenced != nil {
		testHookFenced(fenced, countFences(fences(next.http, ad.home, ad.holder(u), func() []string { return ad.heldWith(u) })))
	}
	if ns != ad.home {
		ad.shares[ns] += adds
	}
	u.rules = rules
	ad.admitted = append(ad.admitted, u)
	if ad.own == OwnershipNamespace {
		ad.l.serve(u.key.Namespace, uses)
		for _, l := range takes {
			if l.set == nil { // a ListenerSet's is its namespace's already (holds)
				ad.l.take(l.id, u.key)
			}
		}
	}
	for _, l := range takes {
		ad.taken[l.id] = u.key
	}
	for _, l := range u.a.listeners {
		l.attached++
	}
	if parked != "" {
		p.Accepted.Message = parked
	}
}

// holder is who holds each host name, with u's claims made (nil: none);
// nobody under ownership None.
func (ad *admission) holder(u *unit) func(string) string {
	return func(h string) string {
		if ad.own != OwnershipNamespace {
			return ""
		}
		if ns := ad.l.holderOf(h); ns != "" || u == nil || !slices.Contains(u.hosts, h) {
			return ns
		}
		return u.key.Namespace
	}
}

// used is how much of its share namespace ns holds before a route or
// listener serving hosts is admitted: its rules admitted, and one for
// each of its held names nothing of it serves yet at this look (but
// those among hosts). A name nothing serves still holds its fences:
// uncounted, a namespace could hold names without end, cycling routes
// through them, and their fences would fill the budget.
func (ad *admission) used(ns string, hosts []string) int {
	return ad.shares[ns] + ad.l.idle[ns] - ad.l.idleAmong(ns, hosts)
}

// refuseShare refuses p, u's: its rules, adds, do not fit in its
// namespace's share, of which used is held.
func (ad *admission) refuseShare(p *Parent, u *unit, used, adds int) {
	ns := u.key.Namespace
	ad.pastShare = append(ad.pastShare, u)
	p.Accepted = Reason{Reason: string(ReasonRuleBudgetExceeded), Message: fmt.Sprintf(
		"its rules do not fit in its namespace's share: the routes of a namespace other than the Gateway's (with its ListenerSets' listeners' catch-alls "+
			"and host names, the copies of its rules without a host name or of a wildcard made for its host names on a listener where another namespace's "+
			"such rule would take them, a 404 for each host name of another namespace its own such rules would take on their listener, "+
			"and one for each host name it holds that nothing serves) hold at most %d of its rules, "+
			"and those of %s attached before this one hold %d, for the %d it would add",
		MaxTenantRules, ns, used, adds)}
}

// testHookFenced, set by tests, is told the fences counted at each
// route admitted and those the admitted rules need.
var testHookFenced func(counted, need fenceCounts)

// fenceCount is how many fences (with their copies) next, the admitted
// rules and u's, needs: those counted so far, and the change at the host
// names u brings (fencesOf) when it brings no rule that may widen and
// moves none to another listener (rare), so that a look at a route costs
// about its rules.
func (ad *admission) fenceCount(u *unit, next ruleSet) fenceCounts {
	if next.wide == 0 {
		return fenceCounts{}
	}
	heldNext := func() []string { return ad.heldWith(u) }
	if next.wide > ad.set.wide || next.movedWide {
		return countFences(fences(next.http, ad.home, ad.holder(u), heldNext))
	}
	only := make(map[string]bool, len(u.hosts))
	for _, h := range u.hosts {
		only[h] = true
	}
	for _, c := range u.http {
		only[c.rule.Hostname] = true
	}
	delete(only, "")
	if len(only) == 0 {
		return ad.fenced
	}
	before := countFences(fencesOf(ad.set.http, ad.home, ad.holder(nil), ad.l.held, only))
	return ad.fenced.plus(countFences(fencesOf(next.http, ad.home, ad.holder(u), heldNext, only)), before)
}

// heldWith is the host names held once u is admitted: those held, and
// u's (which it claims, or serves as a guest); none under ownership
// None.
func (ad *admission) heldWith(u *unit) []string {
	held := ad.l.held()
	if ad.own != OwnershipNamespace {
		return held
	}
	n := len(held) // u.hosts are unique: search only the sorted ones
	for _, h := range u.hosts {
		if _, ok := slices.BinarySearch(held[:n], h); !ok {
			held = append(held, h)
		}
	}
	return held
}

// holds is why TCP/UDP listener l forwards to another route than key
// ("" when key may take it): a route took it at this look (the oldest),
// or another namespace holds it. It names the other route only when it
// is of key's namespace.
func (ad *admission) holds(key RouteKey, l *listener) string {
	if got, ok := ad.taken[l.id]; ok && got.Namespace == key.Namespace {
		return fmt.Sprintf("attached; listener %s forwards every connection to %s %s/%s, attached before (one route per %s listener)",
			l.spec.Name, got.Kind, got.Namespace, got.Name, l.spec.Protocol)
	} else if ok {
		return fmt.Sprintf("attached; listener %s forwards every connection to a route of another namespace, attached before (one route per %s listener)",
			l.spec.Name, l.spec.Protocol)
	}
	if ad.own != OwnershipNamespace || l.set != nil {
		// A ListenerSet's listener is its namespace's, and the routes its
		// allowedRoutes admits take it with that namespace's consent: no
		// route's namespace claims it.
		return ""
	}
	if c, ok := ad.l.listenerHolder(l.id); ok && c.Namespace != key.Namespace {
		return fmt.Sprintf("attached; listener %s is held by another namespace, whose route had it first "+
			"(one route per %s listener; it stays that namespace's for %s after its last route goes)", l.spec.Name, l.spec.Protocol, ad.grace)
	}
	return ""
}

// hostnameInUse is the refusal of route key for host name h, which
// another namespace holds: it says how consent is given, never whose the
// name is.
func (ad *admission) hostnameInUse(key RouteKey, h string) Reason {
	return Reason{Reason: string(ReasonHostnameInUse), Message: fmt.Sprintf(
		"host name %s is served on this Gateway by another namespace (a host name belongs to the namespace whose route served it first, "+
			"and stays its for %s after its last route goes); a route of namespace %s serves it only with that namespace's consent: "+
			"a ReferenceGrant there from %ss of namespace %s to group %s, kind %s, name %s (or no name: all)",
		h, ad.grace, key.Namespace, key.Kind, key.Namespace, tenancy.GrantHostnameGroup, tenancy.GrantHostnameKind, h)}
}

// rules are the admitted units' cloud rules, ordered: HTTP ones (with
// the listeners' catch-alls and the claimed host names' fences) by their
// order key, which the cloud compares as the Gateway API's precedence
// (docs/adr/0028), so a new route's rules take their place without
// renumbering another's; TLS passthrough ones by priority, the most
// specific SNI name first, then the oldest route; by port.
func (ad *admission) rules() []lbmodel.Rule {
	var out []lbmodel.Rule
	cands := append(slices.Clone(ad.set.http), ad.iso...)
	cands = append(cands, fences(ad.set.http, ad.home, ad.holder(nil), ad.l.held)...)
	sortByPrecedence(cands)
	for _, c := range cands {
		out = append(out, c.rule)
	}
	out = append(out, ad.set.streams...)
	// The routes are oldest first already (a stable sort keeps that
	// order among equals).
	sni := slices.Clone(ad.set.sni)
	slices.SortStableFunc(sni, func(a, b candidate) int {
		return cmp.Or(cmp.Compare(a.rule.ListenerPort, b.rule.ListenerPort), compareHosts(a.rule.Hostname, b.rule.Hostname))
	})
	next := map[int]int{}
	for _, c := range sni {
		next[c.rule.ListenerPort]++
		c.rule.Priority = next[c.rule.ListenerPort]
		out = append(out, c.rule)
	}
	slices.SortStableFunc(out, func(a, b lbmodel.Rule) int {
		return cmp.Or(cmp.Compare(a.ListenerPort, b.ListenerPort), cmp.Compare(a.ListenerProtocol, b.ListenerProtocol))
	})
	return out
}
