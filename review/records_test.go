package review

import (
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/example/cloud-provider-example/annotations"
	"github.com/example/cloud-provider-example/engine"
	"github.com/example/cloud-provider-example/policy"
	"github.com/example/cloud-provider-example/records"
)

// wantPlan is a record entry expected.
type wantPlan struct {
	id        string
	outcome   records.Outcome
	approvers []string
	saved     bool   // its saved plan is kept
	err       string // in its Error
}

// checkRecord compares the record of ws with the plans, last apply (its
// plan id) and lock expected; kept plans must keep their text.
func checkRecord(t *testing.T, f *reviewFixture, ws string, want []wantPlan, applied, lock string) *records.Record {
	t.Helper()
	r := f.get(t, ws)
	if r == nil {
		t.Fatalf("no record of %s", ws)
	}
	var ids, wantIDs []string
	for _, p := range r.Plans {
		ids = append(ids, p.ID+" "+string(p.Outcome))
	}
	for _, w := range want {
		wantIDs = append(wantIDs, w.id+" "+string(w.outcome))
	}
	if !slices.Equal(ids, wantIDs) {
		t.Fatalf("plans %q; want %q", ids, wantIDs)
	}
	for i, w := range want {
		p := r.Plans[i]
		var by []string
		for _, a := range p.Approvals {
			by = append(by, a.By)
		}
		if !slices.Equal(by, w.approvers) {
			t.Errorf("%s approved by %v; want %v", p.ID, by, w.approvers)
		}
		data, err := f.store.SavedPlan(t.Context(), ws, p.ID)
		switch {
		case w.saved && (err != nil || string(data) != "saved "+p.ID):
			t.Errorf("saved plan of %s = %q, %v; want it kept", p.ID, data, err)
		case !w.saved && !errors.Is(err, records.ErrNotFound):
			t.Errorf("saved plan of %s = %q, %v; want it dropped", p.ID, data, err)
		}
		if !strings.Contains(p.Error, w.err) || (w.err == "") != (p.Error == "") {
			t.Errorf("%s error %q; want %q", p.ID, p.Error, w.err)
		}
		if text, err := f.store.PlanText(t.Context(), ws, p.ID); err != nil || text != "text of "+p.ID {
			t.Errorf("text of %s = %q, %v", p.ID, text, err)
		}
		// records.Plan.DecidedAt: applied, failed, superseded, denied.
		decided := p.Outcome != records.AwaitingApproval && p.Outcome != records.Planned
		if decided != (p.DecidedAt != nil) {
			t.Errorf("%s (%s) decided at %v", p.ID, p.Outcome, p.DecidedAt)
		}
	}
	switch {
	case applied == "" && r.Applied != nil:
		t.Errorf("last apply %+v; want none before an apply", r.Applied)
	case applied != "" && (r.Applied == nil || r.Applied.PlanID != applied || r.Applied.HCLHash != "hcl-"+applied):
		t.Errorf("last apply %+v; want plan %s", r.Applied, applied)
	}
	switch {
	case lock == "" && r.Lock != nil:
		t.Errorf("lock %+v; want none", r.Lock)
	case lock != "" && (r.Lock == nil || r.Lock.ID != lock):
		t.Errorf("lock %+v; want %s", r.Lock, lock)
	}
	if r.Object != web || r.Workspace != ws || r.RequiredApprovals != f.cfg.Review.Approvals.Required {
		t.Errorf("record of %+v, workspace %s, %d approvals", r.Object, r.Workspace, r.RequiredApprovals)
	}
	return r
}

const lockDiag = "Error: Error acquiring the state lock\n\nLock Info:\n  ID:        9296823b-0ebb-7d08-bd17-217709d58ae3\n  Who:       root@vm\n"

