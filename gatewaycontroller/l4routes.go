package gatewaycontroller

import (
	"context"
	"fmt"
	"slices"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/retry"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"
	gwclient "sigs.k8s.io/gateway-api/pkg/client/clientset/versioned"
	gwinformers "sigs.k8s.io/gateway-api/pkg/client/informers/externalversions"

	"github.com/example/cloud-provider-example/gateway"
)

// l4Kind is one of the L4 route kinds (TLSRoute, TCPRoute, UDPRoute):
// how to list its routes and write a route's status. Each is watched only
// when the API server serves it (its CRD is installed).
type l4Kind struct {
	kind     gatewayv1.Kind
	informer cache.SharedIndexInformer
	// read reads an informer's object (or tombstone).
	read func(obj any) (gateway.L4Route, bool)
	// list reads every route of the kind from the informer.
	list func() ([]gateway.L4Route, error)
	// update writes the route's status, read fresh, changed by edit
	// (nothing when edit leaves it as it is).
	update func(ctx context.Context, ns, name string, edit func(generation int64, st *gatewayv1.RouteStatus)) error
}

// l4Kinds are the L4 route kinds the API server serves (discovery says
// which of their CRDs are installed).
func l4Kinds(gw gwclient.Interface, f gwinformers.SharedInformerFactory) ([]l4Kind, error) {
	served, err := gw.Discovery().ServerResourcesForGroupVersion(gatewayv1.GroupVersion.String())
	if err != nil && !apierrors.IsNotFound(err) {
		return nil, fmt.Errorf("gateway controller: discover %s: %w", gatewayv1.GroupVersion, err)
	}
	has := func(resource string) bool {
		return served != nil && slices.ContainsFunc(served.APIResources, func(r metav1.APIResource) bool { return r.Name == resource })
	}
	v1 := f.Gateway().V1()
	c := gw.GatewayV1()
	var out []l4Kind
	if has("tlsroutes") {
		lister := v1.TLSRoutes().Lister()
		out = append(out, l4Kind{kind: gateway.KindTLSRoute, informer: v1.TLSRoutes().Informer(),
			read: reader(gateway.TLSRoute),
			list: func() ([]gateway.L4Route, error) { return readAll(lister.List(labels.Everything()))(gateway.TLSRoute) },
			update: func(ctx context.Context, ns, name string, edit func(int64, *gatewayv1.RouteStatus)) error {
				return updateStatus(ctx, c.TLSRoutes(ns).Get, c.TLSRoutes(ns).UpdateStatus, name,
					func(r *gatewayv1.TLSRoute) (int64, *gatewayv1.RouteStatus) {
						return r.Generation, &r.Status.RouteStatus
					}, edit)
			}})
	}
	if has("tcproutes") {
		lister := v1.TCPRoutes().Lister()
		out = append(out, l4Kind{kind: gateway.KindTCPRoute, informer: v1.TCPRoutes().Informer(),
			read: reader(gateway.TCPRoute),
			list: func() ([]gateway.L4Route, error) { return readAll(lister.List(labels.Everything()))(gateway.TCPRoute) },
			update: func(ctx context.Context, ns, name string, edit func(int64, *gatewayv1.RouteStatus)) error {
				return updateStatus(ctx, c.TCPRoutes(ns).Get, c.TCPRoutes(ns).UpdateStatus, name,
					func(r *gatewayv1.TCPRoute) (int64, *gatewayv1.RouteStatus) {
						return r.Generation, &r.Status.RouteStatus
					}, edit)
			}})
	}
	if has("udproutes") {
		lister := v1.UDPRoutes().Lister()
		out = append(out, l4Kind{kind: gateway.KindUDPRoute, informer: v1.UDPRoutes().Informer(),
			read: reader(gateway.UDPRoute),
			list: func() ([]gateway.L4Route, error) { return readAll(lister.List(labels.Everything()))(gateway.UDPRoute) },
			update: func(ctx context.Context, ns, name string, edit func(int64, *gatewayv1.RouteStatus)) error {
				return updateStatus(ctx, c.UDPRoutes(ns).Get, c.UDPRoutes(ns).UpdateStatus, name,
					func(r *gatewayv1.UDPRoute) (int64, *gatewayv1.RouteStatus) {
						return r.Generation, &r.Status.RouteStatus
					}, edit)
			}})
	}
	return out, nil
}

// reader reads an informer's object (or tombstone) of T with read.
func reader[T any](read func(T) gateway.L4Route) func(obj any) (gateway.L4Route, bool) {
	return func(obj any) (gateway.L4Route, bool) {
		r, ok := objectOf[T](obj)
		if !ok {
			return gateway.L4Route{}, false
		}
		return read(r), true
	}
}

// readAll turns a lister's answer into L4Routes with read.
func readAll[T any](routes []T, err error) func(read func(T) gateway.L4Route) ([]gateway.L4Route, error) {
	return func(read func(T) gateway.L4Route) ([]gateway.L4Route, error) {
		if err != nil {
			return nil, err
		}
		out := make([]gateway.L4Route, len(routes))
		for i, r := range routes {
			out[i] = read(r)
		}
		return out, nil
	}
}

// updateStatus reads route name afresh, lets edit change its status and
// writes it when it changed; a route gone is no error.
func updateStatus[T any](ctx context.Context, get func(context.Context, string, metav1.GetOptions) (T, error),
	write func(context.Context, T, metav1.UpdateOptions) (T, error), name string,
	status func(T) (int64, *gatewayv1.RouteStatus), edit func(int64, *gatewayv1.RouteStatus)) error {
	return retry.RetryOnConflict(retry.DefaultRetry, func() error {
		cur, err := get(ctx, name, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return nil
		}
		if err != nil {
			return err
		}
		gen, st := status(cur)
		before := st.DeepCopy()
		edit(gen, st)
		if equalRouteStatus(*before, *st) {
			return nil
		}
		_, err = write(ctx, cur, metav1.UpdateOptions{})
		return err
	})
}

// l4Routes are every L4 route the controller watches.
func (c *Controller) l4Routes() ([]gateway.L4Route, error) {
	var out []gateway.L4Route
	for _, k := range c.l4 {
		rs, err := k.list()
		if err != nil {
			return nil, err
		}
		out = append(out, rs...)
	}
	return out, nil
}

// l4Changed queues every Gateway an L4 route names.
func (c *Controller) l4Changed(read func(obj any) (gateway.L4Route, bool)) func(obj any) {
	return func(obj any) {
		if r, ok := read(obj); ok {
			c.queueParents(r.Namespace, r.ParentRefs)
		}
	}
}
