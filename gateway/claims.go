package gateway

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"
)

// A shared Gateway's host names and TCP/UDP listeners belong to a
// namespace (docs/gateway-api.md, "Host names and listeners belong to a
// namespace"; ADR 0021): the namespace whose attached route served one
// first claims it, and a route of another namespace is refused it (a
// host name) or parked (a listener) unless the holder consents. A claim
// no route of its namespace serves is kept for a grace period, so a
// re-created route finds it again.

// OwnershipAnnotation is the Gateway's choice: Namespace (the default)
// or None.
const OwnershipAnnotation = "gateway.example.com/hostname-ownership"

// Ownership is how a Gateway's host names and TCP/UDP listeners are held.
type Ownership string

const (
	// OwnershipNamespace: each belongs to the namespace that served it
	// first.
	OwnershipNamespace Ownership = "Namespace"
	// OwnershipNone: the Gateway API's plain precedence, nothing claimed
	// (for a Gateway one team uses).
	OwnershipNone Ownership = "None"
)

// OwnershipOf is gw's ownership; unknown is the annotation's value when
// it is none of the two (taken as Namespace, the safe one).
func OwnershipOf(gw *gatewayv1.Gateway) (o Ownership, unknown string) {
	switch v, ok := gw.Annotations[OwnershipAnnotation]; {
	case !ok || v == string(OwnershipNamespace):
		return OwnershipNamespace, ""
	case v == string(OwnershipNone):
		return OwnershipNone, ""
	default:
		return OwnershipNamespace, v
	}
}

// Claims are what a Gateway's namespaces hold, as kept between looks.
type Claims struct {
	// Hosts are by host name (exact or wildcard).
	Hosts map[string]HostClaim `json:"hosts,omitempty"`
	// Listeners are the TCP and UDP listeners, by name.
	Listeners map[gatewayv1.SectionName]ListenerClaim `json:"listeners,omitempty"`
}

// HostClaim is a host name held by a namespace.
type HostClaim struct {
	Namespace string `json:"namespace"`
	// Since orders claims: no two are made at the same time (an older
	// claim wins over a younger one it overlaps).
	Since time.Time `json:"since"`
	// ReleasedAt is when the last route of Namespace serving it went; the
	// claim ends a grace period after it. Nil while served.
	ReleasedAt *time.Time `json:"releasedAt,omitempty"`
	// Guests are the namespaces serving this very host name with the
	// holder's consent (sorted).
	Guests []string `json:"guests,omitempty"`
}

// ListenerClaim is a TCP or UDP listener held by a namespace's route.
type ListenerClaim struct {
	Namespace string         `json:"namespace"`
	Kind      gatewayv1.Kind `json:"kind"`
	// Route is the route of Namespace that has it (or had it last).
	Route      string     `json:"route"`
	Since      time.Time  `json:"since"`
	ReleasedAt *time.Time `json:"releasedAt,omitempty"`
}

// Consent tells whether namespace owner lets route serve hostname on the
// Gateway: a ReferenceGrant of owner to tenancy.GrantHostnameGroup, kind
// tenancy.GrantHostnameKind, decided by package tenancy.
type Consent func(route RouteKey, owner, hostname string) bool

// Boundary is what the tenant boundary of a Gateway reads beside its
// routes: the claims kept, the time, the grace of a claim no route
// serves, and the holders' consent. Its zero value keeps nothing for any
// time and consents to nothing.
type Boundary struct {
	// ListenerSets are those naming the Gateway: listeners of tenants,
	// admitted by its allowedListeners (listenersets.go).
	ListenerSets []*gatewayv1.ListenerSet
	Claims       Claims
	Now          time.Time
	Grace        time.Duration
	Consent      Consent
}

// Move is a host name or listener going from one namespace to another on
// the Gateway: what its reviewers are warned of.
type Move struct {
	// Hostname or Listener moved (one is set).
	Hostname string
	Listener gatewayv1.SectionName
	From, To string
	// Consented: From's ReferenceGrant lets To serve it; otherwise
	// From's claim ended (its grace passed) and To took it.
	Consented bool
}

func (m Move) String() string {
	what := "host name " + m.Hostname
	if m.Listener != "" {
		what = "listener " + string(m.Listener)
	}
	if m.Consented {
		return fmt.Sprintf("%s of namespace %s is served by namespace %s too, with %s's consent (a ReferenceGrant)", what, m.From, m.To, m.From)
	}
	return fmt.Sprintf("%s moves from namespace %s (no route of it served it for the grace period) to namespace %s", what, m.From, m.To)
}

// overlaps tells whether two host names share a request: equal, or one
// wildcard covering the other.
func overlaps(a, b string) bool { return covers(a, b) || covers(b, a) }

