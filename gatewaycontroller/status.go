package gatewaycontroller

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/retry"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/example/cloud-provider-example/gateway"
	"github.com/example/cloud-provider-example/lbmodel"
	"github.com/example/cloud-provider-example/objectref"
	"github.com/example/cloud-provider-example/tenancy"
)

// claimed are the conformance suite's features a GatewayClass of this
// controller claims beside its L4 route kinds: the core ones, listener
// isolation (gateway.HTTP's catch-alls), and the extended ones the Example
// load balancer serves, each passing the suite's tests with traffic
// (docs/gateway-conformance/report.yaml).
var claimed = []gatewayv1.FeatureName{"Gateway", "GatewayHTTPListenerIsolation", "HTTPRoute", "ReferenceGrant",
	"GatewayPort8080", "HTTPRouteMethodMatching", "HTTPRouteParentRefPort", "HTTPRoutePortRedirect", "HTTPRouteSchemeRedirect",
	"HTTPRoute303RedirectStatusCode", "HTTPRoute307RedirectStatusCode", "HTTPRoute308RedirectStatusCode",
	"HTTPRouteBackendProtocolWebSocket", "HTTPRouteQueryParamMatching", "HTTPRouteResponseHeaderModification",
	"HTTPRoutePathRedirect", "HTTPRouteHostRewrite", "HTTPRoutePathRewrite", "HTTPRouteDestinationPortMatching", "HTTPRouteBackendProtocolH2C",
	"HTTPRouteRequestTimeout", "HTTPRouteBackendTimeout", "HTTPRouteCORS", "HTTPRouteRetry", "HTTPRouteNamedRouteRule",
	"GatewayStaticAddresses"}

// supportedFeatures are what a GatewayClass of this controller says it
// supports (the conformance suite's feature names): claimed, and each L4
// route kind the API server serves.
func (c *Controller) supportedFeatures() []gatewayv1.FeatureName {
	out := slices.Clone(claimed)
	for _, k := range c.l4 {
		out = append(out, gatewayv1.FeatureName(k.kind))
		if k.kind == gateway.KindGRPCRoute {
			// A rule's name names its cloud rules (gateway.ruleID).
			out = append(out, "GRPCRouteNamedRouteRule")
		}
	}
	if c.tlsPolicies != nil {
		out = append(out, backendTLSFeatures...)
	}
	if c.sets != nil {
		out = append(out, listenerSetFeature)
	}
	return out
}

// serves tells whether the API server serves routes of kind (HTTPRoute,
// and those of c.l4): a listener's supportedKinds names no other.
func (c *Controller) serves(kind gatewayv1.Kind) bool {
	return kind == gateway.KindHTTPRoute || slices.ContainsFunc(c.l4, func(k l4Kind) bool { return k.kind == kind })
}

// syncClass accepts a GatewayClass of this controller.
func (c *Controller) syncClass(ctx context.Context, name string) error {
	gc, err := c.classes.Get(name)
	if apierrors.IsNotFound(err) || (err == nil && gc.Spec.ControllerName != ControllerName) {
		return nil
	}
	if err != nil {
		return err
	}
	next := gc.DeepCopy()
	meta.SetStatusCondition(&next.Status.Conditions, metav1.Condition{Type: string(gatewayv1.GatewayClassConditionStatusAccepted),
		Status: metav1.ConditionTrue, Reason: string(gatewayv1.GatewayClassReasonAccepted), ObservedGeneration: gc.Generation,
		Message: "served by " + string(ControllerName)})
	next.Status.SupportedFeatures = nil
	for _, f := range c.supportedFeatures() {
		next.Status.SupportedFeatures = append(next.Status.SupportedFeatures, gatewayv1.SupportedFeature{Name: f})
	}
	if reflect.DeepEqual(next.Status, gc.Status) {
		return nil
	}
	_, err = c.gw.GatewayV1().GatewayClasses().UpdateStatus(ctx, next, metav1.UpdateOptions{})
	return err
}

