package review

import (
	v1 "k8s.io/api/core/v1"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/example/cloud-provider-example/objectref"
	"github.com/example/cloud-provider-example/records"
)

// GatewaySubject is a Gateway's reconcile, its load balancer made from gw
// and the routes naming it (attached or not: a route that stops
// attaching changes the plan too). Its events go to the Gateway. A
// change's contributors are the Gateway and every such route: nobody
// allowed to edit one of them may approve the change (the webhook stamps
// no author on Gateway API objects, so each is an input whose editor is
// unknown).
func (b *Board) GatewaySubject(gw *gatewayv1.Gateway, routes []objectref.Ref, kind string) Subject {
	s := Subject{
		ref:  objectref.Gateway(gw.Namespace, gw.Name, string(gw.UID)),
		kind: kind, meta: gw.ObjectMeta,
		// Not a kind of client-go's scheme: the event names it by
		// reference.
		event: &v1.ObjectReference{APIVersion: gatewayv1.GroupVersion.String(), Kind: "Gateway",
			Namespace: gw.Namespace, Name: gw.Name, UID: gw.UID, ResourceVersion: gw.ResourceVersion},
	}
	if kind != records.KindChange {
		return s
	}
	s.contrib.Unverified = []records.Input{{Group: records.GroupGatewayAPI, Resource: records.ResourceGateways, Namespace: gw.Namespace, Name: gw.Name}}
	for _, r := range routes {
		s.contrib.Unverified = append(s.contrib.Unverified, records.Input{Group: records.GroupGatewayAPI,
			Resource: routeResources[r.Kind], Namespace: r.Namespace, Name: r.Name})
	}
	return s
}

// routeResources are the API resources of the route kinds.
var routeResources = map[string]string{
	objectref.KindHTTPRoute: records.ResourceHTTPRoutes, objectref.KindTLSRoute: records.ResourceTLSRoutes,
	objectref.KindTCPRoute: records.ResourceTCPRoutes, objectref.KindUDPRoute: records.ResourceUDPRoutes,
}
