package lbmodel

import (
	corev1 "k8s.io/api/core/v1"
)

// Group is a load balancer group: Services sharing one load balancer
// (docs/shared-load-balancers.md). Its Services are the description:
// rendering decides each member's listeners and reports what it left out.
type Group struct {
	Namespace, Name string
	// Members in any order: rendering orders them (renderer.SortMembers).
	Members []*corev1.Service
}

// String is "namespace/name".
func (g Group) String() string { return g.Namespace + "/" + g.Name }