// syncGateway decides a Gateway of this controller with its HTTPRoutes,
// builds its load balancer and writes the statuses. A Gateway leaving
// (deleted, or moved to another class) has its load balancer destroyed
// first; so has one gone without the finalizer, or replaced by another of
// its name (sweep.go).
func (c *Controller) syncGateway(ctx context.Context, nn types.NamespacedName) error {
	gw, err := c.gateways.Gateways(nn.Namespace).Get(nn.Name)
	if err != nil && !apierrors.IsNotFound(err) {
		return err
	}
	var uid types.UID
	if gw != nil {
		uid = gw.UID
	}
	swept, err := c.sweep(ctx, nn, uid)
	if err != nil {
		return fmt.Errorf("sweep the load balancer of an earlier Gateway %s: %w", nn, err)
	}
	if gw == nil {
		if !swept {
			c.queue.AddAfter(key{NamespacedName: nn}, approvalRetry)
			return nil
		}
		// Gone, its load balancer with it (or never built): nothing of
		// its claims is left.
		if err := c.claims.remove(ctx, nn, false); err != nil {
			return err
		}
		if err := c.parentGone(ctx, nn); err != nil {
			return err
		}
		return c.syncRoutes(ctx, nn, gateway.Translation{}, ruleStates{})
	}
	if gw.DeletionTimestamp != nil || !c.ours(gw.Spec.GatewayClassName) {
		gone := false
		if swept {
			gone, err = c.remove(ctx, gw)
		}
		switch {
		case err != nil:
			return fmt.Errorf("remove the load balancer of Gateway %s: %w", nn, err)
		case !gone:
			c.queue.AddAfter(key{NamespacedName: nn}, approvalRetry)
			return nil
		case gw.DeletionTimestamp != nil:
			if err := c.parentGone(ctx, nn); err != nil {
				return err
			}
		}
		return c.syncRoutes(ctx, nn, gateway.Translation{}, ruleStates{})
	}
	http, l4, refs, err := c.routesOf(gw)
	if err != nil {
		return err
	}
	t, err := c.translate(ctx, gw, http, l4, true)
	if err != nil {
		return err
	}
	p := replacing(nn)
	switch {
	case swept && t.Addresses.Unsupported != "":
		p = notAccepted(gw, t.Addresses)
	case swept:
		if p, err = c.program(ctx, gw, refs, t); err != nil {
			return fmt.Errorf("build the load balancer of Gateway %s: %w", nn, err)
		}
	}
	// Kept once told (program warns of the moves): a look that fails
	// before decides them, and tells them, again.
	if err := c.claims.save(ctx, nn, gw.UID, t.Claims); err != nil {
		return fmt.Errorf("claims of Gateway %s: %w", nn, err)
	}
	t = gateway.WithUnresolved(t, p.unresolved) // a ListenerSet whose certificates do not resolve
	if err := c.writeGateway(ctx, gw, t, p); err != nil {
		return fmt.Errorf("status of Gateway %s: %w", nn, err)
	}
	if err := c.writeListenerSets(ctx, t, p); err != nil {
		return err
	}
	switch {
	case p.retry > 0:
		c.queue.AddAfter(key{NamespacedName: nn}, p.retry)
	case p.readsSecrets && c.cloud.TLSResync > 0:
		c.queue.AddAfter(key{NamespacedName: nn}, c.cloud.TLSResync)
	}
	if !t.Recheck.IsZero() { // a claim's grace ends then
		c.queue.AddAfter(key{NamespacedName: nn}, t.Recheck.Sub(c.now()))
	}
	return c.syncRoutes(ctx, nn, t, p.rules)
}

// routesOf are the routes naming gw in a parentRef (attached or not), and
// their identities.
func (c *Controller) routesOf(gw *gatewayv1.Gateway) (http []*gatewayv1.HTTPRoute, l4 []gateway.L4Route, refs []objectref.Ref, err error) {
	all, err := c.httpRoutes()
	if err != nil {
		return nil, nil, nil, err
	}
	sets := c.setKeys(gw)
	for _, s := range sets {
		refs = append(refs, objectref.Ref{Kind: objectref.KindListenerSet, Namespace: s.Namespace, Name: s.Name})
	}
	for _, r := range all {
		if names(r.Namespace, r.Spec.ParentRefs, gw) || namesSet(r.Namespace, r.Spec.ParentRefs, sets) {
			http = append(http, r)
			refs = append(refs, objectref.Ref{Kind: string(gateway.KindOf(r)), Namespace: r.Namespace, Name: r.Name, UID: string(r.UID)})
		}
	}
	others, err := c.l4Routes()
	if err != nil {
		return nil, nil, nil, err
	}
	for _, r := range others {
		if names(r.Namespace, r.ParentRefs, gw) || namesSet(r.Namespace, r.ParentRefs, sets) {
			l4 = append(l4, r)
			refs = append(refs, r.Ref())
		}
	}
	return http, l4, refs, nil
}

