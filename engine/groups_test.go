package engine_test

import (
	"os"
	"slices"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/example/cloud-provider-example/annotations"
	"github.com/example/cloud-provider-example/engine"
	"github.com/example/cloud-provider-example/exampleapi"
	"github.com/example/cloud-provider-example/internal/testkit"
	"github.com/example/cloud-provider-example/lbmodel"
	"github.com/example/cloud-provider-example/objectref"
	"github.com/example/cloud-provider-example/renderer"
	"github.com/example/cloud-provider-example/simulator/simtest"
)

// member is a Service of group default/shop created minute minutes in.
func member(name string, minute int, ports ...int32) *corev1.Service {
	svc := service(name, ports...)
	svc.CreationTimestamp = metav1.NewTime(time.Date(2025, 1, 1, 0, minute, 0, 0, time.UTC))
	svc.Annotations = map[string]string{string(annotations.LBGroup): "shop"}
	return svc
}

func group(members ...*corev1.Service) lbmodel.Group {
	return lbmodel.Group{Namespace: "default", Name: "shop", Members: members}
}

// listeners reads load balancer id from the cloud: its listeners as
// simtest.Listeners has them.
func (f *fixture) listeners(t *testing.T, id string) []string {
	t.Helper()
	lb, err := f.api.GetLoadBalancer(testkit.Context(t), id)
	if err != nil {
		t.Fatal(err)
	}
	return simtest.Listeners(lb)
}

// Three Services join one group, conflict over a port and leave; the load
// balancer stays the same one throughout, and the last member leaving
// destroys it (a destroy held for approval like a Service's).
func TestGroupLifecycle(t *testing.T) {
	f := newFixture(t, 2)
	nodes := []*corev1.Node{f.node(t, "node-a")}
	a, b, c := member("a", 0, 80), member("b", 1, 80, 8080), member("c", 2)
	c.Spec.Ports = []corev1.ServicePort{{Name: "dns", Protocol: corev1.ProtocolUDP, Port: 53, NodePort: 30053}}
	b.Spec.Ports[0].NodePort = 31080

	// The first member creates it.
	lb, rep, out, err := f.eng.ReconcileGroup(testkit.Context(t), group(a), nodes, "", auto)
	if err != nil || lb == nil || lb.Status != "active" || out.Applied == nil || out.Applied.Summary.Add != 1 || len(rep.Members) != 1 {
		t.Fatalf("first member: %+v %+v %+v %v", lb, rep, out, err)
	}
	cloud, err := f.api.GetLoadBalancer(testkit.Context(t), lb.ID)
	testkit.Must(t, err)
	if cloud.Name != renderer.GroupLoadBalancerName("test", "default", "shop") || cloud.Tags[lbmodel.TagServiceUID] != "group:default/shop" ||
		cloud.Tags[renderer.TagServiceGroup] != "shop" {
		t.Fatalf("cloud load balancer %+v", cloud)
	}

	// b joins, wanting a's port 80: a keeps it, b gets 8080, and the
	// report names the conflict.
	lb2, rep, out, err := f.eng.ReconcileGroup(testkit.Context(t), group(a, b), nodes, "", auto)
	if err != nil || lb2.ID != lb.ID || out.Applied == nil || out.Applied.Summary.Change != 1 {
		t.Fatalf("b joins: %+v %+v %v", lb2, out, err)
	}
	if len(rep.Conflicts) != 1 || rep.Conflicts[0].Service != b || rep.Conflicts[0].Winner != a || rep.Conflicts[0].Listener != "tcp/80" {
		t.Fatalf("conflicts %+v", rep.Conflicts)
	}
	if got, want := f.listeners(t, lb.ID), []string{"tcp/80->30080", "tcp/8080->38080"}; !slices.Equal(got, want) {
		t.Fatalf("listeners %v, want %v", got, want)
	}

	// c joins; the same members in another order are then a fast path,
	// report included.
	if _, _, _, err = f.eng.ReconcileGroup(testkit.Context(t), group(a, b, c), nodes, "", auto); err != nil {
		t.Fatal(err)
	}
	procs := total(f.eng.Runner().Processes())
	lb3, rep, out, err := f.eng.ReconcileGroup(testkit.Context(t), group(c, a, b), nodes, "", auto)
	if err != nil || lb3.ID != lb.ID || !out.Result.FastPath || len(rep.Conflicts) != 1 || len(rep.Members) != 3 {
		t.Fatalf("unchanged members: %+v %+v %v", out, rep, err)
	}
	if total(f.eng.Runner().Processes()) != procs {
		t.Fatal("an unchanged group started terraform")
	}
	if got, want := f.listeners(t, lb.ID), []string{"tcp/80->30080", "tcp/8080->38080", "udp/53->30053"}; !slices.Equal(got, want) {
		t.Fatalf("listeners %v, want %v", got, want)
	}
	known := f.eng.Known()
	if len(known) != 1 || known[0].Group == nil || len(known[0].Group.Members) != 3 || known[0].Ref != objectref.Group("default", "shop") {
		t.Fatalf("known %+v", known)
	}

	// a leaves: its port 80 goes to b, in place.
	lb4, rep, out, err := f.eng.ReconcileGroup(testkit.Context(t), group(b, c), nodes, "", auto)
	if err != nil || lb4.ID != lb.ID || out.Applied == nil || len(rep.Conflicts) != 0 {
		t.Fatalf("a leaves: %+v %+v %v", out, rep, err)
	}
	if got, want := f.listeners(t, lb.ID), []string{"tcp/80->31080", "tcp/8080->38080", "udp/53->30053"}; !slices.Equal(got, want) {
		t.Fatalf("b's port 80: listeners %v, want %v", got, want)
	}
	got, exists, err := f.eng.GetGroupLoadBalancer(testkit.Context(t), group())
	if err != nil || !exists || got.IPv4 != lb.IPv4 {
		t.Fatalf("get: %+v %v %v", got, exists, err)
	}

	// The last members leave: the destroy waits for approval, then goes.
	out, err = f.eng.RemoveGroup(testkit.Context(t), group(b, c), reviewed(annotations.ApplyManual))
	id := awaiting(t, err)
	if !out.Awaiting.Destroy || f.countLBs(t) != 1 {
		t.Fatalf("held destroy: %+v", out)
	}
	if out, err = f.eng.RemoveGroup(testkit.Context(t), group(b, c), reviewed(annotations.ApplyManual, id)); err != nil || out.Applied == nil {
		t.Fatalf("approved destroy: %+v %v", out, err)
	}
	if _, err := f.api.GetLoadBalancer(testkit.Context(t), lb.ID); !exampleapi.IsNotFound(err) {
		t.Fatalf("the group's load balancer survived its last member: %v", err)
	}
	if entries, _ := os.ReadDir(f.stateDir); len(entries) != 0 {
		t.Fatalf("state left after the group went: %v", entries)
	}
	if _, exists, err := f.eng.GetGroupLoadBalancer(testkit.Context(t), group()); err != nil || exists {
		t.Fatalf("get after destroy: %v %v", exists, err)
	}

	// A Service joining again creates it again (no tombstone for groups).
	lb5, _, out, err := f.eng.ReconcileGroup(testkit.Context(t), group(c), nodes, "", auto)
	if err != nil || lb5 == nil || out.Applied == nil || lb5.ID == lb.ID {
		t.Fatalf("joining a destroyed group: %+v %+v %v", lb5, out, err)
	}
}

