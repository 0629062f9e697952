package gateway

import (
	"fmt"
	"slices"

	"k8s.io/apimachinery/pkg/types"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"
)

// listener is one Gateway listener's part in the translation.
type listener struct {
	spec gatewayv1.Listener
	// id names it among the Gateway's listeners: its name, or a
	// ListenerSet's listener's ListenerID; set is that ListenerSet (nil
	// for the Gateway's own).
	id  gatewayv1.SectionName
	set *types.NamespacedName
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
		out[i] = &listener{spec: l, id: l.Name}
		out[i].refused, out[i].message = unsupportedSetting(l)
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
			case a.spec.Protocol == b.spec.Protocol && hostless(a.spec.Protocol) && a.refused == "":
				// A TCP or UDP connection carries no host name to tell them apart.
				a.refused = gatewayv1.ListenerReasonHostnameConflict
				a.message = fmt.Sprintf("listener %s has the same port and protocol, and %s connections carry no host name", b.spec.Name, a.spec.Protocol)
			}
		}
	}
	return out
}

// unsupportedSetting is why the cloud cannot serve listener l ("" when
// it can): its protocol, or a TLS mode its protocol does not take.
func unsupportedSetting(l gatewayv1.Listener) (gatewayv1.ListenerConditionReason, string) {
	switch mode := tlsMode(l); {
	case !supported(l.Protocol):
		return gatewayv1.ListenerReasonUnsupportedProtocol, fmt.Sprintf("protocol %s is not supported (supported: HTTP, HTTPS, TLS, TCP, UDP)", l.Protocol)
	case l.Protocol == gatewayv1.TLSProtocolType && mode != gatewayv1.TLSModePassthrough:
		return gatewayv1.ListenerReasonUnsupportedValue, fmt.Sprintf("a TLS listener passes TLS through (tls.mode Passthrough); %s is not supported: terminate TLS on an HTTPS listener", mode)
	case l.Protocol == gatewayv1.HTTPSProtocolType && mode != gatewayv1.TLSModeTerminate:
		return gatewayv1.ListenerReasonUnsupportedValue, fmt.Sprintf("an HTTPS listener terminates TLS; tls.mode %s is for TLS listeners", mode)
	}
	return "", ""
}

func supported(p gatewayv1.ProtocolType) bool { return slices.Contains(supportedProtocols, p) }

// hostless tells whether listeners of protocol p see no host name.
func hostless(p gatewayv1.ProtocolType) bool {
	return p == gatewayv1.TCPProtocolType || p == gatewayv1.UDPProtocolType
}

// tlsMode is a listener's tls.mode: Terminate when unset, as the API
// defaults it.
func tlsMode(l gatewayv1.Listener) gatewayv1.TLSModeType {
	if l.TLS == nil || l.TLS.Mode == nil {
		return gatewayv1.TLSModeTerminate
	}
	return *l.TLS.Mode
}

// transport is the cloud's port space a protocol uses.
func transport(p gatewayv1.ProtocolType) string {
	if p == gatewayv1.UDPProtocolType {
		return "udp"
	}
	return "tcp"
}

// routeKinds are the route kinds a listener of protocol p takes.
func routeKinds(p gatewayv1.ProtocolType) []gatewayv1.Kind {
	switch p {
	case gatewayv1.HTTPProtocolType, gatewayv1.HTTPSProtocolType:
		return []gatewayv1.Kind{KindHTTPRoute, KindGRPCRoute}
	case gatewayv1.TLSProtocolType:
		return []gatewayv1.Kind{KindTLSRoute}
	case gatewayv1.TCPProtocolType:
		return []gatewayv1.Kind{KindTCPRoute}
	case gatewayv1.UDPProtocolType:
		return []gatewayv1.Kind{KindUDPRoute}
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
