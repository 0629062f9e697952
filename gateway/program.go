package gateway

import (
	"fmt"
	"slices"

	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/example/cloud-provider-example/renderer"
)

// LoadBalancer is a Gateway's load balancer as decided: its cloud
// listeners and rules, what the engine renders and applies.
type LoadBalancer = renderer.Gateway

// Rule is one of its cloud rules.
type Rule = renderer.HTTPRule

// Program is what the cloud builds of gw now: one cloud listener per port
// of its accepted HTTP listeners, with t's rules on those ports. Pending
// are the accepted listeners not built, by name, with why: the cloud
// serves HTTPS, TLS, TCP and UDP, but this version does not build them
// (docs/gateway-api.md). Err names a backend the cloud cannot reach.
func Program(gw *gatewayv1.Gateway, t Translation) (lb LoadBalancer, pending map[gatewayv1.SectionName]Reason, err error) {
	lb = LoadBalancer{Namespace: gw.Namespace, Name: gw.Name, UID: string(gw.UID)}
	pending = map[gatewayv1.SectionName]Reason{}
	var ports []int
	for _, l := range gw.Spec.Listeners {
		if _, refused := t.Refused[l.Name]; refused {
			continue
		}
		if l.Protocol != gatewayv1.HTTPProtocolType {
			pending[l.Name] = Reason{Reason: string(gatewayv1.ListenerReasonPending),
				Message: fmt.Sprintf("%s listeners are not built by this version (docs/gateway-api.md)", l.Protocol)}
			continue
		}
		if p := int(l.Port); !slices.Contains(ports, p) {
			ports = append(ports, p)
			lb.Listeners = append(lb.Listeners, renderer.GatewayListener{Protocol: "http", Port: p})
		}
	}
	for _, r := range t.Rules {
		if !slices.Contains(ports, r.ListenerPort) {
			continue
		}
		for _, b := range r.Backends {
			if b.Port == 0 {
				return LoadBalancer{}, pending, fmt.Errorf("rule %s forwards to a Service without a node port: the Example load balancer reaches Services through their node ports (type NodePort or LoadBalancer)", r.Name)
			}
		}
		lb.Rules = append(lb.Rules, r)
	}
	return lb, pending, nil
}