// TestUpdateRecord follows one object's record through a life of
// plans: each step is one updateRecord, checked against the whole record.
func TestUpdateRecord(t *testing.T) {
	f := newReviewFixture(t, "review: {keep: 3, approvals: {required: 2}}\n", false)
	t0 := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	plan := func(n string) *engine.Plan { return planAt(t, "plan-"+strings.Repeat(n, 12), 1, t0) }
	p1, p2, p3, p4, p5 := plan("1"), plan("2"), plan("3"), plan("4"), plan("5")
	p0 := &engine.Plan{ID: "plan-000000000000", Hash: "hcl-plan-000000000000", Workspace: webWS, Created: t0} // no changes
	outputs := map[string]json.RawMessage{"ip": json.RawMessage(`"192.0.2.10"`)}
	result := func(p *engine.Plan) *engine.Result {
		return &engine.Result{Plan: p, Outputs: outputs, Applied: p.HasChanges}
	}
	waits := &engine.AwaitingApprovalError{PlanID: "any", Policy: annotations.ApplyManual}
	deny := engine.Verdict{Rule: "no-public", Effect: policy.Deny, Message: "public load balancers are not allowed"}
	manual, auto := annotations.ApplyManual, annotations.ApplyAuto
	var aliceAt time.Time
	// The plans kept from p5's apply on, while nothing new is planned.
	sinceP5 := []wantPlan{
		{id: p5.ID, outcome: records.Applied},
		{id: p4.ID, outcome: records.Failed, err: "Error acquiring the state lock"},
		{id: p3.ID, outcome: records.Denied},
	}
	steps := []struct {
		name    string
		out     *engine.Outcome
		err     error
		plans   []wantPlan
		applied string // the last apply's plan
		lock    string
		check   func(t *testing.T, r *records.Record, now time.Time)
	}{{
		name:  "planned, awaiting approval",
		out:   &engine.Outcome{Policy: manual, Planned: p1, Awaiting: p1, Files: map[string][]byte{"main.tf": []byte("# p1")}, InputsDigest: "in-1"},
		err:   waits,
		plans: []wantPlan{{id: p1.ID, outcome: records.AwaitingApproval, saved: true}},
		check: func(t *testing.T, r *records.Record, _ time.Time) {
			p := r.Plans[0]
			if !p.PlannedAt.Equal(t0) || p.InputsDigest != "in-1" || p.HCLHash != p1.Hash || p.Kind != records.KindChange || p.Policy != "manual" {
				t.Errorf("plan entry %+v; want planned at the plan's creation, its digest, hash, kind and policy", p)
			}
			if r.Files["main.tf"] != "# p1" || r.Policy != "manual" {
				t.Errorf("files %q policy %q", r.Files, r.Policy)
			}
		},
	}, {
		name:  "one approval of two",
		out:   &engine.Outcome{Policy: manual, Awaiting: p1, Approval: engine.Approval{Approvers: []string{"alice"}}},
		err:   waits,
		plans: []wantPlan{{id: p1.ID, outcome: records.AwaitingApproval, approvers: []string{"alice"}, saved: true}},
	}, {
		name: "superseded by a new plan",
		out:  &engine.Outcome{Policy: manual, Superseded: p1, Planned: p2, Awaiting: p2},
		err:  waits,
		plans: []wantPlan{
			{id: p2.ID, outcome: records.AwaitingApproval, saved: true},
			{id: p1.ID, outcome: records.Superseded, approvers: []string{"alice"}},
		},
	}, {
		name: "the new plan's first approval",
		out:  &engine.Outcome{Policy: manual, Awaiting: p2, Approval: engine.Approval{Approvers: []string{"alice"}}},
		err:  waits,
		plans: []wantPlan{
			{id: p2.ID, outcome: records.AwaitingApproval, approvers: []string{"alice"}, saved: true},
			{id: p1.ID, outcome: records.Superseded, approvers: []string{"alice"}},
		},
		check: func(t *testing.T, r *records.Record, now time.Time) { aliceAt = now },
	}, {
		name: "approved and applied",
		out:  &engine.Outcome{Policy: manual, Applied: p2, Result: result(p2), InputsDigest: "in-2", Approval: engine.Approval{Approved: true, Approvers: []string{"alice", "bob"}}},
		plans: []wantPlan{
			{id: p2.ID, outcome: records.Applied, approvers: []string{"alice", "bob"}},
			{id: p1.ID, outcome: records.Superseded, approvers: []string{"alice"}},
		},
		applied: p2.ID,
		check: func(t *testing.T, r *records.Record, now time.Time) {
			if a := r.Plans[0].Approvals; !a[0].At.Equal(aliceAt) || !a[1].At.Equal(now) {
				t.Errorf("approvals %+v; want alice's as first counted (%v), bob's now", a, aliceAt)
			}
			if r.Applied.InputsDigest != "in-2" || string(r.Applied.Outputs["ip"]) != `"192.0.2.10"` || !r.Applied.At.Equal(now) {
				t.Errorf("last apply %+v", r.Applied)
			}
		},
	}, {
		name: "denied by a rule",
		out:  &engine.Outcome{Policy: auto, Planned: p3, Awaiting: p3, Verdicts: []engine.Verdict{deny}},
		err:  &engine.DeniedError{PlanID: p3.ID, Verdict: deny},
		plans: []wantPlan{
			{id: p3.ID, outcome: records.Denied},
			{id: p2.ID, outcome: records.Applied, approvers: []string{"alice", "bob"}},
			{id: p1.ID, outcome: records.Superseded, approvers: []string{"alice"}},
		},
		applied: p2.ID,
		check: func(t *testing.T, r *records.Record, _ time.Time) {
			if v := r.Plans[0].Verdicts; len(v) != 1 || v[0] != (records.Verdict{Rule: "no-public", Effect: "deny", Message: deny.Message}) {
				t.Errorf("verdicts %+v", v)
			}
		},
	}, {
		name: "failed on a held lock; the oldest plan goes (keep 3)",
		out:  &engine.Outcome{Policy: auto, Planned: p4, Awaiting: p4},
		err:  &engine.RunError{Op: "apply", Workspace: webWS, Diagnostics: lockDiag, Err: errors.New("exit status 1")},
		plans: []wantPlan{
			{id: p4.ID, outcome: records.Failed, err: "Error acquiring the state lock"},
			{id: p3.ID, outcome: records.Denied},
			{id: p2.ID, outcome: records.Applied, approvers: []string{"alice", "bob"}},
		},
		applied: p2.ID,
		lock:    "9296823b-0ebb-7d08-bd17-217709d58ae3",
		check: func(t *testing.T, r *records.Record, _ time.Time) {
			if _, err := f.store.PlanText(t.Context(), webWS, p1.ID); !errors.Is(err, records.ErrNotFound) {
				t.Errorf("text of the plan dropped (keep 3): %v", err)
			}
			if r.Lock.Holder != "root@vm" {
				t.Errorf("lock %+v; want its holder", r.Lock)
			}
		},
	}, {
		name:    "applied; the lock is gone",
		out:     &engine.Outcome{Policy: auto, Planned: p5, Applied: p5, Result: result(p5)},
		plans:   sinceP5,
		applied: p5.ID,
	}, {
		name:    "a held lock again, before planning",
		out:     &engine.Outcome{Policy: auto},
		err:     &engine.RunError{Op: "plan", Workspace: webWS, Diagnostics: lockDiag, Err: errors.New("exit status 1")},
		plans:   sinceP5,
		applied: p5.ID,
		lock:    "9296823b-0ebb-7d08-bd17-217709d58ae3",
	}, {
		// Converged without an apply: no lock stopped it, whatever one
		// was seen before.
		name:    "no changes: nothing recorded but the last apply",
		out:     &engine.Outcome{Policy: auto, Planned: p0, Result: result(p0)},
		plans:   sinceP5,
		applied: p0.ID,
	}, {
		name:    "the fast path writes no last apply",
		out:     &engine.Outcome{Policy: auto, Result: &engine.Result{FastPath: true, Outputs: outputs}},
		plans:   sinceP5,
		applied: p0.ID,
	}, {
		name: "a decided plan planned again is a new entry",
		out:  &engine.Outcome{Policy: manual, Planned: p3, Awaiting: p3},
		err:  waits,
		plans: []wantPlan{
			{id: p3.ID, outcome: records.AwaitingApproval, saved: true},
			{id: p5.ID, outcome: records.Applied},
			{id: p4.ID, outcome: records.Failed, err: "Error acquiring the state lock"},
		},
		applied: p0.ID,
	}}
	for i, st := range steps {
		ok := t.Run(st.name, func(t *testing.T) {
			now := t0.Add(time.Duration(i+1) * time.Minute)
			st.out.Workspace = webWS
			f.updateRecord(t.Context(), webSubject(records.KindChange), st.out, st.err, now)
			r := checkRecord(t, f, webWS, st.plans, st.applied, st.lock)
			if st.check != nil {
				st.check(t, r, now)
			}
		})
		if !ok {
			break // later steps build on this one
		}
	}
}