// names tells whether a parentRef of a route in namespace ns names gw.
func names(ns string, refs []gatewayv1.ParentReference, gw *gatewayv1.Gateway) bool {
	for _, ref := range refs {
		if isListenerSetRef(ref) {
			continue
		}
		pns := ns
		if ref.Namespace != nil {
			pns = string(*ref.Namespace)
		}
		if pns == gw.Namespace && string(ref.Name) == gw.Name {
			return true
		}
	}
	return false
}

// backend resolves a backendRef: a Service with the port, of the route's
// namespace or of one whose ReferenceGrant lets the route in (decided by
// package tenancy, the one authorization check).
// Its BackendTLSPolicy, if any, is applied as tls decides (used notes
// it).
func (c *Controller) backend(from objectref.Ref, ref gatewayv1.BackendRef, tls gateway.BackendTLS,
	used map[types.NamespacedName]gateway.PolicyConditions) (gateway.Backend, gatewayv1.RouteConditionReason, string) {
	if (ref.Group != nil && *ref.Group != "") || (ref.Kind != nil && *ref.Kind != "Service") {
		return gateway.Backend{}, gatewayv1.RouteReasonInvalidKind, fmt.Sprintf("backendRef %s: only Services are supported", ref.Name)
	}
	ns := from.Namespace
	if ref.Namespace != nil {
		ns = string(*ref.Namespace)
	}
	err := c.refs.Authorize(context.Background(), from, []tenancy.Reference{{Kind: tenancy.RouteBackend, Namespace: ns, Name: string(ref.Name)}})
	var refused *tenancy.RefusedError
	switch {
	case errors.As(err, &refused):
		return gateway.Backend{}, gatewayv1.RouteReasonRefNotPermitted, refused.Error()
	case err != nil:
		return gateway.Backend{}, gatewayv1.RouteReasonRefNotPermitted, err.Error()
	}
	svc := c.service(ns, string(ref.Name))
	if svc == nil {
		return gateway.Backend{}, gatewayv1.RouteReasonBackendNotFound, fmt.Sprintf("Service %s/%s not found", ns, ref.Name)
	}
	// A UDPRoute forwards to the Service's UDP port of that number, the
	// others to its TCP one (a DNS Service has both).
	proto := corev1.ProtocolTCP
	if from.Kind == objectref.KindUDPRoute {
		proto = corev1.ProtocolUDP
	}
	for _, p := range svc.Spec.Ports {
		if ref.Port != nil && p.Port == *ref.Port && cmp.Or(p.Protocol, corev1.ProtocolTCP) == proto {
			b := gateway.Backend{Port: int(p.NodePort), Protocol: gateway.BackendProtocol(from.Kind, p.AppProtocol)}
			if c.cloud != nil && c.cloud.PodTargets {
				// Its pods, directly: whatever the Service's type.
				b = gateway.Backend{Pods: &lbmodel.ServicePort{Namespace: ns, Service: svc.Name, Port: p.Port, Protocol: proto},
					Protocol: gateway.BackendProtocol(from.Kind, p.AppProtocol)}
			}
			return withBackendTLS(tls, used, from, ns, svc.Name, p, b), "", ""
		}
	}
	return gateway.Backend{}, gatewayv1.RouteReasonBackendNotFound, fmt.Sprintf("Service %s/%s has no %s port %s", ns, ref.Name, proto, portOf(ref))
}

func portOf(ref gatewayv1.BackendRef) string {
	if ref.Port == nil {
		return "(none given)"
	}
	return fmt.Sprint(*ref.Port)
}

// writeGateway writes the Gateway's and its listeners' conditions and
// its addresses; a Gateway whose status would not change (judged from the
// informer's copy) costs no request.
func (c *Controller) writeGateway(ctx context.Context, gw *gatewayv1.Gateway, t gateway.Translation, p programmed) error {
	if reflect.DeepEqual(gatewayStatus(gw, t, p, c.serves), gw.Status) {
		return nil
	}
	gws := c.gw.GatewayV1().Gateways(gw.Namespace)
	return writeStatus(ctx, gw.Name, gw.UID, gws.Get, gws.UpdateStatus, func(cur *gatewayv1.Gateway) (*gatewayv1.Gateway, bool) {
		next := cur.DeepCopy()
		next.Status = gatewayStatus(cur, t, p, c.serves)
		return next, !reflect.DeepEqual(next.Status, cur.Status)
	})
}

