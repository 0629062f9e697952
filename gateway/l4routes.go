package gateway

import (
	"fmt"
	"maps"
	"slices"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/example/cloud-provider-example/lbmodel"
	"github.com/example/cloud-provider-example/objectref"
)

// The route kinds this front-end serves.
const (
	KindHTTPRoute gatewayv1.Kind = "HTTPRoute"
	KindTLSRoute  gatewayv1.Kind = "TLSRoute"
	KindTCPRoute  gatewayv1.Kind = "TCPRoute"
	KindUDPRoute  gatewayv1.Kind = "UDPRoute"
)

// L4Route is a TLSRoute, TCPRoute or UDPRoute as the translation reads
// it: each has one rule of weighted backends (the CRDs allow one), and a
// TLSRoute's host names are SNI names.
type L4Route struct {
	Kind gatewayv1.Kind
	metav1.ObjectMeta
	ParentRefs  []gatewayv1.ParentReference
	Hostnames   []gatewayv1.Hostname
	BackendRefs []gatewayv1.BackendRef
	Status      gatewayv1.RouteStatus
}

// Ref is the route's identity, for the references it makes (tenancy).
func (r L4Route) Ref() objectref.Ref {
	return objectref.Ref{Kind: string(r.Kind), Namespace: r.Namespace, Name: r.Name}
}

// Key is the route's key in Translation.Parents.
func (r L4Route) Key() RouteKey {
	return RouteKey{Kind: r.Kind, NamespacedName: types.NamespacedName{Namespace: r.Namespace, Name: r.Name}}
}

// TLSRoute reads r.
func TLSRoute(r *gatewayv1.TLSRoute) L4Route {
	out := L4Route{Kind: KindTLSRoute, ObjectMeta: r.ObjectMeta, ParentRefs: r.Spec.ParentRefs, Status: r.Status.RouteStatus, Hostnames: r.Spec.Hostnames}
	if len(r.Spec.Rules) > 0 {
		out.BackendRefs = r.Spec.Rules[0].BackendRefs
	}
	return out
}

// TCPRoute reads r.
func TCPRoute(r *gatewayv1.TCPRoute) L4Route {
	out := L4Route{Kind: KindTCPRoute, ObjectMeta: r.ObjectMeta, ParentRefs: r.Spec.ParentRefs, Status: r.Status.RouteStatus}
	if len(r.Spec.Rules) > 0 {
		out.BackendRefs = r.Spec.Rules[0].BackendRefs
	}
	return out
}

// UDPRoute reads r.
func UDPRoute(r *gatewayv1.UDPRoute) L4Route {
	out := L4Route{Kind: KindUDPRoute, ObjectMeta: r.ObjectMeta, ParentRefs: r.Spec.ParentRefs, Status: r.Status.RouteStatus}
	if len(r.Spec.Rules) > 0 {
		out.BackendRefs = r.Spec.Rules[0].BackendRefs
	}
	return out
}

// Translate decides gw with all its routes: HTTPRoutes (httpUnits), and
// L4 routes on TLS (passthrough), TCP and UDP listeners. A TLSRoute
// becomes one cloud rule per SNI host name on its listener's port (the
// most specific name first, then the oldest route); a TCP or UDP listener
// forwards every connection to one route: the oldest attached of the
// namespace that holds the listener (the first to have it, with b's
// grace), any other attaches (Accepted, as the Gateway API's conflict
// rule has it) but gets nothing. Routes are admitted oldest first, each
// whole: one whose rules the cloud would refuse, that names a host name
// another namespace holds without its consent, or whose rules do not fit
// in what the older ones leave of the load balancer's is refused, and
// the Gateway is built from the others (admission.go). A look that
// leaves a namespace past its share (evictions.go) is made again with its
// newest costly route refused.
func Translate(gw *gatewayv1.Gateway, http []*gatewayv1.HTTPRoute, l4 []L4Route, nsLabels NamespaceLabels, backends Backends, b Boundary) Translation {
	evicted, strict := map[RouteKey]Reason{}, false
	for {
		t, more, stuck := translate(gw, http, l4, nsLabels, backends, b, evicted, strict)
		switch {
		case len(more) > 0:
			maps.Copy(evicted, more) // never admitted again: each try refuses more
		case stuck && !strict:
			strict = true // a namespace past its share with no route to refuse: the budget holds it all
		default:
			return t
		}
	}
}

