package review

import (
	"errors"
	"strings"
	"testing"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/tools/record"

	"github.com/example/cloud-provider-example/annotations"
	"github.com/example/cloud-provider-example/engine"
)

// TestReportMembers: each member is told what became of it in its group's
// rendering, on its own Service, once per change of what is said.
func TestReportMembers(t *testing.T) {
	f := newReviewFixture(t, "", false)
	svc := func(name string) *v1.Service {
		return &v1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: name}}
	}
	a, b, c := svc("a"), svc("b"), svc("c")
	g := annotations.Group{Namespace: "shop", Name: "front"}
	rep := &engine.GroupReport{
		Members:   []*v1.Service{a, b},
		Excluded:  []engine.MemberError{{Service: c, Err: &annotations.Error{Annotation: annotations.LBName, Value: "x", Reason: "is not a name"}}},
		Conflicts: []engine.ListenerConflict{{Service: b, Listener: "tcp/80", Winner: a}},
		Ignored:   []engine.IgnoredSetting{{Service: b, Setting: string(annotations.LBInternal), Primary: a, PrimaryValue: "true"}},
	}
	f.ReportMembers(g, rep)
	checkEvents(t, f.takeEvents(), []wantEvent{
		{typ: "Warning", reason: "InvalidService", has: []string{"Service shop/c is left out of load balancer group shop/front: "}},
		{typ: "Warning", reason: "ListenerConflict", has: []string{"Listener tcp/80 is not served: Service shop/a, an earlier member of load balancer group shop/front, has it"}},
		{typ: "Warning", reason: "GroupSettingIgnored", has: []string{
			"loadbalancer.example.com/internal is unset here, but load balancer group shop/front takes it from its first member, Service shop/a (true)"}},
	})
	f.ReportMembers(g, rep)
	if evs := f.takeEvents(); len(evs) != 0 {
		t.Errorf("the same report said again:\n%s", eventsText(evs))
	}
	rep.Conflicts = nil
	f.ReportMembers(g, rep)
	checkEvents(t, f.takeEvents(), []wantEvent{{typ: "Warning", reason: "InvalidService"}, {typ: "Warning", reason: "GroupSettingIgnored"}})
	// Another group's members are told on their own.
	f.ReportMembers(annotations.Group{Namespace: "shop", Name: "back"}, rep)
	if evs := f.takeEvents(); len(evs) != 2 {
		t.Errorf("another group's report: %s", eventsText(evs))
	}
}

// A member of another namespace (a guest, or the owner seen from a
// guest) is named by its namespace only.
func TestReportMembersAcrossNamespaces(t *testing.T) {
	f := newReviewFixture(t, "", false)
	owner := &v1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: "team-a", Name: "web"}}
	guest := &v1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: "team-b", Name: "api"}}
	f.ReportMembers(annotations.Group{Namespace: "team-a", Name: "front"}, &engine.GroupReport{
		Members:   []*v1.Service{owner, guest},
		Conflicts: []engine.ListenerConflict{{Service: guest, Listener: "tcp/80", Winner: owner}},
		Ignored:   []engine.IgnoredSetting{{Service: guest, Setting: string(annotations.LBInternal), Primary: owner, PrimaryValue: "true"}},
	})
	evs := f.takeEvents()
	checkEvents(t, evs, []wantEvent{
		{typ: "Warning", reason: "ListenerConflict", has: []string{"Listener tcp/80 is not served: a Service of namespace team-a, an earlier member"}},
		{typ: "Warning", reason: "GroupSettingIgnored", has: []string{"takes it from its first member, a Service of namespace team-a (true)"}},
	})
	if text := eventsText(evs); strings.Contains(text, "team-a/web") {
		t.Errorf("a guest's events name the owner's Service:\n%s", text)
	}
}

// A guest whose consent is gone is told in its own namespace, in the
// words of a refusal; the owner names it by its namespace only.
func TestConsentWithdrawn(t *testing.T) {
	f := newReviewFixture(t, "", false)
	owner := &v1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: "team-a", Name: "web"}}
	guest := &v1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: "team-b", Name: "api"}}
	f.ConsentWithdrawn(annotations.Group{Namespace: "team-a", Name: "front"}, owner, guest, "namespace team-a has no ReferenceGrant")
	evs := f.takeEvents()
	checkEvents(t, evs, []wantEvent{
		{typ: "Warning", reason: "ReferenceGrantWithdrawn", has: []string{
			`annotation loadbalancer.example.com/group: load balancer group "front" of namespace team-a no longer takes this Service: namespace team-a has no ReferenceGrant`}},
		{typ: "Normal", reason: "ReferenceGrantWithdrawn", has: []string{
			"Load balancer group team-a/front no longer serves a Service of namespace team-b, a guest: namespace team-a has no ReferenceGrant"}},
	})
	if text := eventsText(evs); strings.Contains(text, "team-b/api") || strings.Contains(text, "team-a/web") {
		t.Errorf("an event names another tenant's Service:\n%s", text)
	}
}

// memberReports.changed tells a change once.
func TestMemberReportsChanged(t *testing.T) {
	var m memberReports
	front := annotations.Group{Namespace: "shop", Name: "front"}
	if !m.changed(front, "x") || m.changed(front, "x") || !m.changed(front, "y") {
		t.Error("changed does not tell a change once")
	}
}

// namedEvents records events with the name of their object.
type namedEvents struct {
	record.FakeRecorder
	got []namedEvent
}

type namedEvent struct{ object, reason, message string }

func (r *namedEvents) Event(obj runtime.Object, _, reason, message string) {
	m, _ := meta.Accessor(obj)
	r.got = append(r.got, namedEvent{m.GetNamespace() + "/" + m.GetName(), reason, message})
}

// A guest's reconcile that converges its group: the group's failure is
// its owners' (on the home member that sets the load balancer, with the
// error); the guest is told only that the group failed, naming nothing
// of the owner's but the namespace its group is in.
func TestGuestSeesOnlyThatItsGroupFailed(t *testing.T) {
	f := newReviewFixture(t, "", false)
	rec := &namedEvents{}
	f.recorder = rec
	owner := &v1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: "team-a", Name: "web"}}
	guest := &v1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: "team-b", Name: "api"}}
	g := annotations.Group{Namespace: "team-a", Name: "front"}
	s := f.GroupSubject(t.Context(), g, "", []*v1.Service{owner, guest}, guest, "change")
	f.Failed(s, errors.New("Certificate of another owner: cert-1 of team-a/web"))
	if len(rec.got) != 2 {
		t.Fatalf("events: %+v", rec.got)
	}
	for _, ev := range rec.got {
		switch {
		case ev.reason == "GroupFailed" && ev.object == "team-b/api":
			if strings.Contains(ev.message, "cert-1") || strings.Contains(ev.message, "team-a/web") || !strings.Contains(ev.message, "load balancer group team-a/front could not be converged") {
				t.Errorf("the guest is told %q", ev.message)
			}
		case ev.reason == "ReconcileFailed" && ev.object == "team-a/web":
			if !strings.Contains(ev.message, "cert-1") {
				t.Errorf("the owner is not told why: %q", ev.message)
			}
		default:
			t.Errorf("unexpected event %s on %s: %s", ev.reason, ev.object, ev.message)
		}
	}
	// A home member's reconcile: its own event, as before.
	rec.got = nil
	f.Failed(f.GroupSubject(t.Context(), g, "", []*v1.Service{owner, guest}, owner, "change"), errors.New("boom"))
	if len(rec.got) != 1 || rec.got[0].object != "team-a/web" {
		t.Errorf("a home member's failure: %+v", rec.got)
	}
}
