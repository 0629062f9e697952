package gatewaycontroller

import (
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"
)

// A route whose status alone changed (this controller's write) does not
// queue its Gateway again; any change of its spec (a new generation), its
// labels, annotations, finalizers or deletion does.
func TestOnlyStatus(t *testing.T) {
	old := &gatewayv1.HTTPRoute{ObjectMeta: metav1.ObjectMeta{Name: "r", Generation: 3, Labels: map[string]string{"a": "1"},
		Annotations: map[string]string{"b": "2"}, Finalizers: []string{"f"}}}
	status := old.DeepCopy()
	status.Status.Parents = []gatewayv1.RouteParentStatus{{ControllerName: ControllerName}}
	if !onlyStatus(old, status) {
		t.Error("a status write: want it ignored")
	}
	now := metav1.Now()
	for name, edit := range map[string]func(r *gatewayv1.HTTPRoute){
		"spec":          func(r *gatewayv1.HTTPRoute) { r.Generation++ },
		"label":         func(r *gatewayv1.HTTPRoute) { r.Labels["a"] = "2" },
		"annotation":    func(r *gatewayv1.HTTPRoute) { r.Annotations = nil },
		"finalizers":    func(r *gatewayv1.HTTPRoute) { r.Finalizers = nil },
		"deletion":      func(r *gatewayv1.HTTPRoute) { r.DeletionTimestamp = &now },
		"no generation": func(r *gatewayv1.HTTPRoute) { r.Generation = 0 },
	} {
		cur := status.DeepCopy()
		edit(cur)
		if name == "no generation" {
			old := old.DeepCopy()
			old.Generation = 0
			if onlyStatus(old, cur) {
				t.Errorf("%s: want it looked at", name)
			}
			continue
		}
		if onlyStatus(old, cur) {
			t.Errorf("%s: want it looked at", name)
		}
	}
}
