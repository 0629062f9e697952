package servicelb

import (
	"testing"

	"github.com/example/cloud-provider-example/annotations"
)

// EnsureLoadBalancer reads a Service's annotations once and passes them
// on: on the fast path, and on a first reconcile (a plan and an apply),
// where the one other reading is the namespace's pool census (every
// Service of the namespace in the informer, before a new target pool).
func TestAnnotationsReadOncePerReconcile(t *testing.T) {
	f := newGroupFixture(t, "")
	svc := groupSvc("shop", "web", 0, "", 80)
	svc.Annotations = map[string]string{string(annotations.LBHealthCheckInterval): "10s"}
	f.put(t, svc)
	for _, c := range []struct {
		pass string
		want uint64
	}{{"first", 1 + 1}, {"fast path", 1}} {
		before := annotations.Parses()
		if _, err := f.lbs.Ensure(t.Context(), svc, f.nodes); err != nil {
			t.Fatalf("%s: %v", c.pass, err)
		}
		if got := annotations.Parses() - before; got != c.want {
			t.Errorf("%s reconcile: the annotations were parsed %d times, want %d", c.pass, got, c.want)
		}
	}
}
