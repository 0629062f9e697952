package servicelb

import (
	"testing"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/example/cloud-provider-example/annotations"
	"github.com/example/cloud-provider-example/exampleapi"
)

// The address keeper leaves an address where it is while the Service
// holding it hands its load balancer over: retained, and no longer
// needing one.
func TestHandingOver(t *testing.T) {
	now := metav1.Now()
	retain := map[string]string{string(annotations.LBDeletionPolicy): annotations.DeletionRetain}
	for _, c := range []struct {
		name    string
		ann     map[string]string
		typ     v1.ServiceType
		deleted bool
		want    bool
	}{
		{"retained, deleted", retain, v1.ServiceTypeLoadBalancer, true, true},
		{"retained, type changed", retain, v1.ServiceTypeNodePort, false, true},
		{"retained, still a load balancer", retain, v1.ServiceTypeLoadBalancer, false, false},
		{"deleted without retain", nil, v1.ServiceTypeLoadBalancer, true, false},
	} {
		svc := &v1.Service{ObjectMeta: metav1.ObjectMeta{Name: "s", Namespace: "n", Annotations: c.ann}, Spec: v1.ServiceSpec{Type: c.typ}}
		if c.deleted {
			svc.DeletionTimestamp = &now
		}
		if got := handingOver(annotations.Read(svc)); got != c.want {
			t.Errorf("%s: handingOver = %v, want %v", c.name, got, c.want)
		}
	}
	if handingOver(nil) {
		t.Error("no Service is handing over")
	}
}

// Only an address of the Service's own namespace goes with its load
// balancer: one of another namespace, held through that namespace's
// ReferenceGrant, keeps its owner's workspace (not forgotten), and the
// keeper gives it back rather than leaving it on the handed-over load
// balancer.
func TestHandsOverOnlyItsNamespacesAddress(t *testing.T) {
	now := metav1.Now()
	holder := annotations.Read(&v1.Service{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "team-b", DeletionTimestamp: &now,
		Annotations: map[string]string{string(annotations.LBDeletionPolicy): annotations.DeletionRetain}}, Spec: v1.ServiceSpec{Type: v1.ServiceTypeLoadBalancer}})
	if !handsOver(holder, "team-b") || handsOver(holder, "team-a") || handsOver(nil, "team-b") {
		t.Error("handsOver: want the holder's own namespace's address only, and nothing without a holder")
	}
	addr := func(lbID, cluster, ns string) exampleapi.Address {
		return exampleapi.Address{ObjectMeta: exampleapi.ObjectMeta{ID: "addr-1", Name: "k8s-a-1"}, LoadBalancerID: lbID,
			Tags: map[string]string{exampleapi.TagClusterID: cluster, exampleapi.TagNamespace: ns}}
	}
	for _, c := range []struct {
		name string
		a    exampleapi.Address
		want bool
	}{
		{"its namespace's, on its load balancer", addr("lb-1", "c1", "team-b"), true},
		{"another namespace's, granted", addr("lb-1", "c1", "team-a"), false},
		{"another cluster's", addr("lb-1", "c2", "team-b"), false},
		{"on another load balancer", addr("lb-2", "c1", "team-b"), false},
		{"untagged", exampleapi.Address{ObjectMeta: exampleapi.ObjectMeta{ID: "addr-1"}, LoadBalancerID: "lb-1"}, false},
	} {
		if got := goesWith(c.a, "lb-1", "c1", "team-b"); got != c.want {
			t.Errorf("%s: goesWith = %v, want %v", c.name, got, c.want)
		}
	}
}
