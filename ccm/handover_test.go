package ccm

import (
	"testing"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/example/cloud-provider-example/annotations"
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
