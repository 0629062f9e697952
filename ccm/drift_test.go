package ccm

import (
	"errors"
	"testing"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/example/cloud-provider-example/annotations"
	"github.com/example/cloud-provider-example/engine"
)

// A drift check of a group runs only for the members it was planned for
// (the members come from the Services' load balancing: a func here).
func TestDriftCheckGuardsGroupMembers(t *testing.T) {
	member := func(name string, port int32) *v1.Service {
		return &v1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: name, UID: types.UID("uid-" + name[:1]),
			Annotations: map[string]string{string(annotations.LBGroup): "front"}},
			Spec: v1.ServiceSpec{Type: v1.ServiceTypeLoadBalancer, Ports: []v1.ServicePort{{Name: "p", Protocol: v1.ProtocolTCP, Port: port, NodePort: 30000 + port}}}}
	}
	a, b := member("a", 80), member("b", 81)
	front := annotations.Group{Namespace: "shop", Name: "front"}
	now := []*v1.Service{a, b}
	d := &driftWorker{members: func(g annotations.Group) []*v1.Service {
		if g != front {
			t.Fatalf("members of %v asked", g)
		}
		return now
	}}
	snap := &engine.KnownGroup{Namespace: "shop", Name: "front", Members: []*v1.Service{b, a}}
	if err := d.guardGroup(front, snap)(t.Context()); err != nil {
		t.Errorf("unchanged members: %v", err)
	}
	now = []*v1.Service{a, member("b", 8081)}
	if err := d.guardGroup(front, snap)(t.Context()); !errors.Is(err, engine.ErrSkipped) {
		t.Errorf("a member changed: %v", err)
	}
	now = []*v1.Service{a}
	if err := d.guardGroup(front, snap)(t.Context()); !errors.Is(err, engine.ErrSkipped) {
		t.Errorf("a member left: %v", err)
	}
}
