package servicelb

import (
	"testing"

	v1 "k8s.io/api/core/v1"

	"github.com/example/cloud-provider-example/annotations"
	"github.com/example/cloud-provider-example/internal/testkit"
)

// EnsureLoadBalancer reads a Service's annotations once and passes them
// on: on a first reconcile, where the one other reading is the
// namespace's pool census (every Service of the namespace in the
// informer, before a new target pool), and on the next, its pool there.
// Over the fakes: what the engine reads of what it is passed is its own
// (its tests).
func TestAnnotationsReadOncePerReconcile(t *testing.T) {
	f := newFakeServices(t, "")
	svc := groupSvc("shop", "web", 0, "", 80)
	svc.Annotations = map[string]string{string(annotations.LBHealthCheckInterval): "10s"}
	testkit.Must(t, f.services.groups.services.Add(svc))
	nodes := []*v1.Node{{}}
	for _, c := range []struct {
		pass string
		want uint64
	}{{"first", 1 + 1}, {"its pool there", 1}} {
		before := annotations.Parses()
		if _, err := f.services.ensure(t.Context(), svc, nodes); err != nil {
			t.Fatalf("%s: %v", c.pass, err)
		}
		if got := annotations.Parses() - before; got != c.want {
			t.Errorf("%s reconcile: the annotations were parsed %d times, want %d", c.pass, got, c.want)
		}
	}
	if f.lbs.reconciles != 2 {
		t.Errorf("%d reconciles, want 2", f.lbs.reconciles)
	}
}
