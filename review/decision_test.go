package review

import (
	"slices"
	"strings"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/example/cloud-provider-example/annotations"
	"github.com/example/cloud-provider-example/objectref"
	"github.com/example/cloud-provider-example/records"
)

// TestApplyStarting: the line written before an apply names the
// approvers, or the controller under auto.
func TestApplyStarting(t *testing.T) {
	f := newReviewFixture(t, "", false)
	p := planAt(t, "plan-aaaaaaaaaaaa", 1, time.Now())
	d := planAt(t, "plan-dddddddddddd", 0, time.Now())
	d.Destroy = true
	f.applyStarting(webSubject(records.KindChange), annotations.ApplyAuto, p, nil)
	f.applyStarting(webSubject(records.KindChange), annotations.ApplyManual, p, []string{"alice", "bob"})
	f.applyStarting(webSubject(records.KindDestroy), annotations.ApplyManual, d, []string{"alice"})
	lines, _ := f.auditLog(t)
	checkAudit(t, lines, web.String(), []wantAudit{
		{action: "apply", actor: self, outcome: "started", planID: p.ID},
		{action: "apply", actor: "alice, bob", outcome: "started", planID: p.ID},
		{action: "destroy", actor: "alice", outcome: "started", planID: d.ID},
	})
	if lines[1].Policy != "manual" || lines[1].Workspace != webWS {
		t.Errorf("line 2 = %+v; want policy manual, workspace %s", lines[1], webWS)
	}
}

// TestFor: the engine.Review of a subject shows policy rules the object
// (a group with its members), counts the approvals naming it but its
// author's, and writes the apply's first audit line.
func TestFor(t *testing.T) {
	planned := time.Now().Add(-time.Minute)
	p := planAt(t, "plan-aaaaaaaaaaaa", 1, planned)
	f := newReviewFixture(t, "", false,
		approvalObj("a", web, p.ID, "carol", planned.Add(time.Second)), approvalObj("b", web, p.ID, "alice", planned.Add(time.Second)))
	s := webSubject(records.KindChange)
	s.author = "carol"
	s.meta = metav1.ObjectMeta{Labels: map[string]string{"tier": "web"}, Annotations: map[string]string{"team": "shop"}}
	rv := f.For(t.Context(), s, annotations.ApplyManual)
	o := rv.Object
	if rv.Policy != annotations.ApplyManual || o.Kind != objectref.KindService || o.Namespace != "shop" || o.Name != "web" ||
		o.Labels["tier"] != "web" || o.Annotations["team"] != "shop" || len(o.Members) != 0 {
		t.Errorf("review %+v; want shop/web under manual, as rules see it", rv)
	}
	a := rv.Approval(p)
	if !a.Approved || !slices.Equal(a.Approvers, []string{"alice"}) || len(a.Ignored) != 1 || !strings.Contains(a.Ignored[0], `"carol" made the change`) {
		t.Errorf("approval %+v; want alice's counted, the author's ignored", a)
	}
	rv.BeforeApply(p, a.Approvers)
	lines, _ := f.auditLog(t)
	checkAudit(t, lines, web.String(), []wantAudit{{action: "apply", actor: "alice", outcome: "started", planID: p.ID}})

	m := &v1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "a", Labels: map[string]string{"tier": "a"}}}
	g := f.GroupSubject(t.Context(), annotations.Group{Namespace: "shop", Name: "front"}, "", []*v1.Service{m}, nil, records.KindDrift)
	o = f.For(t.Context(), g, annotations.ApplyAuto).Object
	if o.Kind != objectref.KindServiceGroup || o.Name != "front" || o.Labels["tier"] != "a" || len(o.Members) != 1 || o.Members[0].Name != "a" || o.Members[0].Labels["tier"] != "a" {
		t.Errorf("group as rules see it: %+v", o)
	}
}
