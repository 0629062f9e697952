package main

import (
	"context"
	"fmt"
	"strings"
	"unicode/utf8"

	apierrors "k8s.io/apimachinery/pkg/api/errors"

	"github.com/example/cloud-provider-example/objectref"
	"github.com/example/cloud-provider-example/records"
	"github.com/example/cloud-provider-example/reviewapi"
	"github.com/example/cloud-provider-example/termsafe"
)

// resolveToAct is what approve and unlock do before acting on ref's
// record as the reviewer: check the comment, resolve ref (its Service
// needed) and refuse a record of an earlier Service of the same name.
func (c *cluster) resolveToAct(ctx context.Context, ref objectref.Ref, comment string) (*recorded, error) {
	if err := checkComment(comment); err != nil {
		return nil, err
	}
	t, err := c.resolve(ctx, ref, true)
	if err != nil {
		return nil, err
	}
	if err := checkIncarnation(t); err != nil {
		return nil, err
	}
	return t, nil
}

// checkIncarnation refuses a record made for an earlier Service of the
// same name: its plans are not the current Service's.
func checkIncarnation(t *recorded) error {
	if t.service == nil || t.record.Object.UID == "" || t.record.Object.UID == string(t.service.UID) {
		return nil
	}
	return fmt.Errorf("the plan record of %s belongs to an earlier Service of that name (uid %s, the Service's is %s): wait for the controller to plan the current one",
		t.ref.Describe(), t.record.Object.UID, t.service.UID)
}

// reviewedObject is what an approval or unlock request names: for a
// Service the one checked, by uid, so that it approves nothing of a
// Service deleted and created again meanwhile; for a Gateway the one its
// record was planned for, by uid.
func reviewedObject(t *recorded) objectref.Ref {
	switch t.ref.Kind {
	case objectref.KindService:
		return objectref.Service(t.service)
	case objectref.KindGateway:
		return t.record.Object
	}
	return t.ref
}

// explainCreate explains a failed create of a review.example.com object.
func (c *cluster) explainCreate(err error, kind string) error {
	if apierrors.IsNotFound(err) {
		return fmt.Errorf("create %s in namespace %s: %w (is the %s API installed? see deploy/base/crd-*.yaml)", kind, c.namespace, err, reviewapi.Group)
	}
	return c.explain(err, "create "+kind+" in namespace "+c.namespace)
}

// maxComment is the CRDs' limit on spec.comment, in characters.
const maxComment = 1024

func checkComment(s string) error {
	if n := utf8.RuneCountInString(s); n > maxComment {
		return fmt.Errorf("--comment is %d characters; at most %d", n, maxComment)
	}
	return nil
}

// planLine is "plan-x (change, +1 ~0 -0, planned ... ago)".
func planLine(p *records.Plan) string {
	return termsafe.Line(fmt.Sprintf("%s (%s, %s, planned %s ago)", p.ID, p.Kind, p.Summary.String(), age(p.PlannedAt)))
}

// approvedBy is user's approval of p, or nil.
func approvedBy(p *records.Plan, user string) *records.Approval {
	for i := range p.Approvals {
		if p.Approvals[i].By == user {
			return &p.Approvals[i]
		}
	}
	return nil
}

// approvalsCell is "1/2 bob (3m)" for a table: for a plan awaiting
// approval its distinct approvers of the number required now, then for any
// plan who approved and how long ago; - for none.
func approvalsCell(rec *records.Record, p *records.Plan) string {
	if p == nil {
		return "-"
	}
	var cell []string
	if p.Outcome == records.AwaitingApproval {
		cell = append(cell, fmt.Sprintf("%d/%d", len(p.Approvers()), rec.Required()))
	}
	var who []string
	for _, a := range p.Approvals {
		who = append(who, fmt.Sprintf("%s (%s)", termsafe.Line(a.By), age(a.At)))
	}
	if len(who) > 0 {
		cell = append(cell, strings.Join(who, ", "))
	}
	if len(cell) == 0 {
		return "-"
	}
	return strings.Join(cell, " ")
}

// verdictsCell is "no-public-lb (deny), big-change (require-approval)".
func verdictsCell(p *records.Plan) string {
	if p == nil || len(p.Verdicts) == 0 {
		return "-"
	}
	var out []string
	for _, v := range p.Verdicts {
		out = append(out, fmt.Sprintf("%s (%s)", termsafe.Line(v.Rule), termsafe.Line(v.Effect)))
	}
	return strings.Join(out, ", ")
}