// writeStatus writes the status edit gives object name, read fresh,
// when it changes it; nothing when the object is gone or another of its
// name (not uid) is there.
func writeStatus[T interface{ GetUID() types.UID }](ctx context.Context, name string, uid types.UID,
	get func(context.Context, string, metav1.GetOptions) (T, error), update func(context.Context, T, metav1.UpdateOptions) (T, error),
	edit func(cur T) (next T, changed bool)) error {
	return retry.RetryOnConflict(retry.DefaultRetry, func() error {
		cur, err := get(ctx, name, metav1.GetOptions{})
		if err != nil || cur.GetUID() != uid {
			return ignoreGone(err)
		}
		next, changed := edit(cur)
		if !changed {
			return nil
		}
		_, err = update(ctx, next, metav1.UpdateOptions{})
		return err
	})
}

// gatewayStatus is cur's status as t and p decide it, its listeners'
// supportedKinds among the route kinds served.
func gatewayStatus(cur *gatewayv1.Gateway, t gateway.Translation, p programmed, serves func(gatewayv1.Kind) bool) gatewayv1.GatewayStatus {
	next := cur.DeepCopy()
	gen := cur.Generation
	// A Gateway with a valid listener is Accepted; the reason says
	// ListenersNotValid while any other is refused.
	accepted := len(t.Refused) < len(cur.Spec.Listeners)
	cond := conditionSetter(gen)
	switch {
	case t.Addresses.Unsupported != "":
		// Nothing is built of a Gateway naming what the cloud cannot take.
		cond(&next.Status.Conditions, string(gatewayv1.GatewayConditionAccepted), false, string(gatewayv1.GatewayReasonUnsupportedAddress), t.Addresses.Unsupported)
	case accepted && len(t.Refused) > 0:
		cond(&next.Status.Conditions, string(gatewayv1.GatewayConditionAccepted), true, string(gatewayv1.GatewayReasonListenersNotValid),
			strings.TrimSuffix(fmt.Sprintf("%d of %d listeners are not valid; %s", len(t.Refused), len(cur.Spec.Listeners), ownershipNote(t)), "; "))
	case accepted:
		cond(&next.Status.Conditions, string(gatewayv1.GatewayConditionAccepted), true, string(gatewayv1.GatewayReasonAccepted), ownershipNote(t))
	default:
		cond(&next.Status.Conditions, string(gatewayv1.GatewayConditionAccepted), false, string(gatewayv1.GatewayReasonListenersNotValid), "no listener is valid")
	}
	cond(&next.Status.Conditions, string(gatewayv1.GatewayConditionProgrammed), p.ok, string(p.reason), p.message)
	next.Status.Addresses = p.addresses
	var ls []gatewayv1.ListenerStatus
	for _, l := range cur.Spec.Listeners {
		var old []metav1.Condition
		for _, o := range cur.Status.Listeners {
			if o.Name == l.Name {
				old = o.Conditions
			}
		}
		var refused *gateway.Reason
		if r, ok := t.Refused[l.Name]; ok {
			refused = &r
		}
		ls = append(ls, listenerStatus(l, l.Name, t.Attached[l.Name], refused, old, p, gen, serves))
	}
	if t.ListenerSets != nil || cur.Status.AttachedListenerSets != nil {
		n := t.AttachedListenerSets
		next.Status.AttachedListenerSets = &n
	}
	next.Status.Listeners = ls
	return next.Status
}

// conditionSetter sets a condition, true when ok, at generation gen.
func conditionSetter(gen int64) func(conds *[]metav1.Condition, typ string, ok bool, reason, msg string) {
	return func(conds *[]metav1.Condition, typ string, ok bool, reason, msg string) {
		s := metav1.ConditionFalse
		if ok {
			s = metav1.ConditionTrue
		}
		meta.SetStatusCondition(conds, metav1.Condition{Type: typ, Status: s, Reason: reason, Message: msg, ObservedGeneration: gen})
	}
}

// conflicted tells whether a listener's refusal is a conflict with
// another listener.
func conflicted(r gateway.Reason) bool {
	return r.Reason == string(gatewayv1.ListenerReasonProtocolConflict) || r.Reason == string(gatewayv1.ListenerReasonHostnameConflict)
}

