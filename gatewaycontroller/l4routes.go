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

// l4Kind is one of the L4 route kinds (TLSRoute, TCPRoute, UDPRoute), or
// GRPCRoute: how to list its routes and write a route's status. Each is
// watched only when the API server serves it (its CRD is installed).
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
// which of their CRDs are installed), and whether it serves ListenerSets.
func l4Kinds(gw gwclient.Interface, f gwinformers.SharedInformerFactory) (kinds []l4Kind, listenerSets bool, err error) {
	served, err := gw.Discovery().ServerResourcesForGroupVersion(gatewayv1.GroupVersion.String())
	if err != nil && !apierrors.IsNotFound(err) {
		return nil, false, fmt.Errorf("gateway controller: discover %s: %w", gatewayv1.GroupVersion, err)
	}
	has := func(resource string) bool {
		return served != nil && slices.ContainsFunc(served.APIResources, func(r metav1.APIResource) bool { return r.Name == resource })
	}
	v1 := f.Gateway().V1()
	c := gw.GatewayV1()
	// Each makes its informer only when called: an informer of a kind the
	// server does not serve would fail to list forever.
	all := []struct {
		resource string
		make     func() l4Kind
	}{
		{"tlsroutes", func() l4Kind {
			return newL4Kind(gateway.KindTLSRoute, v1.TLSRoutes().Informer(), v1.TLSRoutes().Lister().List, c.TLSRoutes, gateway.TLSRoute,
				func(r *gatewayv1.TLSRoute) *gatewayv1.RouteStatus { return &r.Status.RouteStatus })
		}},
		{"tcproutes", func() l4Kind {
			return newL4Kind(gateway.KindTCPRoute, v1.TCPRoutes().Informer(), v1.TCPRoutes().Lister().List, c.TCPRoutes, gateway.TCPRoute,
				func(r *gatewayv1.TCPRoute) *gatewayv1.RouteStatus { return &r.Status.RouteStatus })
		}},
		{"udproutes", func() l4Kind {
			return newL4Kind(gateway.KindUDPRoute, v1.UDPRoutes().Informer(), v1.UDPRoutes().Lister().List, c.UDPRoutes, gateway.UDPRoute,
				func(r *gatewayv1.UDPRoute) *gatewayv1.RouteStatus { return &r.Status.RouteStatus })
		}},
		// Watched and written as these are, translated as an HTTPRoute
		// (grpcroutes.go).
		{"grpcroutes", func() l4Kind {
			return newL4Kind(gateway.KindGRPCRoute, v1.GRPCRoutes().Informer(), v1.GRPCRoutes().Lister().List, c.GRPCRoutes, grpcIdentity,
				func(r *gatewayv1.GRPCRoute) *gatewayv1.RouteStatus { return &r.Status.RouteStatus })
		}},
	}
	for _, k := range all {
		if has(k.resource) {
			kinds = append(kinds, k.make())
		}
	}
	return kinds, has("listenersets"), nil
}

// routeAPI is what the controller uses of a route kind's typed client.
type routeAPI[T any] interface {
	Get(ctx context.Context, name string, opts metav1.GetOptions) (T, error)
	UpdateStatus(ctx context.Context, route T, opts metav1.UpdateOptions) (T, error)
}

// newL4Kind is the l4Kind of routes T: translate reads one as the
// gateway package's L4Route, status points into its RouteStatus.
func newL4Kind[T metav1.Object, C routeAPI[T]](kind gatewayv1.Kind, informer cache.SharedIndexInformer,
	list func(labels.Selector) ([]T, error), client func(namespace string) C,
	translate func(T) gateway.L4Route, status func(T) *gatewayv1.RouteStatus) l4Kind {
	return l4Kind{kind: kind, informer: informer,
		read: func(obj any) (gateway.L4Route, bool) {
			r, ok := objectOf[T](obj)
			if !ok {
				return gateway.L4Route{}, false
			}
			return translate(r), true
		},
		list: func() ([]gateway.L4Route, error) {
			routes, err := list(labels.Everything())
			if err != nil {
				return nil, err
			}
			out := make([]gateway.L4Route, len(routes))
			for i, r := range routes {
				out[i] = translate(r)
			}
			return out, nil
		},
		update: func(ctx context.Context, ns, name string, edit func(int64, *gatewayv1.RouteStatus)) error {
			api := client(ns)
			return updateStatus(ctx, api.Get, api.UpdateStatus, name,
				func(r T) (int64, *gatewayv1.RouteStatus) { return r.GetGeneration(), status(r) }, edit)
		}}
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
		if k.kind == gateway.KindGRPCRoute {
			continue // its rules are HTTP ones (httpRoutes)
		}
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
