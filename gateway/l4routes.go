package gateway

import (
	"cmp"
	"fmt"
	"slices"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/example/cloud-provider-example/objectref"
	"github.com/example/cloud-provider-example/renderer"
)

// The route kinds this front-end serves.
const (
	KindHTTPRoute gatewayv1.Kind = "HTTPRoute"
	KindTLSRoute  gatewayv1.Kind = "TLSRoute"
	KindTCPRoute  gatewayv1.Kind = "TCPRoute"
	KindUDPRoute  gatewayv1.Kind = "UDPRoute"
)

// L4Route is a TLSRoute, TCPRoute or UDPRoute as the translation reads
// it: each has one rule of weighted backends (the CRDs allow one), and a
// TLSRoute's host names are SNI names.
type L4Route struct {
	Kind gatewayv1.Kind
	metav1.ObjectMeta
	ParentRefs  []gatewayv1.ParentReference
	Hostnames   []gatewayv1.Hostname
	BackendRefs []gatewayv1.BackendRef
	Status      gatewayv1.RouteStatus
}

// Ref is the route's identity, for the references it makes (tenancy).
func (r L4Route) Ref() objectref.Ref {
	return objectref.Ref{Kind: string(r.Kind), Namespace: r.Namespace, Name: r.Name}
}

// Key is the route's key in Translation.Parents.
func (r L4Route) Key() RouteKey {
	return RouteKey{Kind: r.Kind, NamespacedName: types.NamespacedName{Namespace: r.Namespace, Name: r.Name}}
}

// TLSRoute reads r.
func TLSRoute(r *gatewayv1.TLSRoute) L4Route {
	out := L4Route{Kind: KindTLSRoute, ObjectMeta: r.ObjectMeta, ParentRefs: r.Spec.ParentRefs, Status: r.Status.RouteStatus, Hostnames: r.Spec.Hostnames}
	if len(r.Spec.Rules) > 0 {
		out.BackendRefs = r.Spec.Rules[0].BackendRefs
	}
	return out
}

// TCPRoute reads r.
func TCPRoute(r *gatewayv1.TCPRoute) L4Route {
	out := L4Route{Kind: KindTCPRoute, ObjectMeta: r.ObjectMeta, ParentRefs: r.Spec.ParentRefs, Status: r.Status.RouteStatus}
	if len(r.Spec.Rules) > 0 {
		out.BackendRefs = r.Spec.Rules[0].BackendRefs
	}
	return out
}

// UDPRoute reads r.
func UDPRoute(r *gatewayv1.UDPRoute) L4Route {
	out := L4Route{Kind: KindUDPRoute, ObjectMeta: r.ObjectMeta, ParentRefs: r.Spec.ParentRefs, Status: r.Status.RouteStatus}
	if len(r.Spec.Rules) > 0 {
		out.BackendRefs = r.Spec.Rules[0].BackendRefs
	}
	return out
}

