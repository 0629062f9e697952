package servicemodel

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"

	"github.com/example/cloud-provider-example/annotations"
	"github.com/example/cloud-provider-example/lbmodel"
)

// Target type ip (docs/adr/0024-pod-targets.md): the load balancer has no
// targets of its own; each listener's one rule forwards whatever it gets
// to its Service port's pods, through that port's pod pool, whose id the
// engine sets once the pool exists (lbmodel.LoadBalancer.SetPodPools).

// podRules are the rules of lb's listeners for svc's pods: none for an
// http listener that redirects every request (it forwards nothing).
func podRules(svc *corev1.Service, ls []lbmodel.Listener) ([]lbmodel.Rule, error) {
	var out []lbmodel.Rule
	for _, l := range ls {
		if l.HTTPSRedirectPort != 0 {
			continue
		}
		proto, listener := corev1.ProtocolTCP, ""
		if l.Protocol == "udp" {
			proto, listener = corev1.ProtocolUDP, "udp"
		}
		port := int32(l.Port) //nolint:gosec // a Service port, 1-65535 (listeners checks it)
		r := lbmodel.Rule{
			Name:         fmt.Sprintf("pods-%d-%s", l.Port, l.Protocol),
			ListenerPort: l.Port, ListenerProtocol: listener, Priority: 1,
			Backends: []lbmodel.Backend{{Weight: 1,
				Pods: &lbmodel.ServicePort{Namespace: svc.Namespace, Service: svc.Name, Port: port, Protocol: proto}}},
		}
		if err := r.Validate(); err != nil {
			return nil, fmt.Errorf("rule of listener %s:%d: %w", l.Protocol, l.Port, err)
		}
		out = append(out, r)
	}
	return out, nil
}

// PodPorts are the Service ports in's load balancer forwards to directly,
// one per listener that forwards (target type ip; none for node): the
// pod pools it needs before it is rendered.
func PodPorts(in *annotations.Service) ([]lbmodel.ServicePort, error) {
	if in.Err != nil || !in.LB.Pods() {
		return nil, in.Err
	}
	ls, err := listeners(in.Service, in.LB)
	if err != nil {
		return nil, err
	}
	rules, err := podRules(in.Service, ls)
	if err != nil {
		return nil, err
	}
	return lbmodel.LoadBalancer{Rules: rules}.PodPorts(), nil
}
