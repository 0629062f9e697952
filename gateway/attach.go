package gateway

import (
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"
)

// NamespaceLabels are the labels of a namespace (for allowedRoutes'
// selectors); nil for one that does not exist.
type NamespaceLabels func(namespace string) map[string]string

// refersTo tells whether ref, of a route in routeNamespace, names gw.
func refersTo(gw *gatewayv1.Gateway, routeNamespace string, ref gatewayv1.ParentReference) bool {
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
	return group == gatewayv1.GroupName && kind == "Gateway" && ns == gw.Namespace && string(ref.Name) == gw.Name
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
		case !l.allowsNamespace(gwNamespace, routeNamespace, nsLabels):
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
