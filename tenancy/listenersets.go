package tenancy

import (
	"context"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/example/cloud-provider-example/objectref"
)

// A ListenerSet adds listeners to a Gateway of another team, maybe of
// another namespace: the Gateway's owners consent in its
// spec.allowedListeners (None by default), not the ListenerSet's
// author. Package gateway decides with AdmitsListenerSet at each look;
// Authorize decides a reference of kind ListenerSetGateway with the
// same rule, reading the Gateway and the namespace from Sources.

// AdmitsListenerSet tells whether a Gateway of namespace gwNamespace
// whose spec.allowedListeners is allowed takes ListenerSets of namespace
// ns: None (the default) takes none, Same those of its namespace, All
// every namespace's, Selector those of namespaces whose labels (nsLabels;
// nil for a namespace that does not exist) it selects. The refusal says
// why in the ListenerSet author's terms.
func AdmitsListenerSet(allowed *gatewayv1.AllowedListeners, gwNamespace, ns string, nsLabels func(string) map[string]string) (ok bool, refusal string) {
	from := gatewayv1.NamespacesFromNone
	var sel *metav1.LabelSelector
	if allowed != nil && allowed.Namespaces != nil {
		if allowed.Namespaces.From != nil {
			from = *allowed.Namespaces.From
		}
		sel = allowed.Namespaces.Selector
	}
	switch from {
	case gatewayv1.NamespacesFromAll:
		return true, ""
	case gatewayv1.NamespacesFromSame:
		if ns == gwNamespace {
			return true, ""
		}
		return false, "the Gateway takes ListenerSets of its own namespace only (spec.allowedListeners.namespaces.from Same)"
	case gatewayv1.NamespacesFromSelector:
		if sel != nil && nsLabels != nil {
			s, err := metav1.LabelSelectorAsSelector(sel)
			if ls := nsLabels(ns); err == nil && ls != nil && s.Matches(labels.Set(ls)) {
				return true, ""
			}
		}
		return false, "the Gateway's spec.allowedListeners selector does not select namespace " + ns
	}
	return false, "the Gateway takes no ListenerSets (spec.allowedListeners.namespaces.from None, the default)"
}

// listenerSetGateway: a ListenerSet (from) joins Gateway r.Namespace/r.Name
// only where the Gateway's spec.allowedListeners admits its namespace. A
// missing Gateway is refused in the same words as one that takes none.
func (a *Authorizer) listenerSetGateway(ctx context.Context, from objectref.Ref, r Reference) (string, error) {
	const none = "the Gateway takes no ListenerSets (spec.allowedListeners.namespaces.from None, the default)"
	if a.Gateway == nil {
		return none, nil
	}
	gw, found, err := a.Gateway(ctx, r.Namespace, r.Name)
	switch {
	case err != nil:
		return "", err
	case !found:
		return none, nil
	}
	if ok, refusal := AdmitsListenerSet(gw.Spec.AllowedListeners, gw.Namespace, from.Namespace, a.NamespaceLabels); !ok {
		return refusal, nil
	}
	return "", nil
}
