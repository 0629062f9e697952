package gateway

import (
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"
)

// NamespaceLabels are the labels of a namespace (for allowedRoutes'
// selectors); nil for one that does not exist.
type NamespaceLabels func(namespace string) map[string]string

// scope is what a route's parentRefs may name of a Gateway: the Gateway
// (its own listeners) and the ListenerSets naming it (theirs, where
// admitted).
type scope struct {
	gw   *gatewayv1.Gateway
	ls   []*listener
	sets map[types.NamespacedName]*ListenerSetState
}

// parentOf tells whether ref, of a route in routeNamespace, names the
// Gateway (set nil) or one of its ListenerSets (set).
func (sc scope) parentOf(routeNamespace string, ref gatewayv1.ParentReference) (set *types.NamespacedName, ok bool) {
	group, kind, ns := gatewayv1.GroupName, gatewayv1.Kind("Gateway"), routeNamespace
	if ref.Group != nil {
		group = string(*ref.Group)
	}
	if ref.Kind != nil {
		kind = *ref.Kind
	}
	if ref.Namespace != nil {
		ns = string(*ref.Namespace)
	}
	switch {
	case group != gatewayv1.GroupName:
		return nil, false
	case kind == "Gateway":
		return nil, ns == sc.gw.Namespace && string(ref.Name) == sc.gw.Name
	case kind == KindListenerSet:
		k := types.NamespacedName{Namespace: ns, Name: string(ref.Name)}
		_, ok := sc.sets[k]
		return &k, ok
	}
	return nil, false
}

// attach decides ref, naming the Gateway or its ListenerSet set, of a
// route of kind in routeNamespace with hostnames, against that parent's
// listeners.
func (sc scope) attach(set *types.NamespacedName, kind gatewayv1.Kind, routeNamespace string, hostnames []gatewayv1.Hostname,
	ref gatewayv1.ParentReference, nsLabels NamespaceLabels) attachment {
	if set != nil {
		if st := sc.sets[*set]; st.Accepted.Reason == string(gatewayv1.ListenerSetReasonNotAllowed) {
			return attachment{reason: gatewayv1.RouteReasonNotAllowedByListeners,
				message: fmt.Sprintf("ListenerSet %s is not attached to its Gateway: %s", set, st.Accepted.Message)}
		}
	}
	var ls []*listener
	for _, l := range sc.ls {
		if l.set == nil && set == nil || l.set != nil && set != nil && *l.set == *set {
			ls = append(ls, l)
		}
	}
	return attach(sc.gw.Namespace, ls, kind, routeNamespace, hostnames, ref, nsLabels)
}

// attachment is where one parentRef of a route attaches: the listeners
// and, per listener, the host names it serves there; or, with none, why
// not (a route condition reason and message).
type attachment struct {
	listeners []*listener
	hostnames [][]string
	reason    gatewayv1.RouteConditionReason
	message   string
}

// attach decides ref, of a route of kind in routeNamespace with
// hostnames, against the Gateway's listeners ls.
func attach(gwNamespace string, ls []*listener, kind gatewayv1.Kind, routeNamespace string, hostnames []gatewayv1.Hostname,
	ref gatewayv1.ParentReference, nsLabels NamespaceLabels) attachment {
	var named []*listener
	for _, l := range ls {
		if (ref.SectionName == nil || *ref.SectionName == l.spec.Name) && (ref.Port == nil || *ref.Port == l.spec.Port) {
			named = append(named, l)
		}
	}
	if len(named) == 0 {
		return attachment{reason: gatewayv1.RouteReasonNoMatchingParent, message: "no listener of the Gateway has " + describeRef(ref)}
	}
	var allowed []*listener
	why := ""
	for _, l := range named {
		switch {
		case l.refused != "":
			why = fmt.Sprintf("listener %s is not accepted (%s)", l.spec.Name, l.refused)
		case !l.allowsKind(kind):
			why = fmt.Sprintf("listener %s does not take %s", l.spec.Name, kind)
		case !l.allowsNamespace(l.home(gwNamespace), routeNamespace, nsLabels):
			why = fmt.Sprintf("listener %s does not take routes of namespace %s", l.spec.Name, routeNamespace)
		default:
			allowed = append(allowed, l)
		}
	}
	if len(allowed) == 0 {
		return attachment{reason: gatewayv1.RouteReasonNotAllowedByListeners, message: why}
	}
	route := make([]string, len(hostnames))
	for i, h := range hostnames {
		route[i] = string(h)
	}
	var a attachment
	for _, l := range allowed {
		if hs := intersect(l.hostname(), route); len(hs) > 0 {
			a.listeners = append(a.listeners, l)
			a.hostnames = append(a.hostnames, hs)
		}
	}
	if len(a.listeners) == 0 {
		return attachment{reason: gatewayv1.RouteReasonNoMatchingListenerHostname,
			message: fmt.Sprintf("no host name of the route is one of the listeners' (%s)", describeRef(ref))}
	}
	return a
}

// home is the namespace whose routes l's allowedRoutes Same takes: its
// ListenerSet's, or the Gateway's.
func (l *listener) home(gwNamespace string) string {
	if l.set != nil {
		return l.set.Namespace
	}
	return gwNamespace
}

// allowsNamespace tells whether l takes routes of routeNamespace: its
// allowedRoutes.namespaces (Same by default, All, or a Selector).
func (l *listener) allowsNamespace(gwNamespace, routeNamespace string, nsLabels NamespaceLabels) bool {
	from := gatewayv1.NamespacesFromSame
	var sel *metav1.LabelSelector
	if ar := l.spec.AllowedRoutes; ar != nil && ar.Namespaces != nil {
		if ar.Namespaces.From != nil {
			from = *ar.Namespaces.From
		}
		sel = ar.Namespaces.Selector
	}
	switch from {
	case gatewayv1.NamespacesFromAll:
		return true
	case gatewayv1.NamespacesFromSame:
		return routeNamespace == gwNamespace
	case gatewayv1.NamespacesFromSelector:
		if sel == nil || nsLabels == nil {
			return false
		}
		s, err := metav1.LabelSelectorAsSelector(sel)
		ls := nsLabels(routeNamespace)
		return err == nil && ls != nil && s.Matches(labels.Set(ls))
	}
	return false
}

func describeRef(ref gatewayv1.ParentReference) string {
	s := "any section"
	if ref.SectionName != nil {
		s = "section " + string(*ref.SectionName)
	}
	if ref.Port != nil {
		s += fmt.Sprintf(" on port %d", *ref.Port)
	}
	return s
}
