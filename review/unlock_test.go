package review

import (
	"errors"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/example/cloud-provider-example/annotations"
	"github.com/example/cloud-provider-example/engine"
	"github.com/example/cloud-provider-example/internal/testkit"
	"github.com/example/cloud-provider-example/objectref"
	"github.com/example/cloud-provider-example/records"
	"github.com/example/cloud-provider-example/reviewapi"
)

// TestUnlock: unlock requests that force nothing open (terraform's
// force-unlock itself is the e2e's), and forced unlocks' reports.
func TestUnlock(t *testing.T) {
	const recorded, stale = "9296823b-0ebb-7d08-bd17-217709d58ae3", "11111111-2222-3333-4444-555555555555"
	cases := []struct {
		name     string
		noPolicy bool
		lock     bool // a lock is recorded
		objs     []*unstructured.Unstructured
		rendered bool
		// policyAt is when the identity policy was installed (zero:
		// long ago).
		policyAt time.Time
		events   []wantEvent
		audit    []wantAudit
		left     int // StateUnlocks left
	}{{
		name: "no request",
	}, {
		name:     "the policy is missing",
		noPolicy: true,
		objs:     []*unstructured.Unstructured{stateUnlockObj("u1", web, recorded, "alice")},
		events:   []wantEvent{{typ: "Warning", reason: "UnlockIgnored", has: []string{"not honoured while the admission policy"}}},
		left:     1,
	}, {
		name:     "made before the policy",
		objs:     []*unstructured.Unstructured{reviewObj(reviewapi.KindStateUnlock, "u1", &reviewapi.StateUnlockSpec{Object: web, LockID: recorded, Requester: "mallory"}, time.Now().Add(-time.Hour))},
		lock:     true,
		policyAt: time.Now().Add(-30 * time.Minute),
		rendered: true,
		events: []wantEvent{{typ: "Warning", reason: "UnlockIgnored", has: []string{`StateUnlock u1, naming "mallory" as its requester: it was made before the admission policy that verifies requesters`,
			"nothing was forced open: ask again"}}},
		// mallory was never checked: the controller refused it.
		audit: []wantAudit{{action: "force-unlock", actor: self, has: `ignored: StateUnlock u1 names "mallory" as its requester, unchecked: it was made before the admission policy`}},
	}, {
		name:     "another lock than the one recorded",
		lock:     true,
		objs:     []*unstructured.Unstructured{stateUnlockObj("u1", web, stale, "alice")},
		rendered: true,
		events:   []wantEvent{{typ: "Warning", reason: "UnlockIgnored", has: []string{`StateUnlock u1 by "alice" names lock ` + stale + ", but the recorded lock is " + recorded}}},
		audit:    []wantAudit{{action: "force-unlock", actor: "alice", has: "ignored: the recorded lock is " + recorded}},
	}, {
		name:     "no lock recorded",
		objs:     []*unstructured.Unstructured{stateUnlockObj("u1", web, stale, "alice"), stateUnlockObj("u2", objectref.Ref{Kind: objectref.KindService, Namespace: "shop", Name: "api"}, stale, "bob")},
		rendered: true,
		events:   []wantEvent{{typ: "Warning", reason: "UnlockIgnored", has: []string{"but no lock is recorded: nothing was forced open"}}},
		audit:    []wantAudit{{action: "force-unlock", actor: "alice", has: "ignored: no lock is recorded"}},
		left:     1, // another object's
	}}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			f := newReviewFixture(t, "", c.noPolicy, c.objs...)
			if !c.policyAt.IsZero() {
				f.policyInstalled(t, c.policyAt)
			}
			if c.lock {
				f.updateRecord(t.Context(), webSubject(records.KindChange), &engine.Outcome{Policy: annotations.ApplyAuto, Workspace: webWS},
					&engine.RunError{Op: "plan", Workspace: webWS, Diagnostics: lockDiag, Err: errors.New("exit status 1")}, time.Now())
			}
			rendered := false
			for range 2 { // said once
				f.Unlock(t.Context(), nil, webSubject(records.KindChange), func() (engine.Job, error) {
					rendered = true
					return engine.Job{Key: webWS}, nil
				})
			}
			if rendered != c.rendered {
				t.Errorf("rendered %v; want %v", rendered, c.rendered)
			}
			checkEvents(t, f.takeEvents(), c.events)
			lines, _ := f.auditLog(t)
			checkAudit(t, lines, web.String(), c.audit)
			l, err := f.dyn.Resource(reviewapi.StateUnlocks).Namespace("example-ccm").List(t.Context(), metav1.ListOptions{})
			testkit.Must(t, err)
			if len(l.Items) != c.left {
				t.Errorf("%d StateUnlocks left; want %d (a request is used up)", len(l.Items), c.left)
			}
		})
	}

	t.Run("forced open", func(t *testing.T) {
		f := newReviewFixture(t, "", false)
		f.forceUnlocked(webSubject(records.KindChange), webWS, recorded, "alice", `requested by "alice" (StateUnlock u1)`)
		checkEvents(t, f.takeEvents(), []wantEvent{{typ: "Warning", reason: "ForceUnlocked", has: []string{"lock " + recorded + ` (requested by "alice" (StateUnlock u1))`}}})
		lines, _ := f.auditLog(t)
		checkAudit(t, lines, web.String(), []wantAudit{{action: "force-unlock", actor: "alice", has: recorded}})
		if lines[0].Workspace != webWS || lines[0].Details["reason"] != `requested by "alice" (StateUnlock u1)` {
			t.Errorf("audit line %+v", lines[0])
		}
	})
}

// TestStaleLockForced: the runner's report of a stale lock it forced open
// is an event nowhere (only the workspace is known) and an audit line by
// the controller, saying whose lock it was.
func TestStaleLockForced(t *testing.T) {
	f := newReviewFixture(t, "", false)
	created := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	f.StaleLockForced(webWS, "lock-1", "terraform@old-pod", created)
	if evs := f.takeEvents(); len(evs) != 0 {
		t.Errorf("events on a workspace: %s", eventsText(evs))
	}
	lines, _ := f.auditLog(t)
	checkAudit(t, lines, "Workspace "+webWS, []wantAudit{{action: "force-unlock", actor: self, has: `stale: held by "terraform@old-pod" since 2026-03-01T12:00:00Z`}})
	if lines[0].Workspace != webWS || lines[0].Details["lockID"] != "lock-1" {
		t.Errorf("audit line %+v", lines[0])
	}
}
