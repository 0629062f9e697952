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
	"github.com/example/cloud-provider-example/records"
	"github.com/example/cloud-provider-example/reviewapi"
)

// Event is one entry of an object's trail: an event the controller
// recorded on it, or a PlanApproval, StateUnlock or AddressRelease naming
// it.
type Event struct {
	At      time.Time
	Type    string // Normal, Warning; or the review kind
	Reason  string
	Message string
	// By is who made it (approvals and requests).
	By string
}

// eventsOf are the controller's events on rec's object, oldest first:
// Services and Gateways carry their own; the others' (addresses, pools,
// the route set) go to the record's ConfigMap. A reviewer who may not
// read events gets an error saying so, not an empty trail.
func (s *Server) eventsOf(ctx context.Context, rec *records.Record) ([]Event, error) {
	ns, kind, name := s.cfg.Namespace, "ConfigMap", records.IndexName(rec.Workspace)
	if ref := rec.Object; ref.Kind == objectref.KindService || ref.Kind == objectref.KindGateway {
		ns, kind, name = ref.Namespace, ref.Kind, ref.Name
	}
	sel := fields.Set{"involvedObject.kind": kind, "involvedObject.name": name}.String()
	l, err := s.cfg.Client.CoreV1().Events(ns).List(ctx, metav1.ListOptions{FieldSelector: sel})
	if err != nil {
		return nil, fmt.Errorf("list events of %s: %w", rec.Object.Describe(), err)
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

// reviewsOf are the PlanApprovals, StateUnlocks and AddressReleases
// naming ref's object.
func (s *Server) reviewsOf(ctx context.Context, ref objectref.Ref) ([]Event, error) {
	pas, err := reviewapi.ListPlanApprovals(ctx, s.cfg.Dynamic, s.cfg.Namespace)
	if err != nil {
		return nil, fmt.Errorf("list %ss: %w", reviewapi.KindPlanApproval, err)
	}
	sus, err := reviewapi.ListStateUnlocks(ctx, s.cfg.Dynamic, s.cfg.Namespace)
	if err != nil {
		return nil, fmt.Errorf("list %ss: %w", reviewapi.KindStateUnlock, err)
	}
	var ars []*reviewapi.AddressRelease
	if ref.Kind == objectref.KindAddress {
		if ars, err = reviewapi.ListAddressReleases(ctx, s.cfg.Dynamic, s.cfg.Namespace); err != nil {
			return nil, fmt.Errorf("list %ss: %w", reviewapi.KindAddressRelease, err)
		}
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
	for _, r := range ars {
		if same(r.Spec.Address) {
			out = append(out, Event{At: r.Created, Type: reviewapi.KindAddressRelease, Reason: r.Name, By: r.Spec.Requester,
				Message: "asks to release it" + comment(r.Spec.Comment)})
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
