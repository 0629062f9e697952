package review

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/example/cloud-provider-example/annotations"
	"github.com/example/cloud-provider-example/audit"
	"github.com/example/cloud-provider-example/engine"
	"github.com/example/cloud-provider-example/internal/testkit"
	"github.com/example/cloud-provider-example/policy"
	"github.com/example/cloud-provider-example/records"
	"github.com/example/cloud-provider-example/reviewapi"
)

// TestReport: the events, audit lines, phase and approvals clean-up that
// report makes of each kind of engine outcome.
func TestReport(t *testing.T) {
	const secret = "s3cr3t-backend-password"
	at := time.Now().Add(-time.Minute)
	outputs := map[string]json.RawMessage{"ip": json.RawMessage(`"192.0.2.10"`)}
	applied := func(p *engine.Plan) *engine.Result { return &engine.Result{Plan: p, Outputs: outputs, Applied: true} }
	waits := func(p *engine.Plan, pol annotations.ApplyPolicy, vs ...engine.Verdict) error {
		return &engine.AwaitingApprovalError{PlanID: p.ID, Policy: pol, Verdicts: vs}
	}
	flag := engine.Verdict{Rule: "replace", Effect: policy.RequireApproval, Message: "replaces the load balancer"}
	deny := engine.Verdict{Rule: "no-public", Effect: policy.Deny, Message: "public load balancers are not allowed"}
	const pid, qid = "plan-aaaaaaaaaaaa", "plan-bbbbbbbbbbbb"
	cases := []struct {
		name   string
		extra  string // cloud config
		s      Subject
		objs   []*unstructured.Unstructured
		before func(t *testing.T, f *reviewFixture)
		out    func(p, q *engine.Plan) (*engine.Outcome, error)
		events []wantEvent
		audit  []wantAudit
		phase  string
		check  func(t *testing.T, f *reviewFixture, p, q *engine.Plan)
	}{{
		name: "applied",
		out: func(p, _ *engine.Plan) (*engine.Outcome, error) {
			return &engine.Outcome{Policy: annotations.ApplyAuto, Workspace: webWS, Planned: p, Applied: p, Result: applied(p)}, nil
		},
		events: []wantEvent{
			{typ: "Normal", reason: "Planned", has: []string{"Planned " + pid + " (+1 ~0 -0)"}},
			{typ: "Normal", reason: "Applied", has: []string{"Applied " + pid + " (+1 ~0 -0)"}, not: []string{"approved by"}},
		},
		audit: []wantAudit{{action: "plan", actor: self, planID: pid}, {action: "apply", actor: self, outcome: "applied", planID: pid}},
		phase: "applied",
	}, {
		name:  "applied once approved",
		extra: "review: {approvals: {required: 2}}\n",
		s:     Subject{ref: web, event: webSvc, kind: records.KindChange, contrib: records.Contributors{Authors: []string{"carol"}}},
		objs: []*unstructured.Unstructured{
			approvalObj("a", web, pid, "alice", at), approvalObj("b", web, pid, "bob", at), approvalObj("c", web, qid, "dave", at),
		},
		out: func(p, _ *engine.Plan) (*engine.Outcome, error) {
			return &engine.Outcome{Policy: annotations.ApplyManual, Workspace: webWS, Applied: p, Result: applied(p),
				Approval: engine.Approval{Approved: true, Approvers: []string{"alice", "bob"}}}, nil
		},
		events: []wantEvent{{typ: "Normal", reason: "Applied", has: []string{"Applied " + pid, "approved by alice, bob"}}},
		audit: []wantAudit{
			{action: "approve", actor: "alice", outcome: "counted", planID: pid, has: "2 of 2"},
			{action: "approve", actor: "bob", outcome: "counted", planID: pid, has: "2 of 2"},
			{action: "apply", actor: "alice, bob", outcome: "applied", planID: pid, has: "carol"},
		},
		phase: "applied",
		check: func(t *testing.T, f *reviewFixture, _, _ *engine.Plan) {
			if left := approvalNames(t, f); !slices.Equal(left, []string{"c"}) {
				t.Errorf("PlanApprovals left %v; want those of the applied plan deleted, [c] kept", left)
			}
		},
	}, {
		name: "no changes",
		out: func(_, _ *engine.Plan) (*engine.Outcome, error) {
			p0 := &engine.Plan{ID: "plan-000000000000", Workspace: webWS}
			return &engine.Outcome{Policy: annotations.ApplyAuto, Workspace: webWS, Planned: p0, Result: &engine.Result{Plan: p0, Outputs: outputs}}, nil
		},
		phase: "applied",
	}, {
		name: "fast path",
		out: func(_, _ *engine.Plan) (*engine.Outcome, error) {
			return &engine.Outcome{Policy: annotations.ApplyAuto, Workspace: webWS, Result: &engine.Result{FastPath: true, Outputs: outputs}}, nil
		},
		phase: "applied",
		check: func(t *testing.T, f *reviewFixture, _, _ *engine.Plan) {
			if n := f.objectsOf(t, webWS); n != 0 {
				t.Errorf("the fast path wrote %d record objects; want none (the record says it already)", n)
			}
		},
	}, {
		name: "awaiting approval",
		out: func(p, _ *engine.Plan) (*engine.Outcome, error) {
			return &engine.Outcome{Policy: annotations.ApplyManual, Workspace: webWS, Planned: p, Awaiting: p}, waits(p, annotations.ApplyManual)
		},
		events: []wantEvent{
			{typ: "Normal", reason: "Planned"},
			{typ: "Normal", reason: "AwaitingApproval", has: []string{"AwaitingApproval " + pid + " (+1 ~0 -0): needs 1 approval(s) (manual policy)",
				"`examplectl approve shop/web " + pid + "`"}},
		},
		audit: []wantAudit{{action: "plan", actor: self, planID: pid}},
		phase: "awaiting-approval",
	}, {
		name: "route set awaiting approval",
		s:    (&Board{cfg: testConfig(t, "")}).RouteSetSubject(webWS, records.KindChange),
		out: func(p, _ *engine.Plan) (*engine.Outcome, error) {
			return &engine.Outcome{Policy: annotations.ApplyManual, Workspace: webWS, Planned: p, Awaiting: p}, waits(p, annotations.ApplyManual)
		},
		events: []wantEvent{{typ: "Normal", reason: "Planned"}, {typ: "Normal", reason: "AwaitingApproval", has: []string{"`examplectl approve routes " + pid + "`"}}},
		audit:  []wantAudit{{action: "plan", actor: self, planID: pid}},
		phase:  "awaiting-approval",
	}, {
		name: "flagged by a rule",
		out: func(p, _ *engine.Plan) (*engine.Outcome, error) {
			return &engine.Outcome{Policy: annotations.ApplyAuto, Workspace: webWS, Planned: p, Awaiting: p, Verdicts: []engine.Verdict{flag}},
				waits(p, annotations.ApplyAuto, flag)
		},
		events: []wantEvent{
			{typ: "Normal", reason: "Planned"},
			{typ: "Normal", reason: "AwaitingApproval", has: []string{"(rule replace: replaces the load balancer)"}, not: []string{"manual policy"}},
		},
		audit: []wantAudit{{action: "plan", actor: self, planID: pid, has: "replace (require-approval): replaces the load balancer"}},
		phase: "awaiting-approval",
	}, {
		name: "plan-only",
		out: func(p, _ *engine.Plan) (*engine.Outcome, error) {
			return &engine.Outcome{Policy: annotations.ApplyPlanOnly, Workspace: webWS, Planned: p, Awaiting: p}, waits(p, annotations.ApplyPlanOnly)
		},
		events: []wantEvent{{typ: "Normal", reason: "Planned"}},
		audit:  []wantAudit{{action: "plan", actor: self, planID: pid}},
		phase:  "planned",
	}, {
		name: "still awaiting, an approval ignored",
		out: func(p, _ *engine.Plan) (*engine.Outcome, error) {
			return &engine.Outcome{Policy: annotations.ApplyManual, Workspace: webWS, Awaiting: p,
				Approval: engine.Approval{Ignored: []string{`PlanApproval x by "carol": "carol" made the change and cannot approve it`}}}, waits(p, annotations.ApplyManual)
		},
		events: []wantEvent{{typ: "Warning", reason: "ApprovalIgnored", has: []string{"cannot approve it"}}},
		audit:  []wantAudit{{action: "approve", actor: self, outcome: "ignored", planID: pid, has: "cannot approve it"}},
		phase:  "awaiting-approval",
		check: func(t *testing.T, f *reviewFixture, p, _ *engine.Plan) {
			// Said once, however often the plan is reconciled.
			f.Report(t.Context(), webSubject(records.KindChange), &engine.Outcome{Policy: annotations.ApplyManual, Workspace: webWS, Awaiting: p,
				Approval: engine.Approval{Ignored: []string{`PlanApproval x by "carol": "carol" made the change and cannot approve it`}}}, waits(p, annotations.ApplyManual))
			if evs := f.takeEvents(); len(evs) != 0 {
				t.Errorf("the ignored approval was reported again:\n%s", eventsText(evs))
			}
		},
	}, {
		name: "denied by a rule",
		out: func(p, _ *engine.Plan) (*engine.Outcome, error) {
			return &engine.Outcome{Policy: annotations.ApplyAuto, Workspace: webWS, Planned: p, Awaiting: p, Verdicts: []engine.Verdict{deny}},
				&engine.DeniedError{PlanID: p.ID, Verdict: deny}
		},
		events: []wantEvent{
			{typ: "Normal", reason: "Planned"},
			{typ: "Warning", reason: "PlanDenied", has: []string{"Plan " + pid + " denied by policy rule no-public: public load balancers are not allowed"}},
		},
		audit: []wantAudit{
			{action: "plan", actor: self, planID: pid, has: "no-public (deny)"},
			{action: "deny", actor: self, outcome: "denied", planID: pid, has: "no-public (deny)"},
		},
		phase: "denied", // never applied: it waits for nobody
	}, {
		name: "superseded",
		objs: []*unstructured.Unstructured{approvalObj("old", web, qid, "alice", at)},
		out: func(p, q *engine.Plan) (*engine.Outcome, error) {
			return &engine.Outcome{Policy: annotations.ApplyManual, Workspace: webWS, Superseded: q, Planned: p, Awaiting: p}, waits(p, annotations.ApplyManual)
		},
		events: []wantEvent{
			{typ: "Normal", reason: "PlanSuperseded", has: []string{"Plan " + qid + " superseded"}},
			{typ: "Normal", reason: "Planned"},
			{typ: "Normal", reason: "AwaitingApproval"},
		},
		audit: []wantAudit{{action: "supersede", actor: self, planID: qid}, {action: "plan", actor: self, planID: pid}},
		phase: "awaiting-approval",
		check: func(t *testing.T, f *reviewFixture, _, _ *engine.Plan) {
			if left := approvalNames(t, f); len(left) != 0 {
				t.Errorf("PlanApprovals of the superseded plan left: %v", left)
			}
		},
	}, {
		name: "drift detected",
		s:    webSubject(records.KindDrift),
		out: func(p, _ *engine.Plan) (*engine.Outcome, error) {
			p.Summary.Drift = []engine.ResourceChange{{Address: "a", Action: "update"}, {Address: "b", Action: "delete"}}
			return &engine.Outcome{Policy: annotations.ApplyManual, Workspace: webWS, Planned: p, Awaiting: p}, waits(p, annotations.ApplyManual)
		},
		events: []wantEvent{
			{typ: "Warning", reason: "DriftDetected", has: []string{"Drift detected: " + pid + " (2 resources changed outside Terraform)"}},
			{typ: "Normal", reason: "Planned"},
			{typ: "Normal", reason: "AwaitingApproval"},
		},
		audit: []wantAudit{{action: "drift", actor: self, planID: pid}, {action: "plan", actor: self, planID: pid}},
		phase: "awaiting-approval",
	}, {
		name: "drift check skipped",
		s:    webSubject(records.KindDrift),
		out: func(_, _ *engine.Plan) (*engine.Outcome, error) {
			return &engine.Outcome{Policy: annotations.ApplyAuto, Workspace: webWS}, fmt.Errorf("drift check: %w", engine.ErrSkipped)
		},
	}, {
		name: "recovered, with terraform warnings",
		out: func(p, _ *engine.Plan) (*engine.Outcome, error) {
			res := applied(p)
			res.Warnings = []string{"adopted lb-0123456789abcdef"}
			return &engine.Outcome{Policy: annotations.ApplyAuto, Workspace: webWS, Planned: p, Applied: p, Result: res, Recovered: "lb-0123456789abcdef"}, nil
		},
		events: []wantEvent{
			{typ: "Warning", reason: "LoadBalancerRecovered", has: []string{"lb-0123456789abcdef"}},
			{typ: "Normal", reason: "Planned"},
			{typ: "Normal", reason: "Applied"},
			{typ: "Warning", reason: "TerraformWarning", has: []string{"adopted lb-0123456789abcdef"}},
		},
		audit: []wantAudit{
			{action: "import", actor: self, outcome: "recovered", has: "lb-0123456789abcdef"},
			{action: "plan", actor: self, planID: pid},
			{action: "apply", actor: self, outcome: "applied", planID: pid},
		},
		phase: "applied",
	}, {
		name: "destroyed",
		s:    webSubject(records.KindDestroy),
		before: func(t *testing.T, f *reviewFixture) { // a record to delete
			_, err := f.store.Update(t.Context(), webWS, func(r *records.Record) error { r.Object = web; return nil })
			testkit.Must(t, err)
		},
		out: func(p, _ *engine.Plan) (*engine.Outcome, error) {
			p.Destroy, p.Summary = true, engine.PlanSummary{Remove: 2}
			return &engine.Outcome{Policy: annotations.ApplyAuto, Workspace: webWS, Planned: p, Applied: p, Result: &engine.Result{Plan: p, Applied: true}}, nil
		},
		events: []wantEvent{{typ: "Normal", reason: "Planned"}, {typ: "Normal", reason: "Applied", has: []string{"(+0 ~0 -2)"}}},
		audit:  []wantAudit{{action: "plan", actor: self, planID: pid}, {action: "destroy", actor: self, outcome: "applied", planID: pid}},
		check: func(t *testing.T, f *reviewFixture, _, _ *engine.Plan) {
			if n := f.objectsOf(t, webWS); n != 0 {
				t.Errorf("%d record objects left after the destroy; want the record deleted with the workspace", n)
			}
		},
	}, {
		name: "failed, the error naming a registered credential",
		out: func(_, _ *engine.Plan) (*engine.Outcome, error) {
			return &engine.Outcome{Policy: annotations.ApplyAuto, Workspace: webWS}, fmt.Errorf("state backend: password %q rejected", secret)
		},
		events: []wantEvent{{typ: "Warning", reason: "ReconcileFailed", has: []string{`password "` + audit.Redacted + `" rejected`}, not: []string{secret}}},
		audit:  []wantAudit{{action: "apply", actor: self, outcome: "failed", has: `password "` + audit.Redacted + `" rejected`}},
		phase:  "failed",
	}, {
		name: "plan failed",
		out: func(_, _ *engine.Plan) (*engine.Outcome, error) {
			return &engine.Outcome{Policy: annotations.ApplyAuto, Workspace: webWS}, &engine.RunError{Op: "plan", Workspace: webWS, Diagnostics: "Error: no such region"}
		},
		events: []wantEvent{{typ: "Warning", reason: "PlanFailed", has: []string{"terraform plan in workspace " + webWS + ": Error: no such region"}}},
		audit:  []wantAudit{{action: "apply", actor: self, outcome: "failed", has: "no such region"}},
		phase:  "failed",
	}, {
		// The plan was made and approved in earlier calls: the failed
		// apply's line names it all the same, and its record entry fails.
		name: "apply of an approved plan failed",
		out: func(p, _ *engine.Plan) (*engine.Outcome, error) {
			return &engine.Outcome{Policy: annotations.ApplyManual, Workspace: webWS, Attempted: p,
					Approval: engine.Approval{Approved: true, Approvers: []string{"alice"}}},
				&engine.RunError{Op: "apply", Workspace: webWS, Diagnostics: "Error: name taken"}
		},
		events: []wantEvent{{typ: "Warning", reason: "ApplyFailed", has: []string{"name taken"}}},
		audit:  []wantAudit{{action: "apply", actor: self, outcome: "failed", planID: pid, has: "name taken"}},
		phase:  "failed",
		before: recordApplied,
		check: func(t *testing.T, f *reviewFixture, _, _ *engine.Plan) {
			if a := f.get(t, webWS).Applied; a != nil {
				t.Errorf("the record keeps the apply before the failed one: %+v", a)
			}
		},
	}, {
		// Nothing was applied: the last apply still answers for the object.
		name:   "plan failed after an apply",
		before: recordApplied,
		out: func(_, _ *engine.Plan) (*engine.Outcome, error) {
			return &engine.Outcome{Policy: annotations.ApplyAuto, Workspace: webWS}, &engine.RunError{Op: "plan", Workspace: webWS, Diagnostics: "Error: no such region"}
		},
		events: []wantEvent{{typ: "Warning", reason: "PlanFailed", has: []string{"no such region"}}},
		audit:  []wantAudit{{action: "apply", actor: self, outcome: "failed", has: "no such region"}},
		phase:  "failed",
		check: func(t *testing.T, f *reviewFixture, _, _ *engine.Plan) {
			if a := f.get(t, webWS).Applied; a == nil || a.HCLHash != "h0" {
				t.Errorf("a failed plan dropped the last apply: %+v", a)
			}
		},
	}, {
		// Nothing was decided: the object changed since the drift sweep
		// began, or went away while the work was queued.
		name: "skipped",
		out: func(p, _ *engine.Plan) (*engine.Outcome, error) {
			return &engine.Outcome{Policy: annotations.ApplyAuto, Workspace: webWS, Planned: p}, engine.ErrSkipped
		},
	}, {
		name: "gone",
		out: func(*engine.Plan, *engine.Plan) (*engine.Outcome, error) {
			return nil, fmt.Errorf("reconcile: %w", engine.ErrGone)
		},
	}}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			f := newReviewFixture(t, c.extra, false, c.objs...)
			f.redactor.credentials = func() []string { return []string{secret} }
			if c.s.event == nil {
				c.s = webSubject(records.KindChange)
			}
			if c.before != nil {
				c.before(t, f)
			}
			p, q := planAt(t, pid, 1, at), planAt(t, qid, 1, at.Add(-time.Hour))
			s := c.s
			var changeErr error
			if _, err := f.Run(t.Context(), &s, annotations.ApplyAuto, func(rv engine.Review) (*engine.Outcome, error) {
				if rv.Policy != annotations.ApplyAuto || rv.Approval == nil {
					t.Errorf("the change ran without its Review: %+v", rv)
				}
				out, err := c.out(p, q)
				changeErr = err
				return out, err
			}); err != changeErr { //nolint:errorlint // the very error
				t.Errorf("Run returned %v; the change returned %v", err, changeErr)
			}
			checkEvents(t, f.takeEvents(), c.events)
			lines, raw := f.auditLog(t)
			checkAudit(t, lines, c.s.String(), c.audit)
			if strings.Contains(raw, secret) {
				t.Errorf("the audit log holds the credential:\n%s", raw)
			}
			if got := f.phases.m[webWS]; got != c.phase {
				t.Errorf("phase %q; want %q", got, c.phase)
			}
			if c.check != nil {
				c.check(t, f, p, q)
			}
		})
	}
}

