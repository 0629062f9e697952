package gatewaycontroller

import (
	"context"
	"errors"
	"fmt"
	"reflect"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/retry"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/example/cloud-provider-example/gateway"
	"github.com/example/cloud-provider-example/objectref"
	"github.com/example/cloud-provider-example/tenancy"
)

// supportedFeatures are what a GatewayClass of this controller says it
// supports (the conformance suite's feature names).
var supportedFeatures = []gatewayv1.FeatureName{"Gateway", "HTTPRoute", "ReferenceGrant"}

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
	for _, f := range supportedFeatures {
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
// first.
func (c *Controller) syncGateway(ctx context.Context, nn types.NamespacedName) error {
	gw, err := c.gateways.Gateways(nn.Namespace).Get(nn.Name)
	if apierrors.IsNotFound(err) {
		return c.syncRoutes(ctx, nn, gateway.Translation{})
	}
	if err != nil {
		return err
	}
	if gw.DeletionTimestamp != nil || !c.ours(gw.Spec.GatewayClassName) {
		gone, err := c.remove(ctx, gw)
		switch {
		case err != nil:
			return fmt.Errorf("remove the load balancer of Gateway %s: %w", nn, err)
		case !gone:
			c.queue.AddAfter(key{NamespacedName: nn}, approvalRetry)
			return nil
		}
		return c.syncRoutes(ctx, nn, gateway.Translation{})
	}
	all, err := c.routes.List(labels.Everything())
	if err != nil {
		return err
	}
	var routes []*gatewayv1.HTTPRoute
	for _, r := range all {
		if names(r, gw) {
			routes = append(routes, r)
		}
	}
	t := gateway.HTTP(gw, routes, c.namespaceLabels, c.backend)
	p, err := c.program(ctx, gw, routes, t)
	if err != nil {
		return fmt.Errorf("build the load balancer of Gateway %s: %w", nn, err)
	}
	if err := c.writeGateway(ctx, gw, t, p); err != nil {
		return fmt.Errorf("status of Gateway %s: %w", nn, err)
	}
	switch {
	case p.retry > 0:
		c.queue.AddAfter(key{NamespacedName: nn}, p.retry)
	case p.readsSecrets && c.cloud.TLSResync > 0:
		c.queue.AddAfter(key{NamespacedName: nn}, c.cloud.TLSResync)
	}
	return c.syncRoutes(ctx, nn, t)
}

// names tells whether a parentRef of r names gw.
func names(r *gatewayv1.HTTPRoute, gw *gatewayv1.Gateway) bool {
	for _, ref := range r.Spec.ParentRefs {
		ns := r.Namespace
		if ref.Namespace != nil {
			ns = string(*ref.Namespace)
		}
		if ns == gw.Namespace && string(ref.Name) == gw.Name {
			return true
		}
	}
	return false
}

// backend resolves a backendRef: a Service with the port, of the route's
// namespace or of one whose ReferenceGrant lets the route in (decided by
// package tenancy, the one authorization check).
func (c *Controller) backend(route *gatewayv1.HTTPRoute, ref gatewayv1.BackendRef) (gateway.Backend, gatewayv1.RouteConditionReason, string) {
	if (ref.Group != nil && *ref.Group != "") || (ref.Kind != nil && *ref.Kind != "Service") {
		return gateway.Backend{}, gatewayv1.RouteReasonInvalidKind, fmt.Sprintf("backendRef %s: only Services are supported", ref.Name)
	}
	ns := route.Namespace
	if ref.Namespace != nil {
		ns = string(*ref.Namespace)
	}
	from := objectref.Ref{Kind: objectref.KindHTTPRoute, Namespace: route.Namespace, Name: route.Name}
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
	for _, p := range svc.Spec.Ports {
		if ref.Port != nil && p.Port == *ref.Port {
			return gateway.Backend{Port: int(p.NodePort)}, "", ""
		}
	}
	return gateway.Backend{}, gatewayv1.RouteReasonBackendNotFound, fmt.Sprintf("Service %s/%s has no such port", ns, ref.Name)
}

// writeGateway writes the Gateway's and its listeners' conditions and
// its addresses; a Gateway whose status would not change (judged from the
// informer's copy) costs no request.
func (c *Controller) writeGateway(ctx context.Context, gw *gatewayv1.Gateway, t gateway.Translation, p programmed) error {
	if reflect.DeepEqual(gatewayStatus(gw, t, p), gw.Status) {
		return nil
	}
	return retry.RetryOnConflict(retry.DefaultRetry, func() error {
		cur, err := c.gw.GatewayV1().Gateways(gw.Namespace).Get(ctx, gw.Name, metav1.GetOptions{})
		if err != nil || cur.UID != gw.UID {
			return ignoreGone(err)
		}
		next := cur.DeepCopy()
		next.Status = gatewayStatus(cur, t, p)
		if reflect.DeepEqual(next.Status, cur.Status) {
			return nil
		}
		_, err = c.gw.GatewayV1().Gateways(gw.Namespace).UpdateStatus(ctx, next, metav1.UpdateOptions{})
		return err
	})
}

// gatewayStatus is cur's status as t and p decide it.
func gatewayStatus(cur *gatewayv1.Gateway, t gateway.Translation, p programmed) gatewayv1.GatewayStatus {
	next := cur.DeepCopy()
	gen := cur.Generation
	// A Gateway with a valid listener is Accepted; the reason says
	// ListenersNotValid while any other is refused.
	accepted := len(t.Refused) < len(cur.Spec.Listeners)
	cond := func(conds *[]metav1.Condition, typ string, ok bool, reason, msg string) {
		s := metav1.ConditionFalse
		if ok {
			s = metav1.ConditionTrue
		}
		meta.SetStatusCondition(conds, metav1.Condition{Type: typ, Status: s, Reason: reason, Message: msg, ObservedGeneration: gen})
	}
	switch {
	case accepted && len(t.Refused) > 0:
		cond(&next.Status.Conditions, string(gatewayv1.GatewayConditionAccepted), true, string(gatewayv1.GatewayReasonListenersNotValid),
			fmt.Sprintf("%d of %d listeners are not valid", len(t.Refused), len(cur.Spec.Listeners)))
	case accepted:
		cond(&next.Status.Conditions, string(gatewayv1.GatewayConditionAccepted), true, string(gatewayv1.GatewayReasonAccepted), "")
	default:
		cond(&next.Status.Conditions, string(gatewayv1.GatewayConditionAccepted), false, string(gatewayv1.GatewayReasonListenersNotValid), "no listener is valid")
	}
	cond(&next.Status.Conditions, string(gatewayv1.GatewayConditionProgrammed), p.ok, string(p.reason), p.message)
	next.Status.Addresses = p.addresses
	var ls []gatewayv1.ListenerStatus
	for _, l := range cur.Spec.Listeners {
		kinds, invalidKinds := gateway.Kinds(l)
		st := gatewayv1.ListenerStatus{Name: l.Name, AttachedRoutes: t.Attached[l.Name], SupportedKinds: kinds}
		for _, old := range cur.Status.Listeners {
			if old.Name == l.Name {
				st.Conditions = old.Conditions
			}
		}
		refused, isRefused := t.Refused[l.Name]
		conflict := isRefused && (refused.Reason == string(gatewayv1.ListenerReasonProtocolConflict) || refused.Reason == string(gatewayv1.ListenerReasonHostnameConflict))
		switch {
		case conflict:
			cond(&st.Conditions, string(gatewayv1.ListenerConditionConflicted), true, refused.Reason, refused.Message)
			cond(&st.Conditions, string(gatewayv1.ListenerConditionAccepted), false, refused.Reason, refused.Message)
		case isRefused:
			cond(&st.Conditions, string(gatewayv1.ListenerConditionConflicted), false, string(gatewayv1.ListenerReasonNoConflicts), "")
			cond(&st.Conditions, string(gatewayv1.ListenerConditionAccepted), false, refused.Reason, refused.Message)
		default:
			cond(&st.Conditions, string(gatewayv1.ListenerConditionConflicted), false, string(gatewayv1.ListenerReasonNoConflicts), "")
			cond(&st.Conditions, string(gatewayv1.ListenerConditionAccepted), true, string(gatewayv1.ListenerReasonAccepted), "")
		}
		if u, ok := p.unresolved[l.Name]; ok {
			cond(&st.Conditions, string(gatewayv1.ListenerConditionResolvedRefs), false, u.Reason, u.Message)
		} else if invalidKinds {
			cond(&st.Conditions, string(gatewayv1.ListenerConditionResolvedRefs), false, string(gatewayv1.ListenerReasonInvalidRouteKinds),
				"allowedRoutes.kinds names a kind this listener cannot take (it takes HTTPRoute on HTTP and HTTPS)")
		} else {
			cond(&st.Conditions, string(gatewayv1.ListenerConditionResolvedRefs), true, string(gatewayv1.ListenerReasonResolvedRefs), "")
		}
		switch pending, isPending := p.pending[l.Name]; {
		case isRefused:
			cond(&st.Conditions, string(gatewayv1.ListenerConditionProgrammed), false, string(gatewayv1.ListenerReasonInvalid), refused.Message)
		case isPending:
			cond(&st.Conditions, string(gatewayv1.ListenerConditionProgrammed), false, pending.Reason, pending.Message)
		case p.ok:
			cond(&st.Conditions, string(gatewayv1.ListenerConditionProgrammed), true, string(gatewayv1.ListenerReasonProgrammed), "")
		default:
			cond(&st.Conditions, string(gatewayv1.ListenerConditionProgrammed), false, string(gatewayv1.ListenerReasonPending), p.message)
		}
		ls = append(ls, st)
	}
	next.Status.Listeners = ls
	return next.Status
}

// syncRoutes writes, into every HTTPRoute naming the Gateway nn, the
// parent statuses t decided (none, for a Gateway gone or not ours: the
// entries this controller wrote for it are removed).
func (c *Controller) syncRoutes(ctx context.Context, nn types.NamespacedName, t gateway.Translation) error {
	all, err := c.routes.List(labels.Everything())
	if err != nil {
		return err
	}
	for _, r := range all {
		key := types.NamespacedName{Namespace: r.Namespace, Name: r.Name}
		parents := t.Parents[key]
		if err := c.writeRoute(ctx, r, nn, parents); err != nil {
			return fmt.Errorf("status of HTTPRoute %s: %w", key, err)
		}
	}
	return nil
}

// writeRoute replaces this controller's parent statuses of r for Gateway
// nn with parents; a route whose status would not change (judged from the
// informer's copy) costs no request.
func (c *Controller) writeRoute(ctx context.Context, r *gatewayv1.HTTPRoute, nn types.NamespacedName, parents []gateway.Parent) error {
	if reflect.DeepEqual(routeStatus(r, nn, parents), r.Status) {
		return nil
	}
	return retry.RetryOnConflict(retry.DefaultRetry, func() error {
		cur, err := c.gw.GatewayV1().HTTPRoutes(r.Namespace).Get(ctx, r.Name, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return nil
		}
		if err != nil {
			return err
		}
		next := cur.DeepCopy()
		next.Status = routeStatus(cur, nn, parents)
		if reflect.DeepEqual(next.Status, cur.Status) {
			return nil
		}
		_, err = c.gw.GatewayV1().HTTPRoutes(r.Namespace).UpdateStatus(ctx, next, metav1.UpdateOptions{})
		return err
	})
}

// routeStatus is cur's status with this controller's entries for Gateway
// nn replaced by parents (the other controllers' and Gateways' kept).
func routeStatus(cur *gatewayv1.HTTPRoute, nn types.NamespacedName, parents []gateway.Parent) gatewayv1.HTTPRouteStatus {
	var kept []gatewayv1.RouteParentStatus
	for _, p := range cur.Status.Parents {
		ns := cur.Namespace
		if p.ParentRef.Namespace != nil {
			ns = string(*p.ParentRef.Namespace)
		}
		if p.ControllerName == ControllerName && ns == nn.Namespace && string(p.ParentRef.Name) == nn.Name {
			continue // ours for this Gateway: written again below
		}
		kept = append(kept, *p.DeepCopy())
	}
	for _, p := range parents {
		st := gatewayv1.RouteParentStatus{ParentRef: p.Ref, ControllerName: ControllerName}
		for _, old := range cur.Status.Parents {
			if old.ControllerName == ControllerName && reflect.DeepEqual(old.ParentRef, p.Ref) {
				st.Conditions = append([]metav1.Condition(nil), old.Conditions...)
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
			meta.SetStatusCondition(&st.Conditions, metav1.Condition{Type: c.typ, Status: s, Reason: c.r.Reason,
				Message: c.r.Message, ObservedGeneration: cur.Generation})
		}
		kept = append(kept, st)
	}
	out := *cur.Status.DeepCopy()
	out.Parents = kept
	if kept == nil {
		out.Parents = cur.Status.Parents[:0:0] // nil stays nil, [] stays []
	}
	return out
}
