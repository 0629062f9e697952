package reviewpage

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"

	"github.com/example/cloud-provider-example/objectref"
	"github.com/example/cloud-provider-example/reviewapi"
)

// Event is one entry of an object's trail: an event the controller
// recorded on it, or a PlanApproval or StateUnlock naming it.
type Event struct {
	At      time.Time
	Type    string // Normal, Warning; or the review kind
	Reason  string
	Message string
	// By is who made it (approvals and unlocks).
	By string
}

// eventsOf are the events on ref's object (Services and Gateways carry
// the controller's events), oldest first. A reviewer who may not read
// events gets an error saying so, not an empty trail.
func (s *Server) eventsOf(ctx context.Context, ref objectref.Ref) ([]Event, error) {
	if ref.Kind != objectref.KindService && ref.Kind != objectref.KindGateway {
		return nil, nil
	}
	sel := fields.Set{"involvedObject.kind": ref.Kind, "involvedObject.name": ref.Name}.String()
	l, err := s.cfg.Client.CoreV1().Events(ref.Namespace).List(ctx, metav1.ListOptions{FieldSelector: sel})
	if err != nil {
		return nil, fmt.Errorf("list events of %s: %w", ref.Describe(), err)
	}
	var out []Event
	for _, e := range l.Items {
		out = append(out, Event{At: eventTime(e), Type: e.Type, Reason: e.Reason, Message: e.Message})
	}
	sortTrail(out)
	return out, nil
}

func eventTime(e corev1.Event) time.Time {
	switch {
	case !e.LastTimestamp.IsZero():
		return e.LastTimestamp.Time
	case !e.EventTime.IsZero():
		return e.EventTime.Time
	}
	return e.CreationTimestamp.Time
}

// reviewsOf are the PlanApprovals and StateUnlocks naming ref's object.
func (s *Server) reviewsOf(ctx context.Context, ref objectref.Ref) ([]Event, error) {
	pas, err := reviewapi.ListPlanApprovals(ctx, s.cfg.Dynamic, s.cfg.Namespace)
	if err != nil {
		return nil, fmt.Errorf("list %ss: %w", reviewapi.KindPlanApproval, err)
	}
	sus, err := reviewapi.ListStateUnlocks(ctx, s.cfg.Dynamic, s.cfg.Namespace)
	if err != nil {
		return nil, fmt.Errorf("list %ss: %w", reviewapi.KindStateUnlock, err)
	}
	same := func(o objectref.Ref) bool {
		return o.Kind == ref.Kind && o.Namespace == ref.Namespace && o.Name == ref.Name
	}
	var out []Event
	for _, a := range pas {
		if same(a.Spec.Object) {
			out = append(out, Event{At: a.Created, Type: reviewapi.KindPlanApproval, Reason: a.Name, By: a.Spec.Approver,
				Message: "approves " + a.Spec.PlanID + comment(a.Spec.Comment)})
		}
	}
	for _, u := range sus {
		if same(u.Spec.Object) {
			out = append(out, Event{At: u.Created, Type: reviewapi.KindStateUnlock, Reason: u.Name, By: u.Spec.Requester,
				Message: "asks to force open lock " + u.Spec.LockID + comment(u.Spec.Comment)})
		}
	}
	sortTrail(out)
	return out, nil
}

func comment(c string) string {
	if c == "" {
		return ""
	}
	return ": " + c
}

func sortTrail(es []Event) {
	slices.SortStableFunc(es, func(a, b Event) int { return cmp.Compare(a.At.UnixNano(), b.At.UnixNano()) })
}
