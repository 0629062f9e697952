package review

import (
	"errors"
	"fmt"

	v1 "k8s.io/api/core/v1"

	"github.com/example/cloud-provider-example/annotations"
	"github.com/example/cloud-provider-example/engine"
	"github.com/example/cloud-provider-example/lbmodel"
	"github.com/example/cloud-provider-example/objectref"
	"github.com/example/cloud-provider-example/termsafe"
)

// Eventf records an event on s's object, secrets scrubbed (an error's
// text may quote a credential): how the provider reports what it refuses
// itself (an adoption, a group) on the object's reconcile.
func (b *Board) Eventf(s Subject, typ, reason, format string, args ...any) {
	b.eventf(s, typ, reason, format, args...)
}

func (b *Board) eventf(s Subject, typ, reason, format string, args ...any) {
	to := s.event
	if s.route != nil && routeReasons[reason] {
		to = s.route
	}
	if to != nil {
		// Redacted first: escaping could change a secret's text past
		// the redactor. Then inert: events reach terminals.
		b.recorder.Event(to, typ, reason, termsafe.Text(b.redactor.secrets.String(fmt.Sprintf(format, args...))))
	}
}

// saidSize bounds the one-time messages remembered: one of them older
// than the newest saidSize may be said again (an event or audit line
// repeated), never lost.
const saidSize = 4096

// once reports a message the first time it is seen.
func (b *Board) once(key string) bool {
	b.saidMu.Lock()
	defer b.saidMu.Unlock()
	if _, seen := b.said.Get(key); seen {
		return false
	}
	b.said.Add(key, true)
	return true
}

// Failed records the warning event of a reconcile that failed before the
// engine planned (an invalid Service): the same reasons as Report gives.
func (b *Board) Failed(s Subject, err error) {
	if s.guest != nil {
		// A guest sees errors about its own objects only: the group's
		// are its owners'.
		b.eventf(Subject{ref: objectref.Service(s.guest), event: s.guest}, v1.EventTypeWarning, "GroupFailed", "%v", GuestError(s.ref, err))
	}
	if s.route != nil {
		b.eventf(Subject{event: s.route}, v1.EventTypeWarning, routeFailure,
			"The rules of this route on Gateway %s/%s could not be applied; the Gateway's events say why (its owners read them)", s.meta.Namespace, s.meta.Name)
	}
	b.eventf(s, v1.EventTypeWarning, failedReason(err), "%v", err)
}

// GuestError is what a guest of group is told of err, a failure of the
// group's reconcile: that it failed, and where its owners see why.
func GuestError(group objectref.Ref, err error) error {
	if err == nil {
		return nil
	}
	return fmt.Errorf("%s could not be converged; the events of its namespace %s say why", group.Describe(), group.Namespace)
}

// reasoned is an error that names its own event reason: the provider's
// errors (a TLS Secret that cannot serve, certificates the distribution
// cannot take), which this package does not import.
type reasoned interface {
	error
	EventReason() string
}

// failedReason is the event reason of a failed reconcile.
func failedReason(err error) string {
	reason := "ApplyFailed"
	var re *engine.RunError
	var ae *annotations.Error
	var ie *lbmodel.InputError
	var tm *engine.TooManyListenersError
	var pe *engine.UnsupportedProtocolError
	var own reasoned
	switch {
	case errors.As(err, &own):
		reason = own.EventReason() // the tenant's to fix, or the distribution's; nothing was planned
	case errors.As(err, &ae), errors.As(err, &ie), errors.As(err, &tm), errors.As(err, &pe):
		reason = "InvalidService" // the tenant's to fix; nothing was planned
	case errors.Is(err, engine.ErrOwnerMismatch):
		reason = "WorkspaceOwnedByAnother"
	case errors.Is(err, engine.ErrStateLocked):
		reason = "StateLocked"
	case errors.Is(err, engine.ErrInUse):
		reason = "DeleteBlocked" // another object still uses what the apply deletes; retried with back-off
	case errors.As(err, &re) && re.Op == "plan":
		reason = "PlanFailed"
	case !errors.As(err, &re):
		reason = "ReconcileFailed"
	}
	return reason
}
