package review

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/example/cloud-provider-example/annotations"
	"github.com/example/cloud-provider-example/engine"
	"github.com/example/cloud-provider-example/objectref"
	"github.com/example/cloud-provider-example/records"
)

// TestApplyStarting: the line written before an apply names the
// approvers, or the controller under auto; an apply that starts while an
// earlier one of another plan never reported records that one interrupted
// first (interrupted.go).
func TestApplyStarting(t *testing.T) {
	f := newReviewFixture(t, "", false)
	p := planAt(t, "plan-aaaaaaaaaaaa", 1, time.Now())
	d := planAt(t, "plan-dddddddddddd", 0, time.Now())
	d.Destroy, d.HasChanges, d.Summary.Remove = true, true, 1
	f.applyStarting(t.Context(), webSubject(records.KindChange), annotations.ApplyAuto, p, nil)
	f.applyStarting(t.Context(), webSubject(records.KindChange), annotations.ApplyManual, p, []string{"alice", "bob"})
	f.applyStarting(t.Context(), webSubject(records.KindDestroy), annotations.ApplyManual, d, []string{"alice"})
	lines, _ := f.auditLog(t)
	checkAudit(t, lines, web.String(), []wantAudit{
		{action: "apply", actor: self, outcome: "started", planID: p.ID},
		{action: "apply", actor: "alice, bob", outcome: "started", planID: p.ID},
		{action: "apply", actor: self, outcome: "interrupted", planID: p.ID, has: "plan " + d.ID + " found changes left to make"},
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
	s.contrib = records.Contributors{Authors: []string{"carol"}}
	s.meta = metav1.ObjectMeta{Labels: map[string]string{"tier": "web"}, Annotations: map[string]string{"team": "shop"}}
	rv := f.For(t.Context(), s, annotations.ApplyManual)
	o := rv.Object
	if rv.Policy != annotations.ApplyManual || o.Kind != objectref.KindService || o.Namespace != "shop" || o.Name != "web" ||
		o.Labels["tier"] != "web" || o.Annotations["team"] != "shop" || len(o.Members) != 0 {
		t.Errorf("review %+v; want shop/web under manual, as rules see it", rv)
	}
	a := rv.Approval(p)
	if !a.Approved || !slices.Equal(a.Approvers, []string{"alice"}) || len(a.Ignored) != 1 || !strings.Contains(a.Ignored[0], `"carol" made a change this plan contains`) {
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

// TestContributorsStayWithTheChange: a change stays its author's however
// the plan carrying it is reached. Reviewer-tenant rita changes the
// Service; the same plan is then planned again from a reconcile whose
// author is someone else (a member's, a restart's), and superseded by a
// plan that carries her change too: her approval never counts, and the
// audit line of the apply names every author. The apply clears them.
func TestContributorsStayWithTheChange(t *testing.T) {
	planned := time.Now().Add(-time.Minute)
	p := planAt(t, "plan-aaaaaaaaaaaa", 1, planned)
	q := planAt(t, "plan-bbbbbbbbbbbb", 2, planned)
	f := newReviewFixture(t, "", false,
		approvalObj("a", web, p.ID, "rita", planned.Add(time.Second)), approvalObj("b", web, q.ID, "rita", planned.Add(time.Second)),
		approvalObj("c", web, q.ID, "bob", planned.Add(time.Second)))
	by := func(who string) Subject {
		s := webSubject(records.KindChange)
		s.contrib = records.Contributors{Authors: []string{who}}
		return s
	}
	approval := func(s Subject, plan *engine.Plan) engine.Approval {
		return f.For(t.Context(), s, annotations.ApplyManual).Approval(plan)
	}
	waiting := func(plan *engine.Plan) *engine.Outcome {
		return &engine.Outcome{Policy: annotations.ApplyManual, Workspace: webWS, Planned: plan, Awaiting: plan}
	}

	f.Report(t.Context(), by("rita"), waiting(p), &engine.AwaitingApprovalError{PlanID: p.ID})
	// Planned again, the same plan, from carol's reconcile.
	if a := approval(by("carol"), p); a.Approved {
		t.Fatalf("rita's approval of her own change, re-planned by carol's reconcile, counted: %+v", a)
	}
	f.Report(t.Context(), by("carol"), waiting(p), &engine.AwaitingApprovalError{PlanID: p.ID})
	if got := f.get(t, webWS).Find(p.ID).Authors; !slices.Equal(got, []string{"rita", "carol"}) {
		t.Errorf("plan %s records authors %v; want rita and carol", p.ID, got)
	}
	// Superseded by q, planned from carol's reconcile: it carries rita's
	// change too.
	out := waiting(q)
	out.Superseded = p
	f.Report(t.Context(), by("carol"), out, &engine.AwaitingApprovalError{PlanID: q.ID})
	// A controller that starts knows only what the record says.
	restarted := newReviewFixture(t, "", false,
		approvalObj("b", web, q.ID, "rita", planned.Add(time.Second)), approvalObj("c", web, q.ID, "bob", planned.Add(time.Second)))
	restarted.store = f.store
	a := restarted.For(t.Context(), webSubject(records.KindDrift), annotations.ApplyManual).Approval(q)
	if !a.Approved || !slices.Equal(a.Approvers, []string{"bob"}) || len(a.Ignored) != 1 || !strings.Contains(a.Ignored[0], `"rita" made a change this plan contains`) {
		t.Fatalf("after a restart, from a drift check: %+v; want bob's approval counted, rita's ignored", a)
	}

	applied := &engine.Outcome{Policy: annotations.ApplyManual, Workspace: webWS, Applied: q, Result: &engine.Result{Plan: q, Outputs: map[string]json.RawMessage{}},
		Approval: a}
	restarted.Report(t.Context(), webSubject(records.KindDrift), applied, nil)
	lines, _ := restarted.auditLog(t)
	if last := lines[len(lines)-1]; last.Action != "apply" || last.Details["author"] != "rita, carol" {
		t.Errorf("apply audit line %+v; want the authors the record keeps (rita, carol)", last)
	}
	if r := f.get(t, webWS); r.Unapplied != nil {
		t.Errorf("after the apply the record keeps contributors %+v; want none", r.Unapplied)
	}
}
