package review

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/example/cloud-provider-example/annotations"
	"github.com/example/cloud-provider-example/engine"
	"github.com/example/cloud-provider-example/records"
)

// TestInterruptedApply: an apply's start is in the record before it runs
// and clears the last apply; an apply that reports ends it; one that never
// does is recorded interrupted by the object's next plan, with what that
// plan found, an event and an audit line; a reconcile that made no plan
// (the state lock still held) leaves it open.
func TestInterruptedApply(t *testing.T) {
	auto := annotations.ApplyAuto
	t0 := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	outputs := map[string]json.RawMessage{"ip": json.RawMessage(`"192.0.2.10"`)}
	applied := func(p *engine.Plan) *engine.Outcome {
		return &engine.Outcome{Policy: auto, Workspace: webWS, Planned: p, Applied: p, Result: &engine.Result{Plan: p, Outputs: outputs, Applied: true}, InputsDigest: "in-" + p.ID}
	}
	start := func(t *testing.T, f *reviewFixture, p *engine.Plan) *records.Record {
		t.Helper()
		f.applyStarting(t.Context(), webSubject(records.KindChange), auto, p, nil)
		r := f.get(t, webWS)
		if r == nil || r.Applying == nil || r.Applying.Plan.ID != p.ID || r.Applying.StartedAt.IsZero() || r.Applied != nil {
			t.Fatalf("record after the start of %s: %+v; want it applying, no last apply", p.ID, r)
		}
		return r
	}

	t.Run("reported", func(t *testing.T) {
		f := newReviewFixture(t, "", false)
		p1 := planAt(t, "plan-111111111111", 1, t0)
		start(t, f, p1)
		f.Report(t.Context(), webSubject(records.KindChange), applied(p1), nil)
		r := f.get(t, webWS)
		if r.Applying != nil || r.Latest() == nil || r.Latest().Outcome != records.Applied || r.Applied == nil || r.Applied.PlanID != p1.ID {
			t.Fatalf("record %+v; want p1 applied and no apply under way", r)
		}
	})

	for _, tc := range []struct {
		name    string
		changes int
		says    string
	}{
		{"completed", 0, "found nothing left to change"},
		{"partial", 1, "found changes left to make"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newReviewFixture(t, "", false)
			p1, p2 := planAt(t, "plan-111111111111", 1, t0), planAt(t, "plan-222222222222", 1, t0.Add(time.Minute))
			f.Report(t.Context(), webSubject(records.KindChange), applied(p1), nil)
			start(t, f, p2) // and the controller stops
			f.takeEvents()

			// Another reconcile without a plan (the lock is still held):
			// nothing is known yet.
			held := &engine.RunError{Op: "plan", Workspace: webWS, Diagnostics: lockDiag}
			f.Report(t.Context(), webSubject(records.KindChange), &engine.Outcome{Policy: auto, Workspace: webWS}, held)
			if r := f.get(t, webWS); r.Applying == nil || r.Find(p2.ID) != nil {
				t.Fatalf("record %+v; want p2 still under way", r)
			}

			// The next plan settles it: at the start of its apply when it
			// has changes, else at its report.
			p3 := planAt(t, "plan-333333333333", tc.changes, t0.Add(2*time.Minute))
			out := &engine.Outcome{Policy: auto, Workspace: webWS, Planned: p3}
			f.takeEvents()
			if tc.changes > 0 {
				out = applied(p3)
				start(t, f, p3)
			}
			f.Report(t.Context(), webSubject(records.KindChange), out, nil)
			r := f.get(t, webWS)
			var got []string
			for _, p := range r.Plans {
				got = append(got, p.ID+" "+string(p.Outcome))
			}
			want := []string{p2.ID + " interrupted", p1.ID + " applied"}
			if tc.changes > 0 {
				want = append([]string{p3.ID + " applied"}, want...)
			}
			if strings.Join(got, ", ") != strings.Join(want, ", ") {
				t.Fatalf("plans %q; want %q", got, want)
			}
			p := r.Find(p2.ID)
			if r.Applying != nil || p.DecidedAt == nil || !strings.Contains(p.Error, tc.says) || !strings.Contains(p.Error, p3.ID) || p.Summary.Add != 1 || p.HCLHash != p2.Hash {
				t.Errorf("interrupted entry %+v (applying %+v); want p2 decided, saying %q of %s", p, r.Applying, tc.says, p3.ID)
			}
			evs := f.takeEvents()
			found := false
			for _, e := range evs {
				found = found || e.Reason == "ApplyInterrupted" && strings.Contains(e.Message, p2.ID) && strings.Contains(e.Message, tc.says)
			}
			if !found {
				t.Errorf("events:\n%s\nwant ApplyInterrupted of %s", eventsText(evs), p2.ID)
			}
			lines, _ := f.auditLog(t)
			found = false
			for _, l := range lines {
				found = found || l.Action == "apply" && l.Outcome == "interrupted" && l.PlanID == p2.ID && strings.Contains(l.Error, tc.says)
			}
			if !found {
				t.Errorf("no audit line of p2 interrupted in %+v", lines)
			}
		})
	}
}
