package review

import (
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/example/cloud-provider-example/objectref"
	"github.com/example/cloud-provider-example/records"
)

// GatewayInputs are what a Gateway's load balancer is made from besides
// the Gateway itself: the routes naming it (attached or not: a route that
// stops attaching changes the plan too) and the ListenerSets naming it
// (in Routes, of kind ListenerSet), the TLS Secrets its HTTPS
// listeners' certificateRefs name, the Services its rules forward to, and
// the BackendTLSPolicies targeting those Services with the CA ConfigMaps
// they name (their editors decide how the rules reach the backends).
type GatewayInputs struct {
	Routes      []objectref.Ref
	Secrets     []types.NamespacedName
	Services    []types.NamespacedName
	TLSPolicies []types.NamespacedName
	ConfigMaps  []types.NamespacedName
}

// GatewaySubject is a Gateway's reconcile, its load balancer made from gw
// and in. Its events go to the Gateway. A change's contributors are the
// Gateway and every input, each one whose editor is unknown (the webhook
// stamps no author on Gateway API objects, Kubernetes records none on a
// Secret, and a backend Service edited by a tenant moves where the
// Gateway sends requests, as a TLS Secret does what a Service serves):
// nobody allowed to edit one of them may approve the change.
func (b *Board) GatewaySubject(gw *gatewayv1.Gateway, in GatewayInputs, kind string) Subject {
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
	inputs := []records.Input{{Group: records.GroupGatewayAPI, Resource: records.ResourceGateways, Namespace: gw.Namespace, Name: gw.Name}}
	for _, r := range in.Routes {
		inputs = append(inputs, records.Input{Group: records.GroupGatewayAPI, Resource: routeResources[r.Kind], Namespace: r.Namespace, Name: r.Name})
	}
	for _, n := range in.Secrets {
		inputs = append(inputs, records.Input{Resource: records.ResourceSecrets, Namespace: n.Namespace, Name: n.Name})
	}
	for _, n := range in.Services {
		inputs = append(inputs, records.Input{Resource: records.ResourceServices, Namespace: n.Namespace, Name: n.Name})
	}
	for _, n := range in.TLSPolicies {
		inputs = append(inputs, records.Input{Group: records.GroupGatewayAPI, Resource: records.ResourceBackendTLSPolicies, Namespace: n.Namespace, Name: n.Name})
	}
	for _, n := range in.ConfigMaps {
		inputs = append(inputs, records.Input{Resource: records.ResourceConfigMaps, Namespace: n.Namespace, Name: n.Name})
	}
	s.contrib = s.contrib.Add(records.Contributors{Unverified: inputs}) // each once
	return s
}

// routeResources are the API resources of the route kinds.
var routeResources = map[string]string{
	objectref.KindHTTPRoute: records.ResourceHTTPRoutes, objectref.KindGRPCRoute: records.ResourceGRPCRoutes, objectref.KindTLSRoute: records.ResourceTLSRoutes,
	objectref.KindTCPRoute: records.ResourceTCPRoutes, objectref.KindUDPRoute: records.ResourceUDPRoutes,
	// A ListenerSet is an input as a route is: its author caused the
	// change, and may not approve it.
	objectref.KindListenerSet: records.ResourceListenerSets,
}
