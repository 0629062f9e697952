package gateway

import (
	"reflect"
	"slices"
	"testing"

	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"
)

func TestKinds(t *testing.T) {
	group := gatewayv1.Group(gatewayv1.GroupName)
	other := gatewayv1.Group("example.com")
	http := []gatewayv1.RouteGroupKind{{Group: &group, Kind: "HTTPRoute"}}
	both := append(slices.Clone(http), gatewayv1.RouteGroupKind{Group: &group, Kind: "GRPCRoute"})
	allowed := func(kinds ...gatewayv1.RouteGroupKind) *gatewayv1.AllowedRoutes {
		return &gatewayv1.AllowedRoutes{Kinds: kinds}
	}
	for _, tc := range []struct {
		name     string
		listener gatewayv1.Listener
		kinds    []gatewayv1.RouteGroupKind
		invalid  bool
	}{
		{"HTTP takes HTTPRoutes and GRPCRoutes", gatewayv1.Listener{Protocol: gatewayv1.HTTPProtocolType}, both, false},
		{"HTTPS too", gatewayv1.Listener{Protocol: gatewayv1.HTTPSProtocolType}, both, false},
		{"an unknown protocol nothing", gatewayv1.Listener{Protocol: "INVALID"}, nil, false},
		{"allowed HTTPRoute, no group", gatewayv1.Listener{Protocol: gatewayv1.HTTPProtocolType,
			AllowedRoutes: allowed(gatewayv1.RouteGroupKind{Kind: "HTTPRoute"})}, http, false},
		{"an unknown kind only", gatewayv1.Listener{Protocol: gatewayv1.HTTPProtocolType,
			AllowedRoutes: allowed(gatewayv1.RouteGroupKind{Kind: "InvalidRoute"})}, nil, true},
		{"an unknown kind beside HTTPRoute", gatewayv1.Listener{Protocol: gatewayv1.HTTPProtocolType,
			AllowedRoutes: allowed(gatewayv1.RouteGroupKind{Kind: "InvalidRoute"}, gatewayv1.RouteGroupKind{Group: &group, Kind: "HTTPRoute"})}, http, true},
		{"GRPCRoute alone", gatewayv1.Listener{Protocol: gatewayv1.HTTPProtocolType,
			AllowedRoutes: allowed(gatewayv1.RouteGroupKind{Kind: "GRPCRoute"})}, both[1:], false},
		{"HTTPRoute of another group", gatewayv1.Listener{Protocol: gatewayv1.HTTPProtocolType,
			AllowedRoutes: allowed(gatewayv1.RouteGroupKind{Group: &other, Kind: "HTTPRoute"})}, nil, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			kinds, invalid := Kinds(tc.listener)
			if !reflect.DeepEqual(kinds, tc.kinds) || invalid != tc.invalid {
				t.Errorf("Kinds = %v, %v; want %v, %v", kinds, invalid, tc.kinds, tc.invalid)
			}
			l := &listener{spec: tc.listener}
			if got, want := l.allowsKind("HTTPRoute"), slices.ContainsFunc(tc.kinds, func(k gatewayv1.RouteGroupKind) bool { return k.Kind == "HTTPRoute" }); got != want {
				t.Errorf("allowsKind(HTTPRoute) = %v, want %v", got, want)
			}
		})
	}
}
