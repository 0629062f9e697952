package review

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/example/cloud-provider-example/annotations"
	"github.com/example/cloud-provider-example/engine"
	"github.com/example/cloud-provider-example/records"
)

// TestMoveRecord: a record follows its state from the legacy key; a
// plan that waited there is superseded (its file names the legacy state).
func TestMoveRecord(t *testing.T) {
	const legacy = "prod-service-shop-web"
	t0 := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	p0, p1, p9 := planAt(t, "plan-000000000000", 1, t0), planAt(t, "plan-111111111111", 1, t0), planAt(t, "plan-999999999999", 1, t0)
	outputs := map[string]json.RawMessage{"ip": json.RawMessage(`"192.0.2.10"`)}
	legacyRecord := func(f *reviewFixture) {
		out := func(o *engine.Outcome) *engine.Outcome {
			o.Workspace, o.Files = legacy, map[string][]byte{"main.tf": []byte("# legacy")}
			return o
		}
		f.updateRecord(t.Context(), webSubject(records.KindChange), out(&engine.Outcome{Policy: annotations.ApplyManual, Planned: p0, Applied: p0,
			Result: &engine.Result{Plan: p0, Outputs: outputs, Applied: true}}), nil, t0)
		f.updateRecord(t.Context(), webSubject(records.KindChange), out(&engine.Outcome{Policy: annotations.ApplyManual, Planned: p1, Awaiting: p1}),
			&engine.AwaitingApprovalError{PlanID: p1.ID}, t0.Add(time.Minute))
	}
	cases := []struct {
		name    string
		before  func(f *reviewFixture)
		plans   []wantPlan
		applied string
		check   func(t *testing.T, r *records.Record)
	}{{
		name:   "moved",
		before: legacyRecord,
		plans: []wantPlan{
			{id: p1.ID, outcome: records.Superseded, err: "the state moved to a new key"},
			{id: p0.ID, outcome: records.Applied},
		},
		applied: p0.ID,
		check: func(t *testing.T, r *records.Record) {
			if r.Applied == nil || r.Applied.PlanID != p0.ID || r.Files["main.tf"] != "# legacy" {
				t.Errorf("last apply %+v, files %q; want the legacy record's", r.Applied, r.Files)
			}
		},
	}, {
		name: "the new record is in use",
		before: func(f *reviewFixture) {
			legacyRecord(f)
			f.updateRecord(t.Context(), webSubject(records.KindChange), &engine.Outcome{Policy: annotations.ApplyManual, Workspace: webWS, Planned: p9, Awaiting: p9},
				&engine.AwaitingApprovalError{PlanID: p9.ID}, t0)
		},
		plans: []wantPlan{{id: p9.ID, outcome: records.AwaitingApproval, saved: true}},
	}, {
		name:   "no legacy record",
		before: func(*reviewFixture) {},
	}}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			f := newReviewFixture(t, "", false)
			c.before(f)
			f.MoveRecord(t.Context(), legacy, webWS)
			if n := f.objectsOf(t, legacy); n != 0 {
				t.Errorf("%d objects of the legacy record left", n)
			}
			if c.plans == nil {
				if n := f.objectsOf(t, webWS); n != 0 {
					t.Errorf("%d objects under the new key; want none", n)
				}
				return
			}
			r := checkRecord(t, f, webWS, c.plans, c.applied, "")
			if c.check != nil {
				c.check(t, r)
			}
		})
	}
}