// TestUpdateRecordPlanOnlyAndDrift: a plan-only plan keeps its saved
// file; drift checks record what they found, and a skipped one nothing.
func TestUpdateRecordPlanOnlyAndDrift(t *testing.T) {
	f := newReviewFixture(t, "", false)
	t0 := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	p1 := planAt(t, "plan-111111111111", 1, t0)
	p1.Summary.Drift = []engine.ResourceChange{{Address: "example_load_balancer.this", Action: "update"}}
	p2 := &engine.Plan{ID: "plan-222222222222", Workspace: webWS}
	drift := webSubject(records.KindDrift)

	f.updateRecord(t.Context(), drift, &engine.Outcome{Policy: annotations.ApplyPlanOnly, Workspace: webWS, Planned: p1, Awaiting: p1},
		&engine.AwaitingApprovalError{PlanID: p1.ID, Policy: annotations.ApplyPlanOnly}, t0)
	r := checkRecord(t, f, webWS, []wantPlan{{id: p1.ID, outcome: records.Planned, saved: true}}, "", "")
	if d := r.Drift; d == nil || !d.Detected || d.PlanID != p1.ID || len(d.Resources) != 1 || !d.CheckedAt.Equal(t0) || r.Plans[0].Kind != records.KindDrift {
		t.Fatalf("drift %+v, plan kind %s; want detected by %s", d, r.Plans[0].Kind, p1.ID)
	}

	t1 := t0.Add(time.Hour)
	f.updateRecord(t.Context(), drift, &engine.Outcome{Policy: annotations.ApplyPlanOnly, Workspace: webWS, Planned: p2}, nil, t1)
	r = f.get(t, webWS)
	if d := r.Drift; d.Detected || !d.CheckedAt.Equal(t1) || d.PlanID != p1.ID || !d.LastDetectedAt.Equal(t0) {
		t.Fatalf("drift %+v; want checked again, none now, the last one kept", d)
	}

	f.updateRecord(t.Context(), drift, &engine.Outcome{Policy: annotations.ApplyPlanOnly, Workspace: webWS}, engine.ErrSkipped, t1.Add(time.Hour))
	if d := f.get(t, webWS).Drift; !d.CheckedAt.Equal(t1) {
		t.Fatalf("a skipped check moved the check time: %+v", d)
	}
}