// listenerStatus is the status of listener l (id: its name, or a
// ListenerSet's listener's gateway.ListenerID), attached routes attached,
// refused why routes cannot attach (nil: they may), old its conditions
// before, as p (what building the load balancer came to) has it.
func listenerStatus(l gatewayv1.Listener, id gatewayv1.SectionName, attached int32, refused *gateway.Reason, old []metav1.Condition,
	p programmed, gen int64, serves func(gatewayv1.Kind) bool) gatewayv1.ListenerStatus {
	cond := conditionSetter(gen)
	kinds, invalidKinds := gateway.Kinds(l)
	kinds = slices.DeleteFunc(kinds, func(k gatewayv1.RouteGroupKind) bool { return !serves(k.Kind) })
	if refused != nil && refused.Reason == string(gatewayv1.ListenerReasonUnsupportedValue) {
		kinds = nil // a listener whose settings the cloud cannot serve takes no route
	}
	st := gatewayv1.ListenerStatus{Name: l.Name, AttachedRoutes: attached, SupportedKinds: kinds, Conditions: old}
	switch {
	case refused != nil && conflicted(*refused):
		cond(&st.Conditions, string(gatewayv1.ListenerConditionConflicted), true, refused.Reason, refused.Message)
		cond(&st.Conditions, string(gatewayv1.ListenerConditionAccepted), false, refused.Reason, refused.Message)
	case refused != nil:
		cond(&st.Conditions, string(gatewayv1.ListenerConditionConflicted), false, string(gatewayv1.ListenerReasonNoConflicts), "")
		cond(&st.Conditions, string(gatewayv1.ListenerConditionAccepted), false, refused.Reason, refused.Message)
	default:
		cond(&st.Conditions, string(gatewayv1.ListenerConditionConflicted), false, string(gatewayv1.ListenerReasonNoConflicts), "")
		cond(&st.Conditions, string(gatewayv1.ListenerConditionAccepted), true, string(gatewayv1.ListenerReasonAccepted), "")
	}
	if u, ok := p.unresolved[id]; ok {
		cond(&st.Conditions, string(gatewayv1.ListenerConditionResolvedRefs), false, u.Reason, u.Message)
	} else if invalidKinds {
		cond(&st.Conditions, string(gatewayv1.ListenerConditionResolvedRefs), false, string(gatewayv1.ListenerReasonInvalidRouteKinds),
			"allowedRoutes.kinds names a kind this listener cannot take (HTTPRoute and GRPCRoute on HTTP and HTTPS, TLSRoute on TLS, TCPRoute on TCP, UDPRoute on UDP)")
	} else {
		cond(&st.Conditions, string(gatewayv1.ListenerConditionResolvedRefs), true, string(gatewayv1.ListenerReasonResolvedRefs), "")
	}
	switch pending, isPending := p.pending[id]; {
	case refused != nil:
		cond(&st.Conditions, string(gatewayv1.ListenerConditionProgrammed), false, string(gatewayv1.ListenerReasonInvalid), refused.Message)
	case isPending:
		cond(&st.Conditions, string(gatewayv1.ListenerConditionProgrammed), false, pending.Reason, pending.Message)
	case p.ok:
		cond(&st.Conditions, string(gatewayv1.ListenerConditionProgrammed), true, string(gatewayv1.ListenerReasonProgrammed), "")
	default:
		cond(&st.Conditions, string(gatewayv1.ListenerConditionProgrammed), false, string(gatewayv1.ListenerReasonPending), p.message)
	}
	return st
}

// ownershipNote says, in the Gateway's Accepted condition, an ownership
// annotation the controller does not know ("" for none).
func ownershipNote(t gateway.Translation) string {
	if t.OwnershipUnknown == "" {
		return ""
	}
	return fmt.Sprintf(unknownOwnershipMessage, gateway.OwnershipAnnotation, t.OwnershipUnknown,
		gateway.OwnershipNamespace, gateway.OwnershipNamespace, gateway.OwnershipNone)
}

