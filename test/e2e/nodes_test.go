package e2e

import (
	"fmt"
	"slices"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/example/cloud-provider-example/exampleapi"
	"github.com/example/cloud-provider-example/internal/testkit"
	"github.com/example/cloud-provider-example/providerid"
)

func hasTaint(n *v1.Node, key string) bool {
	return slices.ContainsFunc(n.Spec.Taints, func(t v1.Taint) bool { return t.Key == key })
}

// Nodes are initialised from the metadata API; a stopped instance taints
// its Node, a deleted one removes it.
func TestNodeLifecycle(t *testing.T) {
	t.Parallel()
	e := newEnv(t, options{})
	e.addNode("node-a", "ex-west-1a")
	e.addNode("node-b", "ex-west-1b")
	nodes := e.kube.CoreV1().Nodes()

	for _, name := range []string{"node-a", "node-b"} {
		inst := e.instance(name)
		testkit.Eventually(t, 30*time.Second, "node "+name+" initialised", func() error {
			n, err := nodes.Get(testkit.Context(t), name, metav1.GetOptions{})
			if err != nil {
				return err
			}
			if hasTaint(n, "node.cloudprovider.kubernetes.io/uninitialized") {
				return fmt.Errorf("still tainted uninitialized")
			}
			if want := providerid.Format(region, inst.ID); n.Spec.ProviderID != want {
				return fmt.Errorf("providerID %q, want %q", n.Spec.ProviderID, want)
			}
			if n.Labels[v1.LabelTopologyZone] != inst.Zone || n.Labels[v1.LabelTopologyRegion] != region || n.Labels[v1.LabelInstanceTypeStable] != "standard-2" {
				return fmt.Errorf("labels %v", n.Labels)
			}
			if !slices.Contains(n.Status.Addresses, v1.NodeAddress{Type: v1.NodeInternalIP, Address: inst.PrivateIPv4}) {
				return fmt.Errorf("addresses %v lack InternalIP %s", n.Status.Addresses, inst.PrivateIPv4)
			}
			return nil
		})
	}

	// node-a's instance stops: the lifecycle controller taints the Node.
	if _, err := e.api.SetInstanceState(testkit.Context(t), e.instance("node-a").ID, exampleapi.InstanceStopped, 0); err != nil {
		t.Fatal(err)
	}
	testkit.Eventually(t, 30*time.Second, "shutdown taint on node-a", func() error {
		n, err := nodes.Get(testkit.Context(t), "node-a", metav1.GetOptions{})
		if err != nil {
			return err
		}
		if !hasTaint(n, "node.cloudprovider.kubernetes.io/shutdown") {
			return fmt.Errorf("taints %v", n.Spec.Taints)
		}
		return nil
	})

	// node-b's instance is deleted: its Node goes.
	if err := e.api.DeleteInstance(testkit.Context(t), e.instance("node-b").ID); err != nil {
		t.Fatal(err)
	}
	waitGone(t, 30*time.Second, "node-b", nodes.Get)
}
