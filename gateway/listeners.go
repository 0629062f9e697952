package gateway

import (
	"fmt"
	"slices"

	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"
)

// listener is one Gateway listener's part in the translation.
type listener struct {
	spec gatewayv1.Listener
	// refused is why no route attaches to it ("" when routes may), and
	// message says how.
	refused gatewayv1.ListenerConditionReason
	message string
	// attached counts the routes attached to it.
	attached int32
}

// hostname is the listener's, "" for none.
func (l *listener) hostname() string {
	if l.spec.Hostname == nil {
		return ""
	}
	return string(*l.spec.Hostname)
}

// supportedProtocols are the listener protocols the Example load balancer
// serves.
var supportedProtocols = []gatewayv1.ProtocolType{
	gatewayv1.HTTPProtocolType, gatewayv1.HTTPSProtocolType, gatewayv1.TLSProtocolType,
	gatewayv1.TCPProtocolType, gatewayv1.UDPProtocolType,
}

// listenersOf are gw's listeners, each refused when its protocol is not
// one the cloud serves or it conflicts with another: the cloud has one
// listener per port and transport, so listeners of different protocols
// on one TCP port conflict (ProtocolConflict), and two of one protocol on
// one port with the same host name (HostnameConflict).
func listenersOf(gw *gatewayv1.Gateway) []*listener {
	out := make([]*listener, len(gw.Spec.Listeners))
	for i, l := range gw.Spec.Listeners {
		out[i] = &listener{spec: l}
	}
	for _, l := range out {
		if !supported(l.spec.Protocol) {
			l.refused = gatewayv1.ListenerReasonUnsupportedProtocol
			l.message = fmt.Sprintf("protocol %s is not supported (supported: HTTP, HTTPS, TLS, TCP, UDP)", l.spec.Protocol)
		}
	}
	for i, a := range out {
		for j, b := range out {
			if i == j || a.spec.Port != b.spec.Port || a.refused == gatewayv1.ListenerReasonUnsupportedProtocol || b.refused == gatewayv1.ListenerReasonUnsupportedProtocol {
				continue
			}
			switch {
			case a.spec.Protocol != b.spec.Protocol && transport(a.spec.Protocol) == transport(b.spec.Protocol):
				a.refused = gatewayv1.ListenerReasonProtocolConflict
				a.message = fmt.Sprintf("listener %s uses port %d with protocol %s", b.spec.Name, b.spec.Port, b.spec.Protocol)
			case a.spec.Protocol == b.spec.Protocol && a.hostname() == b.hostname() && a.refused == "":
				a.refused = gatewayv1.ListenerReasonHostnameConflict
				a.message = fmt.Sprintf("listener %s has the same port, protocol and hostname", b.spec.Name)
			}
		}
	}
	return out
}

func supported(p gatewayv1.ProtocolType) bool { return slices.Contains(supportedProtocols, p) }

// transport is the cloud's port space a protocol uses.
func transport(p gatewayv1.ProtocolType) string {
	if p == gatewayv1.UDPProtocolType {
		return "udp"
	}
	return "tcp"
}

// routeKinds are the route kinds a listener of protocol p takes: HTTP
// and HTTPS listeners take HTTPRoutes; the others none yet.
func routeKinds(p gatewayv1.ProtocolType) []gatewayv1.Kind {
	switch p {
	case gatewayv1.HTTPProtocolType, gatewayv1.HTTPSProtocolType:
		return []gatewayv1.Kind{"HTTPRoute"}
	}
	return nil
}

// Kinds are the route kinds listener l takes (its status's
// supportedKinds): those of its allowedRoutes.kinds that its protocol
// takes, else all its protocol takes. invalid tells that allowedRoutes
// names a kind it cannot take (ResolvedRefs False, InvalidRouteKinds).
func Kinds(l gatewayv1.Listener) (kinds []gatewayv1.RouteGroupKind, invalid bool) {
	group := gatewayv1.Group(gatewayv1.GroupName)
	takes := routeKinds(l.Protocol)
	if l.AllowedRoutes == nil || len(l.AllowedRoutes.Kinds) == 0 {
		for _, k := range takes {
			kinds = append(kinds, gatewayv1.RouteGroupKind{Group: &group, Kind: k})
		}
		return kinds, false
	}
	for _, k := range l.AllowedRoutes.Kinds {
		if (k.Group == nil || *k.Group == group) && slices.Contains(takes, k.Kind) {
			kinds = append(kinds, gatewayv1.RouteGroupKind{Group: &group, Kind: k.Kind})
		} else {
			invalid = true
		}
	}
	return kinds, invalid
}

// allowsKind tells whether l takes routes of kind (of the Gateway API
// group).
func (l *listener) allowsKind(kind gatewayv1.Kind) bool {
	kinds, _ := Kinds(l.spec)
	return slices.ContainsFunc(kinds, func(k gatewayv1.RouteGroupKind) bool { return k.Kind == kind })
}
