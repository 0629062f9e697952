package gateway

import (
	"cmp"
	"fmt"
	"maps"
	"slices"

	"k8s.io/apimachinery/pkg/types"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/example/cloud-provider-example/tenancy"
)

// A ListenerSet adds a team's listeners to a platform team's Gateway,
// from the team's namespace (docs/gateway-api.md, "ListenerSet"; ADR
// 0027). Its listeners join the Gateway's on the one load balancer only
// where the Gateway's spec.allowedListeners admits its namespace (package
// tenancy decides), with the Gateway API's conflict rules: the Gateway's
// own listeners win, then the ListenerSets oldest first. A listener's
// host name is a claim of the ListenerSet's namespace, like a route's
// (claims.go): it cannot take a name another namespace holds. Its
// listeners are built within the load balancer's limits, shared with
// every team (setlimits.go).

// KindListenerSet is the kind a route's parentRef names to attach to a
// ListenerSet's listeners.
const KindListenerSet gatewayv1.Kind = "ListenerSet"

// ListenerSetState is what a ListenerSet's status says, as its parent
// Gateway decides it.
type ListenerSetState struct {
	// Accepted is Accepted, NotAllowed (its namespace is not admitted)
	// or ListenersNotValid (none of its listeners is).
	Accepted Reason
	// Listeners are its listeners', in its spec's order.
	Listeners []SetListenerState
}

// IsAccepted tells whether the ListenerSet is attached to the Gateway.
func (s ListenerSetState) IsAccepted() bool {
	return s.Accepted.Reason == string(gatewayv1.ListenerSetReasonAccepted)
}

// SetListenerState is one ListenerSet listener's state.
type SetListenerState struct {
	Name gatewayv1.SectionName
	// ID names it in Certificates and Program's pending (ListenerID).
	ID       gatewayv1.SectionName
	Attached int32
	// Refused says why no route attaches to it (nil: routes may).
	Refused *Reason
}

// SetListener is an accepted listener of a ListenerSet: what Program
// builds beside the Gateway's own.
type SetListener struct {
	ID   gatewayv1.SectionName
	Set  types.NamespacedName
	Spec gatewayv1.Listener
}

// ListenerID names listener name of ListenerSet set among the Gateway's
// listeners (a ListenerSet's listener may have the name of one of the
// Gateway's, or of another ListenerSet's).
func ListenerID(set types.NamespacedName, name gatewayv1.SectionName) gatewayv1.SectionName {
	return gatewayv1.SectionName(fmt.Sprintf("%s/%s/%s", set.Namespace, set.Name, name))
}

// NamesGateway tells whether ListenerSet s's parentRef names gw.
func NamesGateway(s *gatewayv1.ListenerSet, gw *gatewayv1.Gateway) bool {
	ref := s.Spec.ParentRef
	ns := s.Namespace
	if ref.Namespace != nil {
		ns = string(*ref.Namespace)
	}
	return (ref.Group == nil || *ref.Group == gatewayv1.GroupName) && (ref.Kind == nil || *ref.Kind == "Gateway") &&
		ns == gw.Namespace && string(ref.Name) == gw.Name
}

