package deregistration

import (
	"slices"

	corev1 "k8s.io/api/core/v1"
	cloudproviderapi "k8s.io/cloud-provider/api"
	servicecontroller "k8s.io/cloud-provider/controllers/service"

	"github.com/example/cloud-provider-example/renderer"
)

// Why a node leaves the target pools.
const (
	// ReasonDeleted: the Node is being deleted (a deletion timestamp). A
	// Node already gone is simply not a target any more.
	ReasonDeleted = "node deleted"
	// ReasonExcluded: node.kubernetes.io/exclude-from-external-load-balancers.
	ReasonExcluded = "exclude label"
	// ReasonAutoscaler: the cluster autoscaler's ToBeDeletedByClusterAutoscaler taint.
	ReasonAutoscaler = "autoscaler deletion taint"
	// ReasonShutdown: the cloud node lifecycle controller's shutdown taint.
	ReasonShutdown = "shutdown taint"
	// ReasonDrain: unschedulable, with a drain taint saying a drain is
	// under way (a cordon alone is maintenance, and keeps serving).
	ReasonDrain = "drain under way"
)

// DrainTaint is the taint a drain adds, with a cordon, to take a node out
// of the load balancers before its pods go (loadBalancer.targetPools.drainTaints).
const DrainTaint = "node.example.com/draining"

// DefaultDrainTaints are the drain taints unless configured: ours, and
// Karpenter's, which it sets on a node it is about to disrupt.
var DefaultDrainTaints = []string{DrainTaint, "karpenter.sh/disrupted"}

// Reason says why n leaves the target pools; "" when it stays. A drain
// taint counts on an unschedulable node: spec.unschedulable (a cordon),
// or the taint itself with effect NoSchedule or NoExecute.
func Reason(n *corev1.Node, drainTaints []string) string {
	if !n.DeletionTimestamp.IsZero() {
		return ReasonDeleted
	}
	if renderer.Excluded(n) {
		return ReasonExcluded
	}
	for _, t := range n.Spec.Taints {
		switch t.Key {
		case servicecontroller.ToBeDeletedTaint:
			return ReasonAutoscaler
		case cloudproviderapi.TaintNodeShutdown:
			return ReasonShutdown
		}
	}
	for _, t := range n.Spec.Taints {
		if slices.Contains(drainTaints, t.Key) && (n.Spec.Unschedulable || t.Effect == corev1.TaintEffectNoSchedule || t.Effect == corev1.TaintEffectNoExecute) {
			return ReasonDrain
		}
	}
	return ""
}

// Ready tells whether n's Ready condition is true: a healthy target, for
// the floor.
func Ready(n *corev1.Node) bool {
	for _, c := range n.Status.Conditions {
		if c.Type == corev1.NodeReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}