// translate is one try of Translate, the routes evicted refused: the
// Translation, the routes to refuse at the next try, and whether a
// namespace is past its share with none of its routes to refuse (stuck).
func translate(gw *gatewayv1.Gateway, http []*gatewayv1.HTTPRoute, l4 []L4Route, nsLabels NamespaceLabels, backends Backends, b Boundary,
	evicted map[RouteKey]Reason, strict bool) (Translation, map[RouteKey]Reason, bool) {
	ls := listenersOf(gw)
	setLs, sets := setsOf(gw, ls, b.ListenerSets, nsLabels)
	own, unknown := OwnershipOf(gw)
	t := Translation{Attached: map[gatewayv1.SectionName]int32{}, Refused: map[gatewayv1.SectionName]Reason{},
		Parents: map[RouteKey][]Parent{}, OwnershipUnknown: unknown, Addresses: AddressesOf(gw)}
	if own != OwnershipNamespace {
		b.Claims = Claims{} // nothing is claimed, nor kept
	}
	ad := &admission{t: &t, own: own, grace: b.Grace.String(), l: newLedger(b), taken: map[gatewayv1.SectionName]RouteKey{},
		home: gw.Namespace, shares: map[string]int{}, strict: strict}
	// The ListenerSets' host names are claimed before any route's (a
	// route serves a name through a listener that has it), and their
	// listeners take their place in the load balancer's limits, the
	// catch-alls they cause their namespaces' rules (setlimits.go).
	ad.admitSets(newCapacity(ls), setLs)
	ad.setServed = maps.Clone(ad.l.served)
	all := append(slices.Clone(ls), setLs...)
	ad.iso = isolation(all)
	sc := scope{gw: gw, ls: all, sets: sets}
	var units []*unit
	for _, r := range http {
		units = append(units, httpUnits(sc, r, nsLabels, backends, &t)...)
	}
	for _, r := range l4 {
		units = append(units, l4Units(sc, r, nsLabels, backends, &t)...)
	}
	slices.SortStableFunc(units, oldestFirst)
	for _, u := range units {
		if r, ok := evicted[u.key]; ok {
			u.refuse(r.Reason, r.Message)
		}
		ad.admit(u)
	}
	t.SetListeners, t.AttachedListenerSets = settle(setLs, sets)
	if len(sets) > 0 {
		t.ListenerSets = map[types.NamespacedName]ListenerSetState{}
		for k, st := range sets {
			t.ListenerSets[k] = *st
		}
	}
	t.Rules = ad.rules()
	if own == OwnershipNamespace {
		t.Claims, t.Recheck = ad.l.end()
		t.Moves = ad.l.moves
	}
	for _, l := range ls {
		t.Attached[l.spec.Name] = l.attached
		if l.refused != "" {
			t.Refused[l.spec.Name] = Reason{Reason: string(l.refused), Message: l.message}
		}
	}
	more, stuck := ad.evictions()
	return t, more, stuck
}

// l4Units are the parentRefs of r naming gw, each attached where its
// listeners allow (or refused), with its rules: a TLSRoute's one per SNI
// host name, a TCP or UDP route's the listeners it would forward. Its
// entries are added to t.Parents.
func l4Units(sc scope, r L4Route, nsLabels NamespaceLabels, backends Backends, t *Translation) []*unit {
	weighted, resolved := resolveL4(r, backends)
	from := &origin{namespace: r.Namespace, name: r.Name, created: r.CreationTimestamp}
	var out []*unit
	for _, ref := range r.ParentRefs {
		set, ok := sc.parentOf(r.Namespace, ref)
		if !ok {
			continue
		}
		u := newUnit(r.Key(), r.ObjectMeta, ref, resolved, t)
		u.a = sc.attach(set, r.Kind, r.Namespace, r.Hostnames, ref, nsLabels)
		out = append(out, u)
		if u.a.reason != "" {
			u.refuse(string(u.a.reason), u.a.message)
			continue
		}
		u.stream = weighted
		var checked []candidate
		for i, l := range u.a.listeners {
			port := int(l.spec.Port)
			if r.Kind != KindTLSRoute {
				u.streams = append(u.streams, l)
				checked = append(checked, candidate{rule: streamRule(r.Key(), l, weighted)})
				continue
			}
			for _, h := range u.a.hostnames[i] {
				u.serves(h)
				c := candidate{from: from, listenerHost: l.hostname(), written: h,
					rule: lbmodel.Rule{Name: l4RuleName(r.Namespace, r.Name, r.Kind, port, h), ListenerPort: port, Hostname: h, Backends: weighted}}
				u.sni = append(u.sni, c)
				checked = append(checked, c)
			}
		}
		if why := refusedRule(checked, func(candidate) string { return "spec.rules[0]" }); why != "" {
			u.refuse(string(gatewayv1.RouteReasonUnsupportedValue), why)
		}
	}
	return out
}

// resolveL4 resolves an L4 route's backendRefs: those that resolve, with
// their weights (1 by default; one backend named twice merged), and its
// ResolvedRefs.
func resolveL4(r L4Route, backends Backends) ([]Backend, Reason) {
	var out []Backend
	resolved := Reason{Reason: string(gatewayv1.RouteReasonResolvedRefs)}
	for _, ref := range r.BackendRefs {
		if b, ok := resolveRef(r.Ref(), ref, backends, &resolved); ok {
			out = append(out, b)
		}
	}
	return mergeBackends(out), resolved
}

// l4RuleName names an L4 route's cloud rule after the route (namespace,
// name, kind), its port and SNI host name (none for TCP and UDP).
func l4RuleName(namespace, name string, kind gatewayv1.Kind, port int, host string) string {
	s := fmt.Sprintf("%s/%s/%s:%d", namespace, name, kind, port)
	if host != "" {
		s += "@" + host
	}
	return shorten(s)
}