// A restarted controller answers an unchanged group from its record
// without terraform, and destroys it (its last member gone) from the
// leaving member's rendering, with no workspace of its own on disk.
func TestGroupRestart(t *testing.T) {
	store := newMemStore()
	f := newFixtureWith(t, 2, engine.Options{Plans: store})
	nodes := []*corev1.Node{f.node(t, "node-a")}
	a, b := member("a", 0, 80), member("b", 1, 443)
	lb, _, out, err := f.eng.ReconcileGroup(testkit.Context(t), group(a, b), nodes, "", auto)
	testkit.Must(t, err)
	store.keep(t, "", out)

	restarted := f.engine(t, 2, engine.Options{Plans: store})
	lb2, rep, out, err := restarted.ReconcileGroup(testkit.Context(t), group(b, a), nodes, "", auto)
	if err != nil || lb2.ID != lb.ID || out.Result == nil || len(rep.Members) != 2 {
		t.Fatalf("after restart: %+v %+v %v", lb2, out, err)
	}
	if n := total(restarted.Runner().Processes()); n != 0 {
		t.Fatalf("an unchanged group cost %d terraform processes after a restart", n)
	}

	again := f.engine(t, 2, engine.Options{Plans: store})
	if _, err := again.RemoveGroup(testkit.Context(t), group(a, b), auto); err != nil {
		t.Fatal(err)
	}
	if _, err := f.api.GetLoadBalancer(testkit.Context(t), lb.ID); !exampleapi.IsNotFound(err) {
		t.Fatalf("not destroyed after a restart: %v", err)
	}
}

// Removing a group that never was costs no terraform (the backend says
// there is no state).
func TestRemoveGroupNeverApplied(t *testing.T) {
	f := newFixture(t, 2)
	if _, err := f.eng.RemoveGroup(testkit.Context(t), group(), auto); err != nil {
		t.Fatal(err)
	}
	if n := total(f.eng.Runner().Processes()); n != 0 {
		t.Fatalf("%d terraform processes", n)
	}
}

// A Service whose own load balancer is released (it moved into a group)
// may have one again; one removed (deleted) may not, in this process.
func TestReleaseLeavesNoTombstone(t *testing.T) {
	f := newFixture(t, 2)
	nodes := []*corev1.Node{f.node(t, "node-a")}
	svc := service("mover", 80)
	applied(t, f.eng, svc, nodes)
	if _, err := f.eng.ReleaseLoadBalancer(testkit.Context(t), annotations.Read(svc), auto); err != nil || f.countLBs(t) != 0 {
		t.Fatalf("release: %v, %d LBs", err, f.countLBs(t))
	}
	if lb, _, err := f.eng.ReconcileLoadBalancer(testkit.Context(t), annotations.Read(svc), nodes, auto); err != nil || lb == nil {
		t.Fatalf("back to a load balancer of its own: %v", err)
	}
	if _, err := f.eng.RemoveLoadBalancer(testkit.Context(t), annotations.Read(svc), auto); err != nil {
		t.Fatal(err)
	}
	if _, _, err := f.eng.ReconcileLoadBalancer(testkit.Context(t), annotations.Read(svc), nodes, auto); err == nil || f.countLBs(t) != 0 {
		t.Fatalf("a late reconcile of a removed Service created a load balancer: %v", err)
	}
}