// syncRoutes writes, into every route naming the Gateway nn, the parent
// statuses t decided (none, for a Gateway gone or not ours: the entries
// this controller wrote for it are removed), with what rules says of
// their rules. A route whose status would not change (judged from the
// informer's copy) costs no request.
func (c *Controller) syncRoutes(ctx context.Context, nn types.NamespacedName, t gateway.Translation, rules ruleStates) error {
	all, err := c.routes.List(labels.Everything())
	if err != nil {
		return err
	}
	gws := c.gw.GatewayV1()
	sc := c.scopeOf(nn)
	for _, r := range all {
		key := gateway.RouteKey{Kind: gateway.KindHTTPRoute, NamespacedName: types.NamespacedName{Namespace: r.Namespace, Name: r.Name}}
		if !changes(key, r.Generation, r.Status.RouteStatus, sc, t.Parents[key], rules) {
			continue
		}
		err := updateStatus(ctx, gws.HTTPRoutes(r.Namespace).Get, gws.HTTPRoutes(r.Namespace).UpdateStatus, r.Name,
			func(r *gatewayv1.HTTPRoute) (int64, *gatewayv1.RouteStatus) {
				return r.Generation, &r.Status.RouteStatus
			},
			func(gen int64, st *gatewayv1.RouteStatus) { setParents(key, gen, st, sc, t.Parents[key], rules) })
		if err != nil {
			return fmt.Errorf("status of HTTPRoute %s: %w", key.NamespacedName, err)
		}
	}
	for _, k := range c.l4 {
		routes, err := k.list()
		if err != nil {
			return err
		}
		for _, r := range routes {
			key := r.Key()
			if !changes(key, r.Generation, r.Status, sc, t.Parents[key], rules) {
				continue
			}
			err := k.update(ctx, r.Namespace, r.Name, func(gen int64, st *gatewayv1.RouteStatus) { setParents(key, gen, st, sc, t.Parents[key], rules) })
			if err != nil {
				return fmt.Errorf("status of %s %s: %w", k.kind, key.NamespacedName, err)
			}
		}
	}
	return c.syncBackendTLSPolicies(ctx, nn, t)
}

// changes tells whether setParents would change st.
func changes(key gateway.RouteKey, gen int64, st gatewayv1.RouteStatus, sc scope, parents []gateway.Parent, rules ruleStates) bool {
	next := st.DeepCopy()
	setParents(key, gen, next, sc, parents, rules)
	return !equalRouteStatus(st, *next)
}

func equalRouteStatus(a, b gatewayv1.RouteStatus) bool { return reflect.DeepEqual(a, b) }

// setParents replaces this controller's entries in sc in st, the status
// of route key at generation gen, with parents and what rules says of its
// rules (the other controllers' entries, and ours for other Gateways,
// kept).
func setParents(key gateway.RouteKey, gen int64, st *gatewayv1.RouteStatus, sc scope, parents []gateway.Parent, rules ruleStates) {
	ns := key.Namespace
	var kept []gatewayv1.RouteParentStatus
	for _, p := range st.Parents {
		if p.ControllerName == ControllerName && sc.has(ns, p.ParentRef) {
			continue // written again below, or gone
		}
		kept = append(kept, *p.DeepCopy())
	}
	for _, p := range parents {
		ps := gatewayv1.RouteParentStatus{ParentRef: p.Ref, ControllerName: ControllerName}
		for _, old := range st.Parents {
			if old.ControllerName == ControllerName && reflect.DeepEqual(old.ParentRef, p.Ref) {
				ps.Conditions = append([]metav1.Condition(nil), old.Conditions...)
			}
		}
		for _, c := range []struct {
			typ string
			r   gateway.Reason
			ok  string
		}{
			{string(gatewayv1.RouteConditionAccepted), p.Accepted, string(gatewayv1.RouteReasonAccepted)},
			{string(gatewayv1.RouteConditionResolvedRefs), p.ResolvedRefs, string(gatewayv1.RouteReasonResolvedRefs)},
		} {
			s := metav1.ConditionFalse
			if c.r.Reason == c.ok {
				s = metav1.ConditionTrue
			}
			meta.SetStatusCondition(&ps.Conditions, metav1.Condition{Type: c.typ, Status: s, Reason: c.r.Reason,
				Message: c.r.Message, ObservedGeneration: gen})
		}
		rules.set(&ps.Conditions, key, p.Accepted.Reason == string(gatewayv1.RouteReasonAccepted), gen)
		kept = append(kept, ps)
	}
	if kept == nil {
		kept = st.Parents[:0:0] // nil stays nil, [] stays []
	}
	st.Parents = kept
}
