package gateway

import (
	"reflect"
	"testing"

	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"
)

func TestKinds(t *testing.T) {
	group := gatewayv1.Group(gatewayv1.GroupName)
	other := gatewayv1.Group("example.com")
	http := []gatewayv1.RouteGroupKind{{Group: &group, Kind: "HTTPRoute"}}
	allowed := func(kinds ...gatewayv1.RouteGroupKind) *gatewayv1.AllowedRoutes {
		return &gatewayv1.AllowedRoutes{Kinds: kinds}
	}
	for _, tc := range []struct {
		name     string
		listener gatewayv1.Listener
		kinds    []gatewayv1.RouteGroupKind
		invalid  bool
	}{
		{"HTTP takes HTTPRoutes", gatewayv1.Listener{Protocol: gatewayv1.HTTPProtocolType}, http, false},
		{"HTTPS too", gatewayv1.Listener{Protocol: gatewayv1.HTTPSProtocolType}, http, false},
		{"an unknown protocol nothing", gatewayv1.Listener{Protocol: "INVALID"}, nil, false},
		{"allowed HTTPRoute, no group", gatewayv1.Listener{Protocol: gatewayv1.HTTPProtocolType,
			AllowedRoutes: allowed(gatewayv1.RouteGroupKind{Kind: "HTTPRoute"})}, http, false},
		{"an unknown kind only", gatewayv1.Listener{Protocol: gatewayv1.HTTPProtocolType,
			AllowedRoutes: allowed(gatewayv1.RouteGroupKind{Kind: "InvalidRoute"})}, nil, true},
		{"an unknown kind beside HTTPRoute", gatewayv1.Listener{Protocol: gatewayv1.HTTPProtocolType,
			AllowedRoutes: allowed(gatewayv1.RouteGroupKind{Kind: "InvalidRoute"}, gatewayv1.RouteGroupKind{Group: &group, Kind: "HTTPRoute"})}, http, true},
		{"HTTPRoute of another group", gatewayv1.Listener{Protocol: gatewayv1.HTTPProtocolType,
			AllowedRoutes: allowed(gatewayv1.RouteGroupKind{Group: &other, Kind: "HTTPRoute"})}, nil, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			kinds, invalid := Kinds(tc.listener)
			if !reflect.DeepEqual(kinds, tc.kinds) || invalid != tc.invalid {
				t.Errorf("Kinds = %v, %v; want %v, %v", kinds, invalid, tc.kinds, tc.invalid)
			}
			l := &listener{spec: tc.listener}
			if got, want := l.allowsKind("HTTPRoute"), len(tc.kinds) > 0; got != want {
				t.Errorf("allowsKind(HTTPRoute) = %v, want %v", got, want)
			}
		})
	}
}