// ledger is the claims as decided during one look.
type ledger struct {
	b     Boundary
	hosts map[string]HostClaim
	// wildcards are the held host names of a wildcard (hold keeps it).
	wildcards []string
	ls        map[gatewayv1.SectionName]ListenerClaim
	// released are the claims whose grace ended at this look: taken by
	// another namespace now, they moved.
	released   map[string]HostClaim
	releasedLs map[gatewayv1.SectionName]ListenerClaim
	// served are the claims their holder's routes serve now; guests the
	// namespaces serving a held host name with consent now.
	served   map[string]bool
	servedLs map[gatewayv1.SectionName]bool
	guests   map[string]map[string]bool
	// idle counts, by namespace, its held host names that no route or
	// listener of it has served yet at this look: those in their grace,
	// and those its routes served at the last look, until they serve them
	// again.
	idle   map[string]int
	latest time.Time
	moves  []Move
}

// newLedger starts a look from the claims kept: those whose grace ended
// are released.
func newLedger(b Boundary) *ledger {
	b.Now = b.Now.Round(0).UTC()
	l := &ledger{b: b, hosts: map[string]HostClaim{}, ls: map[gatewayv1.SectionName]ListenerClaim{},
		released: map[string]HostClaim{}, releasedLs: map[gatewayv1.SectionName]ListenerClaim{},
		served: map[string]bool{}, servedLs: map[gatewayv1.SectionName]bool{}, guests: map[string]map[string]bool{}, idle: map[string]int{}}
	for h, c := range b.Claims.Hosts {
		if c.Since.After(l.latest) {
			l.latest = c.Since
		}
		if l.ended(c.ReleasedAt) {
			l.released[h] = c
			continue
		}
		l.hold(h, c)
		l.idle[c.Namespace]++
	}
	for name, c := range b.Claims.Listeners {
		if l.ended(c.ReleasedAt) {
			l.releasedLs[name] = c
			continue
		}
		l.ls[name] = c
	}
	return l
}

func (l *ledger) ended(releasedAt *time.Time) bool {
	return releasedAt != nil && !l.b.Now.Before(releasedAt.Add(l.b.Grace))
}

// next is the time of a new claim: now, or just after the youngest.
func (l *ledger) next() time.Time {
	t := l.b.Now
	if !t.After(l.latest) {
		t = l.latest.Add(time.Nanosecond)
	}
	l.latest = t
	return t
}

// hostUse is a host name a route would serve, and which holders must
// consent.
type hostUse struct {
	host      string
	consented []string
	// admitted: a ListenerSet's listener took it for its namespace
	// (hostsFor), not a ReferenceGrant: no move to tell.
	admitted bool
}

// hostsFor decides the host names route (of namespace ns) would serve:
// each overlapping claim of another namespace (but one younger than the
// route's namespace's own claim on that very name) needs its holder's
// consent. A ListenerSet's namespace consents, by its listeners'
// allowedRoutes, to the routes attached through them serving their host
// names (admitted: the ListenerSet's namespace, and those listeners'
// host names). refused is the first host name without it.
func (l *ledger) hostsFor(route RouteKey, hosts []string, admitted *admittance) (uses []hostUse, refused string) {
	ns := route.Namespace
	for _, h := range hosts {
		own, ok := l.hosts[h]
		ownsIt := ok && own.Namespace == ns
		u := hostUse{host: h}
		for _, held := range l.overlapping(h) {
			c := l.hosts[held]
			if c.Namespace == ns || !overlaps(held, h) || ownsIt && own.Since.Before(c.Since) {
				continue
			}
			if admitted.admits(c.Namespace, h) {
				u.admitted = true
				continue
			}
			if l.b.Consent == nil || !l.b.Consent(route, c.Namespace, h) {
				return nil, h
			}
			if !slices.Contains(u.consented, c.Namespace) {
				u.consented = append(u.consented, c.Namespace)
			}
		}
		uses = append(uses, u)
	}
	return uses, ""
}

// admittance is a ListenerSet namespace's consent to the routes its
// listeners take: the host names those listeners serve.
type admittance struct {
	namespace string
	hosts     []string
}

func (a *admittance) admits(holder, h string) bool {
	return a != nil && holder == a.namespace && slices.ContainsFunc(a.hosts, func(lh string) bool { return covers(lh, h) })
}

// hold records claim c of host name h.
func (l *ledger) hold(h string, c HostClaim) {
	if _, ok := l.hosts[h]; !ok && strings.HasPrefix(h, "*") {
		l.wildcards = append(l.wildcards, h)
	}
	l.hosts[h] = c
}

// overlapping are the held host names that overlap h, sorted. Admission
// asks for every host name of every route: a name without a wildcard is
// overlapped only by itself and the held wildcards, so only those are
// looked at.
func (l *ledger) overlapping(h string) []string {
	var out []string
	if strings.HasPrefix(h, "*") {
		for held := range l.hosts {
			if overlaps(held, h) {
				out = append(out, held)
			}
		}
	} else {
		if _, ok := l.hosts[h]; ok {
			out = append(out, h)
		}
		for _, w := range l.wildcards {
			if covers(w, h) {
				out = append(out, w)
			}
		}
	}
	slices.Sort(out)
	return out
}

