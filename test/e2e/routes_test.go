package e2e

import (
	"fmt"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/example/cloud-provider-example/internal/testkit"
)

// Node pod CIDRs become routes to their instances, and go with the node.
func TestRoutesFollowNodes(t *testing.T) {
	t.Parallel()
	e := newEnv(t, options{})
	e.addNode("node-a", "ex-west-1a", "10.244.1.0/24", "fd00:244:0:1::/64")
	e.addNode("node-b", "ex-west-1b", "10.244.2.0/24")
	nets, err := e.api.ListNetworks(testkit.Context(t), region, "default")
	if err != nil || len(nets) != 1 {
		t.Fatalf("network: %v %v", nets, err)
	}
	routes := func() (map[string]string, error) {
		l, err := e.api.ListRoutes(testkit.Context(t), nets[0].ID)
		if err != nil {
			return nil, err
		}
		m := map[string]string{}
		for _, r := range l {
			m[r.DestinationCIDR] = r.TargetInstanceID
		}
		return m, nil
	}
	a, b := e.instance("node-a").ID, e.instance("node-b").ID
	testkit.Eventually(t, 60*time.Second, "routes for both nodes", func() error {
		m, err := routes()
		if err != nil {
			return err
		}
		want := map[string]string{"10.244.1.0/24": a, "fd00:244:0:1::/64": a, "10.244.2.0/24": b}
		for d, id := range want {
			if m[d] != id {
				return fmt.Errorf("routes %v, want %v", m, want)
			}
		}
		return nil
	})
	testkit.Must(t, e.kube.CoreV1().Nodes().Delete(testkit.Context(t), "node-b", metav1.DeleteOptions{}))
	testkit.Eventually(t, 60*time.Second, "node-b's route removed", func() error {
		m, err := routes()
		if err != nil {
			return err
		}
		if _, ok := m["10.244.2.0/24"]; ok || len(m) != 2 {
			return fmt.Errorf("routes %v", m)
		}
		return nil
	})
}
