package podtargets

import (
	"strings"

	corev1 "k8s.io/api/core/v1"
)

// Readiness gates (docs/adr/0024-pod-targets.md): a pod whose spec lists
// the condition GatePrefix+<Service name> is Ready only once it is a
// healthy target of every load balancer forwarding to that Service's pod
// targets, so a rollout never outruns the load balancer. Until then it is
// a target already (else it would never be one).

// GatePrefix begins this controller's readiness gates.
const GatePrefix = "target-health.loadbalancer.example.com/"

// Gate is the readiness gate that holds a pod of Service service.
func Gate(service string) corev1.PodConditionType {
	return corev1.PodConditionType(GatePrefix + service)
}

// Gated tells whether pod is not Ready only for want of this controller's
// readiness gates: its containers are ready, it is not terminating, and
// one of its gates of GatePrefix is not yet true.
func Gated(pod *corev1.Pod) bool {
	if pod.DeletionTimestamp != nil || !condition(pod, corev1.ContainersReady) {
		return false
	}
	pending := false
	for _, g := range pod.Spec.ReadinessGates {
		if !condition(pod, g.ConditionType) {
			if !strings.HasPrefix(string(g.ConditionType), GatePrefix) {
				return false // another's gate holds it too
			}
			pending = true
		}
	}
	return pending
}

// condition tells whether pod's condition typ is true.
func condition(pod *corev1.Pod, typ corev1.PodConditionType) bool {
	for _, c := range pod.Status.Conditions {
		if c.Type == typ {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}
