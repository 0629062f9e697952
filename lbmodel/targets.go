package lbmodel

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/example/cloud-provider-example/exampleapi"
	"github.com/example/cloud-provider-example/providerid"
)

// What a load balancer forwards to, in one place: a rule's Backend, a
// target Pool and the NodeInstances it is made of (the nodes a selection
// picks: PickNodes, InstanceIDs). A new kind of target is taught here.

// Backend is where a rule forwards: a target pool, on Port of its
// targets (a Service's node port), with Weight; or, with Pods, a
// Service port's pods directly, through its pod pool (Port 0).
type Backend struct {
	TargetPoolID string `json:"targetPoolID,omitempty"`
	Port         int    `json:"port"`
	Weight       int    `json:"weight"`
	// Pods is the Service port whose pods the backend forwards to
	// (docs/adr/0024-pod-targets.md); the front-end sets TargetPoolID to
	// its pod pool's id.
	Pods *ServicePort `json:"pods,omitempty"`
	// Protocol is how the load balancer speaks to it, one of
	// exampleapi.BackendProtocols ("" is HTTP/1.1): h2c for a Service
	// port of appProtocol kubernetes.io/h2c.
	Protocol string `json:"protocol,omitempty"`
	// TLS, when set, re-encrypts to it, verifying its certificate (a
	// BackendTLSPolicy of the Service port).
	TLS *exampleapi.BackendTLS `json:"tls,omitempty"`
	// Closed says why it gets no requests although it resolves: its
	// BackendTLSPolicy does not (TLS fails closed, never cleartext).
	Closed string `json:"closed,omitempty"`
}

// Reaches tells whether the backend gets requests: a node port, or a
// Service port's pods.
func (b Backend) Reaches() bool { return b.Port != 0 || b.Pods != nil }

// Forwards tells whether the cloud gets the backend: it reaches
// something and is not closed.
func (b Backend) Forwards() bool { return b.Reaches() && b.Closed == "" }

// Same tells whether b and o are one backend to the cloud (which refuses
// one twice in a rule): the same pool on the same port, or the same
// Service port's pods.
func (b Backend) Same(o Backend) bool {
	if b.Pods != nil || o.Pods != nil {
		return b.Pods != nil && o.Pods != nil && *b.Pods == *o.Pods
	}
	return b.Port == o.Port && b.TargetPoolID == o.TargetPoolID
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

// ExcludeLabel keeps a node out of every load balancer (see Excluded).
const ExcludeLabel = corev1.LabelNodeExcludeBalancers

// Excluded says whether node's ExcludeLabel keeps it out, by the service
// controller's rule (k8s.io/cloud-provider since v0.34): a value that parses as
// false includes it, any other value excludes it.
func Excluded(node *corev1.Node) bool {
	v, ok := node.Labels[ExcludeLabel]
	if !ok {
		return false
	}
	b, err := strconv.ParseBool(v)
	return err != nil || b
}

// InstanceIDs are the instances of picked nodes less the excluded ones,
// sorted, with warnings (one more when none is left).
func InstanceIDs(picked []NodeInstance, warnings []string) ([]string, []string) {
	var ids []string
	for _, p := range picked {
		if !Excluded(p.Node) {
			ids = append(ids, p.ID)
		}
	}
	slices.Sort(ids)
	if len(ids) == 0 {
		warnings = append(warnings, "no node qualifies as a target: the load balancer will have no targets")
	}
	return ids, warnings
}

// PickNodes are the nodes selector picks (nil: every node) with their
// instances, by node name, excluded ones too. Nodes without a usable
// providerID are skipped with a warning: one broken node must not block
// the Service's load balancer.
func PickNodes(nodes []*corev1.Node, selector labels.Selector, region string) ([]NodeInstance, []string) {
	sorted := slices.Clone(nodes)
	sorted = slices.DeleteFunc(sorted, func(n *corev1.Node) bool { return n == nil })
	slices.SortFunc(sorted, func(a, b *corev1.Node) int { return strings.Compare(a.Name, b.Name) })

	var picked []NodeInstance
	var warnings []string
	owner := map[string]string{}
	for _, n := range sorted {
		if selector != nil && !selector.Matches(labels.Set(n.Labels)) {
			continue
		}
		if n.Spec.ProviderID == "" {
			warnings = append(warnings, fmt.Sprintf("node %q skipped: no spec.providerID yet", n.Name))
			continue
		}
		id, err := providerid.Parse(n.Spec.ProviderID)
		switch {
		case err != nil:
			warnings = append(warnings, fmt.Sprintf("node %q skipped: %v", n.Name, err))
			continue
		case id.Region != region:
			warnings = append(warnings, fmt.Sprintf("node %q skipped: in region %q, the load balancer is in %q", n.Name, id.Region, region))
			continue
		}
		if other, dup := owner[id.InstanceID]; dup {
			warnings = append(warnings, fmt.Sprintf("node %q skipped: instance %s is already node %q", n.Name, id.InstanceID, other))
			continue
		}
		owner[id.InstanceID] = n.Name
		picked = append(picked, NodeInstance{Node: n, ID: id.InstanceID})
	}
	return picked, warnings
}