// setsOf decides gw's ListenerSets (those naming it), oldest first (then
// by namespace/name): each admitted by the Gateway's allowedListeners or
// NotAllowed; each listener of an admitted one refused where it is not
// supported or conflicts with a listener before it (the Gateway's, an
// older ListenerSet's, an earlier one of its own). It returns their
// listeners and their states.
func setsOf(gw *gatewayv1.Gateway, own []*listener, sets []*gatewayv1.ListenerSet, nsLabels NamespaceLabels) ([]*listener, map[types.NamespacedName]*ListenerSetState) {
	sets = slices.Clone(sets)
	slices.SortStableFunc(sets, func(a, b *gatewayv1.ListenerSet) int {
		return cmp.Or(a.CreationTimestamp.Compare(b.CreationTimestamp.Time), cmp.Compare(a.Namespace+"/"+a.Name, b.Namespace+"/"+b.Name))
	})
	before := slices.Clone(own)
	var out []*listener
	states := map[types.NamespacedName]*ListenerSetState{}
	for _, s := range sets {
		if !NamesGateway(s, gw) {
			continue
		}
		key := types.NamespacedName{Namespace: s.Namespace, Name: s.Name}
		st := &ListenerSetState{}
		states[key] = st
		if ok, why := tenancy.AdmitsListenerSet(gw.Spec.AllowedListeners, gw.Namespace, s.Namespace, nsLabels); !ok {
			st.Accepted = Reason{Reason: string(gatewayv1.ListenerSetReasonNotAllowed), Message: why}
			continue
		}
		for _, e := range s.Spec.Listeners {
			l := &listener{spec: gatewayv1.Listener(e),
				id: ListenerID(key, e.Name), set: &key}
			l.refused, l.message = unsupportedSetting(l.spec)
			if l.refused == "" {
				l.refused, l.message = conflictWith(l, before)
			}
			before = append(before, l)
			out = append(out, l)
		}
	}
	return out, states
}

// conflictWith is why l conflicts with a listener before it ("" for
// none): listeners of different protocols on one TCP port, or of one
// protocol, port and host name (of TCP or UDP, whatever their host
// names). The one before wins.
func conflictWith(l *listener, before []*listener) (gatewayv1.ListenerConditionReason, string) {
	for _, b := range before {
		if b.refused != "" || b.spec.Port != l.spec.Port {
			continue
		}
		switch {
		case b.spec.Protocol != l.spec.Protocol && transport(b.spec.Protocol) == transport(l.spec.Protocol):
			return gatewayv1.ListenerReasonProtocolConflict, fmt.Sprintf("%s uses port %d with protocol %s", b.describeTo(l.set.Namespace), b.spec.Port, b.spec.Protocol)
		case b.spec.Protocol == l.spec.Protocol && (b.hostname() == l.hostname() || hostless(l.spec.Protocol)):
			return gatewayv1.ListenerReasonHostnameConflict, fmt.Sprintf("%s has the same port, protocol and hostname, and was there first", b.describeTo(l.set.Namespace))
		}
	}
	return "", ""
}

// describeTo names listener l to a ListenerSet of namespace ns whose
// listener conflicts with it: the Gateway's by name, a ListenerSet's of
// ns with its own, another namespace's without naming it.
func (l *listener) describeTo(ns string) string {
	switch {
	case l.set == nil:
		return "listener " + string(l.spec.Name) + " of the Gateway"
	case l.set.Namespace == ns:
		return "listener " + string(l.spec.Name) + " of ListenerSet " + l.set.Name
	}
	return "a listener of a ListenerSet of another namespace"
}

// admitSets decides the ListenerSets' listeners ls in order, after
// their conflicts (setsOf): each one's host name is a claim of its
// namespace (claimSetHost), then it is built where the load balancer's
// limits leave room (fit, c holding what the Gateway's listeners take);
// its claim is made only then, a listener not built claiming nothing.
func (ad *admission) admitSets(c *capacity, ls []*listener) {
	for _, l := range ls {
		if l.refused != "" {
			continue
		}
		uses, ok := ad.claimSetHost(l)
		if !ok {
			continue
		}
		if l.refused, l.message = ad.fit(c, l, ad.newNames(l.set.Namespace, uses)); l.refused != "" {
			continue
		}
		ad.l.serve(l.set.Namespace, uses)
	}
}

// claimSetHost is the use of ListenerSet listener l's host name as a
// claim of its namespace (none without a host name, or under ownership
// None); naming one another namespace holds on the Gateway, without its
// consent (a ReferenceGrant from ListenerSets), it is refused
// (HostnameConflict), naming neither the holder nor its objects.
func (ad *admission) claimSetHost(l *listener) (uses []hostUse, ok bool) {
	if l.hostname() == "" || ad.own != OwnershipNamespace {
		return nil, true
	}
	key := RouteKey{Kind: KindListenerSet, NamespacedName: *l.set}
	uses, refused := ad.l.hostsFor(key, []string{l.hostname()}, nil)
	if refused != "" {
		l.refused = gatewayv1.ListenerReasonHostnameConflict
		l.message = ad.hostnameInUse(key, refused).Message
		return nil, false
	}
	return uses, true
}

