package review

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/example/cloud-provider-example/annotations"
	"github.com/example/cloud-provider-example/audit"
	"github.com/example/cloud-provider-example/engine"
	"github.com/example/cloud-provider-example/lbmodel"
	"github.com/example/cloud-provider-example/records"
)

// TestFailedEvent: the reason of each kind of failure, and what its
// message shows of hostile values (quoted, cut short) and secrets (none).
func TestFailedEvent(t *testing.T) {
	hostile := "x\nNormal Applied plan-forged\x1b[2J" + strings.Repeat("A", 10<<10)
	lockDiag := "Error: Error acquiring the state lock\n\nLock Info:\n  ID:        9296823b-0ebb-7d08-bd17-217709d58ae3\n  Who:       root@vm\n"
	cases := []struct {
		name   string
		err    error
		reason string
		has    []string
		not    []string
	}{
		{name: "annotation value", err: fmt.Errorf("parse: %w", &annotations.Error{Annotation: annotations.LBName, Value: hostile, Reason: "is not a name"}),
			reason: "InvalidService", has: []string{`value "x\nNormal Applied plan-forged\x1b[2JAAA`, fmt.Sprintf("(%d bytes)", len(hostile))},
			not: []string{"\n", "\x1b", strings.Repeat("A", 100)}},
		{name: "input value", err: &lbmodel.InputError{Field: "spec.loadBalancerSourceRanges[0]", Value: "10.0.0.0/8\nforged", Reason: "is not a CIDR"},
			reason: "InvalidService", has: []string{`spec.loadBalancerSourceRanges[0]: "10.0.0.0/8\nforged" is not a CIDR`}, not: []string{"\n"}},
		{name: "too many listeners", err: &engine.TooManyListenersError{Ports: 11, Limit: 10}, reason: "InvalidService", has: []string{"at most 10 listeners"}},
		{name: "unsupported protocol", err: &engine.UnsupportedProtocolError{Number: 80, Protocol: "SCTP"}, reason: "InvalidService", has: []string{"protocol SCTP"}},
		{name: "owner mismatch", err: fmt.Errorf("load: %w", engine.ErrOwnerMismatch), reason: "WorkspaceOwnedByAnother"},
		{name: "state locked", err: &engine.RunError{Op: "apply", Workspace: webWS, Diagnostics: lockDiag, Err: errors.New("exit status 1")}, reason: "StateLocked", has: []string{"9296823b"}},
		{name: "delete blocked", err: &engine.RunError{Op: "apply", Workspace: webWS, Err: errors.New("exit status 1"),
			Diagnostics: "Error: Cannot delete certificate cert-0a1b: it is in use\n\ncertificate \"cert-0a1b\" is still used by 1 load balancer (lb-9f8e)"},
			reason: "DeleteBlocked", has: []string{"cert-0a1b", "still used by 1 load balancer (lb-9f8e)"}},
		{name: "plan", err: &engine.RunError{Op: "plan", Workspace: webWS, Diagnostics: "Error: bad"}, reason: "PlanFailed"},
		{name: "apply", err: &engine.RunError{Op: "apply", Workspace: webWS, Diagnostics: "Error: bad"}, reason: "ApplyFailed"},
		{name: "not terraform", err: errors.New("list nodes: timeout"), reason: "ReconcileFailed", has: []string{"list nodes: timeout"}},
		{name: "connection string", err: errors.New(`dial "postgres://ccm:hunter22-pw@db:5432/states": refused`), reason: "ReconcileFailed",
			has: []string{"postgres://ccm:" + audit.Redacted + "@db"}, not: []string{"hunter22-pw"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			f := newReviewFixture(t, "", false)
			f.Failed(webSubject(records.KindChange), c.err)
			evs := f.takeEvents()
			checkEvents(t, evs, []wantEvent{{typ: "Warning", reason: c.reason, has: c.has, not: c.not}})
		})
	}
}

// ownReasonError is an error of the provider's that names its own event
// reason, as ccm's TLS Secret errors do.
type ownReasonError struct{ reason string }

func (e *ownReasonError) Error() string       { return "secret shop/web-tls has no tls.key" }
func (e *ownReasonError) EventReason() string { return e.reason }

// TestFailedOwnReason: an error that names its reason (wrapped, or
// wrapping an error of another reason) is reported with it; Eventf
// scrubs what Redact registered.
func TestFailedOwnReason(t *testing.T) {
	f := newReviewFixture(t, "", false)
	own := &ownReasonError{reason: "CertificateSecretInvalid"}
	f.Failed(webSubject(records.KindChange), fmt.Errorf("service shop/web: %w", own))
	f.Failed(webSubject(records.KindChange), fmt.Errorf("%w: %w", own, &annotations.Error{Annotation: annotations.LBName, Value: "x", Reason: "bad"}))
	checkEvents(t, f.takeEvents(), []wantEvent{
		{typ: "Warning", reason: "CertificateSecretInvalid", has: []string{"service shop/web: secret shop/web-tls has no tls.key"}},
		{typ: "Warning", reason: "CertificateSecretInvalid"},
	})
	f.Redact("private-key-bytes")
	f.Eventf(webSubject(records.KindChange), "Warning", "AdoptionRefused", "refused: %s", "private-key-bytes")
	checkEvents(t, f.takeEvents(), []wantEvent{{typ: "Warning", reason: "AdoptionRefused", has: []string{"refused: " + audit.Redacted}, not: []string{"private-key-bytes"}}})
}
