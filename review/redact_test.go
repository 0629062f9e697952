package review

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/example/cloud-provider-example/annotations"
	"github.com/example/cloud-provider-example/audit"
	"github.com/example/cloud-provider-example/engine"
	"github.com/example/cloud-provider-example/records"
)

// TestRedactCredentials: the backend's credentials are read when given and
// again, for rotated ones, at most once per credentialsRefresh as
// outcomes are reported; every value read stays scrubbed.
func TestRedactCredentials(t *testing.T) {
	f := newReviewFixture(t, "", false)
	reads, current := 0, "first-password"
	f.RedactCredentials(func() []string { reads++; return []string{current} })
	if reads != 1 {
		t.Fatalf("%d reads when given; want 1", reads)
	}
	fail := func(pw string) {
		f.Report(t.Context(), webSubject(records.KindChange), &engine.Outcome{Policy: annotations.ApplyAuto, Workspace: webWS},
			fmt.Errorf("state backend: password %q rejected", pw))
	}
	current = "rotated-password"
	fail("first-password")
	if reads != 1 {
		t.Fatalf("%d reads within %v; want 1", reads, credentialsRefresh)
	}
	f.redactor.at.Store(time.Now().Add(-credentialsRefresh - time.Second).UnixNano())
	fail("rotated-password")
	if reads != 2 {
		t.Fatalf("%d reads after %v; want 2", reads, credentialsRefresh)
	}
	evs := f.takeEvents()
	checkEvents(t, evs, []wantEvent{
		{typ: "Warning", reason: "ReconcileFailed", has: []string{audit.Redacted}, not: []string{"first-password"}},
		{typ: "Warning", reason: "ReconcileFailed", has: []string{audit.Redacted}, not: []string{"rotated-password"}},
	})
	if _, raw := f.auditLog(t); strings.Contains(raw, "first-password") || strings.Contains(raw, "rotated-password") {
		t.Errorf("the audit log holds a credential:\n%s", raw)
	}
}
