package gatewaycontroller

import (
	"slices"
	"testing"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/example/cloud-provider-example/gateway"
)

// The statuses the conformance suite checks (GatewayListenerUnsupportedProtocol,
// GatewayInvalidRouteKind, TLSRouteListenerTerminateNotSupported), decided
// without a server.
func TestGatewayStatus(t *testing.T) {
	gw := &gatewayv1.Gateway{ObjectMeta: metav1.ObjectMeta{Name: "gw", Namespace: "infra", Generation: 3},
		Spec: gatewayv1.GatewaySpec{Listeners: []gatewayv1.Listener{
			{Name: "http", Port: 80, Protocol: gatewayv1.HTTPProtocolType},
			{Name: "bad", Port: 81, Protocol: "INVALID"},
			{Name: "kinds", Port: 82, Protocol: gatewayv1.HTTPProtocolType,
				AllowedRoutes: &gatewayv1.AllowedRoutes{Kinds: []gatewayv1.RouteGroupKind{{Kind: "InvalidRoute"}}}},
			{Name: "terminate", Port: 443, Protocol: gatewayv1.TLSProtocolType},
		}}}
	refused := gateway.Translation{Refused: map[gatewayv1.SectionName]gateway.Reason{
		"bad":       {Reason: string(gatewayv1.ListenerReasonUnsupportedProtocol), Message: "protocol INVALID"},
		"terminate": {Reason: string(gatewayv1.ListenerReasonUnsupportedValue), Message: "a TLS listener passes TLS through"}}}
	st := gatewayStatus(gw, refused, programmed{ok: true, reason: gatewayv1.GatewayReasonProgrammed}, servesAll)
	a := meta.FindStatusCondition(st.Conditions, "Accepted")
	if a == nil || a.Status != metav1.ConditionTrue || a.Reason != string(gatewayv1.GatewayReasonListenersNotValid) || a.ObservedGeneration != 3 {
		t.Errorf("Accepted = %+v, want True, ListenersNotValid at generation 3", a)
	}
	listener := func(name string) gatewayv1.ListenerStatus {
		for _, l := range st.Listeners {
			if l.Name == gatewayv1.SectionName(name) {
				return l
			}
		}
		t.Fatalf("no listener %s in %+v", name, st.Listeners)
		return gatewayv1.ListenerStatus{}
	}
	if c := meta.FindStatusCondition(listener("bad").Conditions, "Accepted"); c == nil || c.Reason != string(gatewayv1.ListenerReasonUnsupportedProtocol) ||
		len(listener("bad").SupportedKinds) != 0 {
		t.Errorf("listener bad: %+v, want Accepted False UnsupportedProtocol and no kinds", listener("bad"))
	}
	if c := meta.FindStatusCondition(listener("kinds").Conditions, "ResolvedRefs"); c == nil || c.Status != metav1.ConditionFalse ||
		c.Reason != string(gatewayv1.ListenerReasonInvalidRouteKinds) || len(listener("kinds").SupportedKinds) != 0 {
		t.Errorf("listener kinds: %+v, want ResolvedRefs False InvalidRouteKinds and no kinds", listener("kinds"))
	}
	if c := meta.FindStatusCondition(listener("terminate").Conditions, "Accepted"); c == nil || c.Status != metav1.ConditionFalse ||
		c.Reason != string(gatewayv1.ListenerReasonUnsupportedValue) || len(listener("terminate").SupportedKinds) != 0 {
		t.Errorf("listener terminate: %+v, want Accepted False UnsupportedValue and no kinds", listener("terminate"))
	}
	if c := meta.FindStatusCondition(listener("http").Conditions, "ResolvedRefs"); c == nil || c.Status != metav1.ConditionTrue {
		t.Errorf("listener http: %+v, want ResolvedRefs True", listener("http"))
	}

	// Every listener refused: not Accepted.
	all := gateway.Translation{Refused: map[gatewayv1.SectionName]gateway.Reason{"http": {}, "bad": {}, "kinds": {}, "terminate": {}}}
	st = gatewayStatus(gw, all, programmed{}, servesAll)
	if a := meta.FindStatusCondition(st.Conditions, "Accepted"); a == nil || a.Status != metav1.ConditionFalse || a.Reason != string(gatewayv1.GatewayReasonListenersNotValid) {
		t.Errorf("Accepted = %+v, want False, ListenersNotValid", a)
	}
}

// servesAll serves every route kind.
func servesAll(gatewayv1.Kind) bool { return true }

// A listener's supportedKinds names only the route kinds the API server
// serves: an HTTP listener where GRPCRoute's CRD is not installed takes
// HTTPRoutes alone.
func TestSupportedKindsServed(t *testing.T) {
	gw := &gatewayv1.Gateway{Spec: gatewayv1.GatewaySpec{Listeners: []gatewayv1.Listener{{Name: "http", Port: 80, Protocol: gatewayv1.HTTPProtocolType}}}}
	kinds := func(serves func(gatewayv1.Kind) bool) (out []gatewayv1.Kind) {
		for _, k := range gatewayStatus(gw, gateway.Translation{}, programmed{}, serves).Listeners[0].SupportedKinds {
			out = append(out, k.Kind)
		}
		return out
	}
	if got := kinds(servesAll); !slices.Equal(got, []gatewayv1.Kind{"HTTPRoute", "GRPCRoute"}) {
		t.Errorf("every kind served: %v", got)
	}
	c := &Controller{}
	if got := kinds(c.serves); !slices.Equal(got, []gatewayv1.Kind{"HTTPRoute"}) {
		t.Errorf("GRPCRoute not served: %v, want HTTPRoute alone", got)
	}
}