// settle writes each ListenerSet's listeners' states into its state, and
// its Accepted: Accepted with a listener routes may attach to, else
// ListenersNotValid. It returns the accepted listeners to build, and how
// many ListenerSets are attached.
func settle(ls []*listener, states map[types.NamespacedName]*ListenerSetState) (build []SetListener, attached int32) {
	for _, l := range ls {
		st := states[*l.set]
		sl := SetListenerState{Name: l.spec.Name, ID: l.id, Attached: l.attached}
		if l.refused != "" {
			sl.Refused = &Reason{Reason: string(l.refused), Message: l.message}
		} else {
			build = append(build, SetListener{ID: l.id, Set: *l.set, Spec: l.spec})
		}
		st.Listeners = append(st.Listeners, sl)
	}
	for _, st := range states {
		if st.Accepted.Reason != "" {
			continue // NotAllowed
		}
		if slices.ContainsFunc(st.Listeners, func(l SetListenerState) bool { return l.Refused == nil }) {
			st.Accepted = Reason{Reason: string(gatewayv1.ListenerSetReasonAccepted)}
			attached++
		} else {
			st.Accepted = Reason{Reason: string(gatewayv1.ListenerSetReasonListenersNotValid), Message: "none of its listeners is valid"}
		}
	}
	return build, attached
}

// CertificateOverreach is why a certificate of ListenerSet set's listener
// may not be served ("" when it may): on a shared cloud listener the
// cloud picks a certificate by the client's SNI name among all the
// listener's, so one naming (names: its DNS names) a host name that
// another namespace holds on the Gateway (a claim), or that a listener of
// the Gateway serves (for a ListenerSet of another namespace), would
// answer for it. The refusal names no holder, nor the held name: only
// what the certificate names (a wildcard would otherwise list, a name at a
// time, what other namespaces serve under it).
func CertificateOverreach(gw *gatewayv1.Gateway, t Translation, set types.NamespacedName, names []string) string {
	for _, n := range names {
		for _, h := range slices.Sorted(maps.Keys(t.Claims.Hosts)) {
			if c := t.Claims.Hosts[h]; c.Namespace != set.Namespace && overlaps(n, h) {
				return fmt.Sprintf("the certificate names %s, which is or covers a host name another namespace holds on this Gateway: "+
					"a ListenerSet's certificate may name only host names of its own namespace", n)
			}
		}
		if set.Namespace == gw.Namespace {
			continue
		}
		for _, l := range gw.Spec.Listeners {
			if l.Hostname != nil && overlaps(n, string(*l.Hostname)) {
				return fmt.Sprintf("the certificate names %s, and the Gateway's listener %s serves host name %s: "+
					"a ListenerSet's certificate may name only host names of its own namespace", n, l.Name, *l.Hostname)
			}
		}
	}
	return ""
}

// WithUnresolved is t with each accepted ListenerSet none of whose
// listeners is left once those whose certificateRefs do not resolve
// (unresolved, by ListenerID) are set aside: ListenersNotValid, and not
// counted among the Gateway's attached ListenerSets.
func WithUnresolved(t Translation, unresolved map[gatewayv1.SectionName]Reason) Translation {
	if len(unresolved) == 0 || len(t.ListenerSets) == 0 {
		return t
	}
	sets := make(map[types.NamespacedName]ListenerSetState, len(t.ListenerSets))
	for k, st := range t.ListenerSets {
		valid := slices.ContainsFunc(st.Listeners, func(l SetListenerState) bool {
			_, bad := unresolved[l.ID]
			return l.Refused == nil && !bad
		})
		if st.IsAccepted() && !valid {
			st.Accepted = Reason{Reason: string(gatewayv1.ListenerSetReasonListenersNotValid),
				Message: "none of its listeners is valid: the certificateRefs of its HTTPS listeners do not resolve"}
			t.AttachedListenerSets--
		}
		sets[k] = st
	}
	t.ListenerSets = sets
	return t
}