// serve records that a route of namespace ns serves uses: a host name
// nobody holds is claimed, one another namespace holds is served as its
// guest.
func (l *ledger) serve(ns string, uses []hostUse) {
	for _, u := range uses {
		c, held := l.hosts[u.host]
		switch {
		case held && c.Namespace == ns:
			if l.idling(ns, u.host) {
				l.idle[ns]--
			}
			l.served[u.host] = true
		case held:
			if l.guests[u.host] == nil {
				l.guests[u.host] = map[string]bool{}
			}
			if !l.guests[u.host][ns] && !slices.Contains(c.Guests, ns) && !u.admitted {
				l.moves = appendMove(l.moves, Move{Hostname: u.host, From: c.Namespace, To: ns, Consented: true})
			}
			l.guests[u.host][ns] = true
		default:
			l.hold(u.host, HostClaim{Namespace: ns, Since: l.next()})
			l.served[u.host] = true
			for _, from := range u.consented {
				l.moves = appendMove(l.moves, Move{Hostname: u.host, From: from, To: ns, Consented: true})
			}
		}
		for _, was := range slices.Sorted(maps.Keys(l.released)) {
			if c := l.released[was]; c.Namespace != ns && overlaps(was, u.host) {
				l.moves = appendMove(l.moves, Move{Hostname: u.host, From: c.Namespace, To: ns})
			}
		}
	}
}

// listenerHolder is who holds TCP/UDP listener name now ("" for nobody).
func (l *ledger) listenerHolder(name gatewayv1.SectionName) (ListenerClaim, bool) {
	c, ok := l.ls[name]
	return c, ok
}

// take records that route r takes listener name.
func (l *ledger) take(name gatewayv1.SectionName, r RouteKey) {
	c, ok := l.ls[name]
	if !ok || c.Namespace != r.Namespace {
		c = ListenerClaim{Namespace: r.Namespace, Since: l.next()}
		if was, ok := l.releasedLs[name]; ok && was.Namespace != r.Namespace {
			l.moves = appendMove(l.moves, Move{Listener: name, From: was.Namespace, To: r.Namespace})
		}
	}
	c.Kind, c.Route, c.ReleasedAt = r.Kind, r.Name, nil
	l.ls[name] = c
	l.servedLs[name] = true
}

// end closes the look: a claim its holder did not serve starts (or
// keeps counting) its grace. It returns the claims to keep, and when the
// next grace ends (zero for none).
func (l *ledger) end() (Claims, time.Time) {
	out := Claims{}
	var recheck time.Time
	later := func(at *time.Time) *time.Time {
		if at == nil {
			now := l.b.Now
			at = &now
		}
		if end := at.Add(l.b.Grace); recheck.IsZero() || end.Before(recheck) {
			recheck = end
		}
		return at
	}
	for h, c := range l.hosts {
		if l.served[h] {
			c.ReleasedAt = nil
		} else {
			c.ReleasedAt = later(c.ReleasedAt)
		}
		c.Guests = slices.Sorted(maps.Keys(l.guests[h]))
		if out.Hosts == nil {
			out.Hosts = map[string]HostClaim{}
		}
		out.Hosts[h] = c
	}
	for name, c := range l.ls {
		if !l.servedLs[name] {
			c.ReleasedAt = later(c.ReleasedAt)
		}
		if out.Listeners == nil {
			out.Listeners = map[gatewayv1.SectionName]ListenerClaim{}
		}
		out.Listeners[name] = c
	}
	return out, recheck
}

// idling tells whether host name h is one of namespace ns's held ones
// that no route or listener of it has served yet at this look.
func (l *ledger) idling(ns, h string) bool {
	c, ok := l.hosts[h]
	return ok && c.Namespace == ns && !l.served[h]
}

// idleAmong is how many of hosts are namespace ns's idling ones.
func (l *ledger) idleAmong(ns string, hosts []string) int {
	n := 0
	for _, h := range hosts {
		if l.idling(ns, h) {
			n++
		}
	}
	return n
}

// heldBefore is the namespace that held host name h when the look
// began ("" for none).
func (l *ledger) heldBefore(h string) string {
	if c, ok := l.b.Claims.Hosts[h]; ok && !l.ended(c.ReleasedAt) {
		return c.Namespace
	}
	return ""
}

// holderOf is the namespace holding host name h now ("" for none).
func (l *ledger) holderOf(h string) string { return l.hosts[h].Namespace }

// held are the host names held now, sorted.
func (l *ledger) held() []string { return slices.Sorted(maps.Keys(l.hosts)) }

func appendMove(ms []Move, m Move) []Move {
	if slices.Contains(ms, m) {
		return ms
	}
	return append(ms, m)
}