// recordApplied gives the web Service's record a last apply (hash h0).
func recordApplied(t *testing.T, f *reviewFixture) {
	t.Helper()
	_, err := f.store.Update(t.Context(), webWS, func(r *records.Record) error {
		r.Object, r.Applied = web, &records.LastApply{HCLHash: "h0", Outputs: map[string]json.RawMessage{"id": json.RawMessage(`"lb-1"`)}}
		return nil
	})
	testkit.Must(t, err)
}

// approvalNames lists the PlanApprovals left in the fake API server.
func approvalNames(t *testing.T, f *reviewFixture) []string {
	t.Helper()
	l, err := f.dyn.Resource(reviewapi.PlanApprovals).Namespace("example-ccm").List(t.Context(), metav1.ListOptions{})
	testkit.Must(t, err)
	var names []string
	for _, o := range l.Items {
		names = append(names, o.GetName())
	}
	slices.Sort(names)
	return names
}

// TestRetiredAnnotations: each retired annotation is reported once per
// object and value; others never.
func TestRetiredAnnotations(t *testing.T) {
	f := newReviewFixture(t, "", false)
	approve, unlock := string(annotations.LBApprovePlan), string(annotations.LBForceUnlock)
	other := webSubject(records.KindChange)
	other.ref.UID = "uid-2" // a new Service of the same name
	steps := []struct {
		s    Subject
		ann  map[string]string
		want []string // the annotations reported
	}{
		{webSubject(records.KindChange), map[string]string{approve: "plan-0123456789ab", string(annotations.LBName): "web"}, []string{approve}},
		{webSubject(records.KindChange), map[string]string{approve: "plan-0123456789ab"}, nil},
		{webSubject(records.KindChange), map[string]string{approve: "plan-0123456789ab", unlock: "lock-1"}, []string{unlock}},
		{webSubject(records.KindChange), map[string]string{approve: "plan-ba9876543210"}, []string{approve}},
		{other, map[string]string{approve: "plan-0123456789ab"}, []string{approve}},
		{other, nil, nil},
	}
	for i, st := range steps {
		f.RetiredAnnotations(st.s, st.ann)
		var got []string
		for _, e := range f.takeEvents() {
			if e.Type != "Warning" || e.Reason != "RetiredAnnotation" || !strings.Contains(e.Message, "is ignored: ") {
				t.Errorf("step %d: event %s %s %q", i, e.Type, e.Reason, e.Message)
			}
			name, _, _ := strings.Cut(strings.TrimPrefix(e.Message, "Annotation "), " ")
			got = append(got, name)
		}
		if !slices.Equal(got, st.want) {
			t.Errorf("step %d: reported %v; want %v", i, got, st.want)
		}
	}
}