// TestDeleteRecord: the record, its texts and saved plans go.
func TestDeleteRecord(t *testing.T) {
	f := newReviewFixture(t, "", false)
	p := planAt(t, "plan-111111111111", 1, time.Now())
	f.updateRecord(t.Context(), webSubject(records.KindChange), &engine.Outcome{Policy: annotations.ApplyManual, Workspace: webWS, Planned: p, Awaiting: p},
		&engine.AwaitingApprovalError{PlanID: p.ID}, time.Now())
	if n := f.objectsOf(t, webWS); n < 3 {
		t.Fatalf("%d objects; want the record, its text and its saved plan", n)
	}
	f.deleteRecord(t.Context(), webWS)
	if r := f.get(t, webWS); r != nil || f.objectsOf(t, webWS) != 0 {
		t.Fatalf("record %+v, %d objects left", r, f.objectsOf(t, webWS))
	}
	f.deleteRecord(t.Context(), webWS) // nothing to delete: no panic, only a log
}

// TestLock: the lock a failed run recorded is what unlock requests are
// checked against.
func TestLock(t *testing.T) {
	f := newReviewFixture(t, "", false)
	if l := f.lock(t.Context(), webWS); l != nil {
		t.Fatalf("lock %+v without a record", l)
	}
	f.updateRecord(t.Context(), webSubject(records.KindChange), &engine.Outcome{Policy: annotations.ApplyAuto, Workspace: webWS},
		&engine.RunError{Op: "plan", Workspace: webWS, Diagnostics: lockDiag, Err: errors.New("exit status 1")}, time.Now())
	if l := f.lock(t.Context(), webWS); l == nil || l.ID != "9296823b-0ebb-7d08-bd17-217709d58ae3" || l.Holder != "root@vm" {
		t.Fatalf("lock %+v", l)
	}
}

