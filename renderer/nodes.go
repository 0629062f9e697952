package renderer

import (
	corev1 "k8s.io/api/core/v1"

	"github.com/example/cloud-provider-example/lbmodel"
)

// ExcludeLabel keeps a node out of every load balancer (see Excluded).
const ExcludeLabel = lbmodel.ExcludeLabel

// Excluded says whether node's ExcludeLabel keeps it out
// (lbmodel.Excluded).
func Excluded(node *corev1.Node) bool { return lbmodel.Excluded(node) }
