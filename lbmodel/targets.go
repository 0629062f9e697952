package lbmodel

import (
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
)

// What a load balancer forwards to, in one place: a rule's Backend, a
// target Pool and the NodeInstances it is made of. A new kind of target
// is taught here.

// Backend is where a rule forwards: a target pool, on Port of its
// targets (a Service's node port), with Weight.
type Backend struct {
	TargetPoolID string `json:"targetPoolID,omitempty"`
	Port         int    `json:"port"`
	Weight       int    `json:"weight"`
}

// MaxSelection is the longest node selection a pool can stand for: the
// cloud's limit of a tag value, where the pool names it. A longer one's
// Services list their nodes instead.
const MaxSelection = 256

// Pool is one target pool: the nodes a node selection picks.
type Pool struct {
	// Selection is the canonical node selector ("" for every node).
	Selection string
	Targets   []string
	// Delay is the pool's own deregistration delay, the longest its
	// Services ask for; nil: the cluster's.
	Delay *time.Duration
	// AskedBy names the load balancers whose applied configuration asks
	// for Delay ("Service team-a/web"): the rendered module says whose
	// value a shared pool carries.
	AskedBy []string
}

// Validate refuses a pool the cloud could not name or drain as asked.
func (p Pool) Validate() error {
	if len(p.Selection) > MaxSelection {
		return &InputError{Field: "selection", Value: p.Selection, Reason: fmt.Sprintf("is longer than %d characters", MaxSelection)}
	}
	if p.Delay != nil {
		return CheckDelay(*p.Delay)
	}
	return nil
}

// CheckDelay refuses a deregistration delay the cloud does not take.
func CheckDelay(d time.Duration) error {
	if d < 0 || d > time.Hour || d%time.Second != 0 {
		return &InputError{Field: "deregistration delay", Value: d.String(), Reason: "is not whole seconds from 0s to 1h"}
	}
	return nil
}

// NodeInstance is a node and the instance it runs on: a pool's target.
type NodeInstance struct {
	Node *corev1.Node
	ID   string
}
