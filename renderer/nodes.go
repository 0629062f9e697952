package renderer

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/example/cloud-provider-example/lbmodel"
	"github.com/example/cloud-provider-example/providerid"
)

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

// targets picks the instance ids of the nodes the load balancer forwards
// to, sorted: those picked, less the excluded.
func targets(nodes []*corev1.Node, selector labels.Selector, region string) ([]string, []string) {
	return targetIDs(pick(nodes, selector, region))
}

// targetIDs are the instances of picked nodes less the excluded ones,
// sorted, with warnings (one more when none is left).
func targetIDs(picked []lbmodel.NodeInstance, warnings []string) ([]string, []string) {
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

// pick are the nodes selector picks (nil: every node) with their
// instances, by node name, excluded ones too. Nodes without a usable
// providerID are skipped with a warning: one broken node must not block
// the Service's load balancer.
func pick(nodes []*corev1.Node, selector labels.Selector, region string) ([]lbmodel.NodeInstance, []string) {
	sorted := slices.Clone(nodes)
	sorted = slices.DeleteFunc(sorted, func(n *corev1.Node) bool { return n == nil })
	slices.SortFunc(sorted, func(a, b *corev1.Node) int { return strings.Compare(a.Name, b.Name) })

	var picked []lbmodel.NodeInstance
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
		picked = append(picked, lbmodel.NodeInstance{Node: n, ID: id.InstanceID})
	}
	return picked, warnings
}