// TestRemoved: a removal that destroyed nothing takes its record with it;
// one that destroyed something left it to Report.
func TestRemoved(t *testing.T) {
	f := newReviewFixture(t, "", false)
	p := planAt(t, "plan-111111111111", 1, time.Now())
	keep := func() {
		f.updateRecord(t.Context(), webSubject(records.KindChange), &engine.Outcome{Policy: annotations.ApplyManual, Workspace: webWS, Planned: p, Awaiting: p},
			&engine.AwaitingApprovalError{PlanID: p.ID}, time.Now())
	}
	keep()
	destroyed := &engine.Plan{ID: "plan-222222222222", Destroy: true, HasChanges: true}
	f.Removed(t.Context(), &engine.Outcome{Workspace: webWS, Applied: destroyed})
	if f.get(t, webWS) == nil {
		t.Fatal("the record went with a removal that destroyed something (Report's to delete)")
	}
	f.Removed(t.Context(), &engine.Outcome{Workspace: webWS, Applied: &engine.Plan{ID: "plan-000000000000", Destroy: true}})
	if n := f.objectsOf(t, webWS); n != 0 {
		t.Fatalf("%d record objects left after a removal with nothing to destroy", n)
	}
	keep()
	f.Removed(t.Context(), &engine.Outcome{Workspace: webWS})
	if n := f.objectsOf(t, webWS); n != 0 {
		t.Fatalf("%d record objects left after a removal that applied nothing", n)
	}
}

// TestRecords: the records group membership is read from, none before
// the board has a client.
func TestRecords(t *testing.T) {
	if all, err := New(testConfig(t, ""), nil).Records(t.Context()); all != nil || err != nil {
		t.Fatalf("records without a client: %v %v", all, err)
	}
	f := newReviewFixture(t, "", false)
	p := planAt(t, "plan-111111111111", 1, time.Now())
	f.updateRecord(t.Context(), webSubject(records.KindChange), &engine.Outcome{Policy: annotations.ApplyManual, Workspace: webWS, Planned: p, Awaiting: p},
		&engine.AwaitingApprovalError{PlanID: p.ID}, time.Now())
	all, err := f.Records(t.Context())
	if err != nil || len(all) != 1 || all[0].Object != web || all[0].Workspace != webWS {
		t.Fatalf("records %+v, %v; want shop/web's", all, err)
	}
}
