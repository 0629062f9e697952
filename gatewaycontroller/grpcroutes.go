package gatewaycontroller

import (
	"fmt"
	"slices"

	"k8s.io/apimachinery/pkg/labels"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/example/cloud-provider-example/gateway"
)

// A GRPCRoute is watched and its status written as the L4 kinds' are
// (l4Kind: only where the API server serves it), and decided as the
// HTTPRoute it is served as (gateway.GRPCRoute), beside the HTTPRoutes.

// grpcIdentity is what the watch and the status writes read of r: its
// identity, parents and status.
func grpcIdentity(r *gatewayv1.GRPCRoute) gateway.L4Route {
	return gateway.L4Route{Kind: gateway.KindGRPCRoute, ObjectMeta: r.ObjectMeta, ParentRefs: r.Spec.ParentRefs, Hostnames: r.Spec.Hostnames,
		Status: r.Status.RouteStatus}
}

// httpRoutes are the HTTPRoutes, and the GRPCRoutes read as HTTPRoutes
// where the API server serves them.
func (c *Controller) httpRoutes() ([]*gatewayv1.HTTPRoute, error) {
	out, err := c.routes.List(labels.Everything())
	if err != nil {
		return nil, fmt.Errorf("list HTTPRoutes: %w", err)
	}
	if !slices.ContainsFunc(c.l4, func(k l4Kind) bool { return k.kind == gateway.KindGRPCRoute }) {
		return out, nil // its informer would list a kind the server lacks forever
	}
	grpc, err := c.gwFactory.Gateway().V1().GRPCRoutes().Lister().List(labels.Everything())
	if err != nil {
		return nil, fmt.Errorf("list GRPCRoutes: %w", err)
	}
	for _, r := range grpc {
		out = append(out, gateway.GRPCRoute(r))
	}
	return out, nil
}