// Translate decides gw with all its routes: HTTPRoutes as HTTP does, and
// L4 routes on TLS (passthrough), TCP and UDP listeners. A TLSRoute
// becomes one cloud rule per SNI host name on its listener's port (the
// most specific name first, then the oldest route); a TCP or UDP listener
// forwards every connection to one route, the oldest attached: a later
// one attaches (Accepted, as the Gateway API's conflict rule has it, its
// message naming the older) but gets nothing.
func Translate(gw *gatewayv1.Gateway, http []*gatewayv1.HTTPRoute, l4 []L4Route, nsLabels NamespaceLabels, backends Backends) Translation {
	t := HTTP(gw, http, nsLabels, backends)
	ls := listenersOf(gw)
	routes := slices.Clone(l4)
	slices.SortStableFunc(routes, func(a, b L4Route) int {
		return cmp.Or(a.CreationTimestamp.Compare(b.CreationTimestamp.Time),
			cmp.Compare(a.Namespace+"/"+a.Name, b.Namespace+"/"+b.Name), cmp.Compare(a.Kind, b.Kind))
	})
	taken := map[gatewayv1.SectionName]L4Route{} // TCP and UDP listeners' routes
	var sni []l4Candidate
	for _, r := range routes {
		weighted, resolved := resolveL4(r, backends)
		for _, ref := range r.ParentRefs {
			if !refersTo(gw, r.Namespace, ref) {
				continue
			}
			p := Parent{Ref: ref, Accepted: Reason{Reason: string(gatewayv1.RouteReasonAccepted)}, ResolvedRefs: resolved}
			a := attach(gw.Namespace, ls, r.Kind, r.Namespace, r.Hostnames, ref, nsLabels)
			if a.reason != "" {
				p.Accepted = Reason{Reason: string(a.reason), Message: a.message}
				t.Parents[r.Key()] = append(t.Parents[r.Key()], p)
				continue
			}
			for i, l := range a.listeners {
				t.Attached[l.spec.Name]++
				port := int(l.spec.Port)
				if r.Kind != KindTLSRoute {
					if first, ok := taken[l.spec.Name]; ok {
						// Attached, as the API's conflict rule says, but the
						// older route keeps the listener.
						p.Accepted.Message = fmt.Sprintf("attached; listener %s forwards every connection to %s %s/%s, attached before (one route per %s listener)",
							l.spec.Name, first.Kind, first.Namespace, first.Name, l.spec.Protocol)
						continue
					}
					taken[l.spec.Name] = r
					rule := renderer.Rule{Name: l4RuleName(r, port, ""), ListenerPort: port, Priority: 1, Backends: weighted}
					if r.Kind == KindUDPRoute {
						rule.ListenerProtocol = "udp"
					}
					t.Rules = append(t.Rules, rule)
					continue
				}
				for _, h := range a.hostnames[i] {
					sni = append(sni, l4Candidate{route: r, rule: renderer.Rule{Name: l4RuleName(r, port, h), ListenerPort: port,
						Hostname: h, Backends: weighted}})
				}
			}
			t.Parents[r.Key()] = append(t.Parents[r.Key()], p)
		}
	}
	// The most specific SNI name first; the routes are oldest first
	// already (a stable sort keeps that order among equals).
	slices.SortStableFunc(sni, func(a, b l4Candidate) int {
		return cmp.Or(cmp.Compare(a.rule.ListenerPort, b.rule.ListenerPort), compareHosts(a.rule.Hostname, b.rule.Hostname))
	})
	seen := map[string]bool{}
	next := map[int]int{}
	for _, c := range sni {
		if seen[c.rule.Name] {
			continue
		}
		seen[c.rule.Name] = true
		next[c.rule.ListenerPort]++
		c.rule.Priority = next[c.rule.ListenerPort]
		t.Rules = append(t.Rules, c.rule)
	}
	slices.SortStableFunc(t.Rules, func(a, b renderer.Rule) int {
		return cmp.Or(cmp.Compare(a.ListenerPort, b.ListenerPort), cmp.Compare(a.ListenerProtocol, b.ListenerProtocol))
	})
	return t
}

// l4Candidate is a TLSRoute's cloud rule before its priority.
type l4Candidate struct {
	route L4Route
	rule  renderer.Rule
}

// resolveL4 resolves an L4 route's backendRefs: those that resolve, with
// their weights (1 by default), and its ResolvedRefs.
func resolveL4(r L4Route, backends Backends) ([]Backend, Reason) {
	var out []Backend
	resolved := Reason{Reason: string(gatewayv1.RouteReasonResolvedRefs)}
	for _, ref := range r.BackendRefs {
		if b, ok := resolveRef(r.Ref(), ref, backends, &resolved); ok {
			out = append(out, b)
		}
	}
	return out, resolved
}

// l4RuleName names an L4 route's cloud rule after the route, its kind,
// port and SNI host name (none for TCP and UDP).
func l4RuleName(r L4Route, port int, host string) string {
	name := fmt.Sprintf("%s/%s/%s:%d", r.Namespace, r.Name, r.Kind, port)
	if host != "" {
		name += "@" + host
	}
	return shorten(name)
}
