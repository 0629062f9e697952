package reviewpage

import (
	"cmp"
	"fmt"
	"slices"
	"strings"

	"github.com/example/cloud-provider-example/objectref"
	"github.com/example/cloud-provider-example/records"
)

// QueueItem is a plan awaiting approval.
type QueueItem struct {
	Workspace string
	Object    objectref.Ref
	Record    *records.Record
	Plan      *records.Plan
	// Have and Need count distinct approvers.
	Have, Need int
}

// Queue is every plan awaiting approval, newest first: the page's queue
// and examplectl review's.
func Queue(all []*records.Record) []QueueItem {
	var out []QueueItem
	for _, r := range all {
		for _, p := range r.Awaiting() {
			out = append(out, QueueItem{Workspace: r.Workspace, Object: r.Object, Record: r, Plan: p, Have: len(p.Approvers()), Need: r.Required()})
		}
	}
	slices.SortStableFunc(out, func(a, b QueueItem) int {
		return cmp.Or(b.Plan.PlannedAt.Compare(a.Plan.PlannedAt), cmp.Compare(a.Workspace, b.Workspace))
	})
	return out
}

// byObject sorts records by kind, namespace and name.
func byObject(all []*records.Record) []*records.Record {
	out := slices.Clone(all)
	slices.SortFunc(out, func(a, b *records.Record) int {
		return cmp.Or(cmp.Compare(a.Object.Kind, b.Object.Kind), cmp.Compare(a.Object.Namespace, b.Object.Namespace),
			cmp.Compare(a.Object.Name, b.Object.Name), cmp.Compare(a.Workspace, b.Workspace))
	})
	return out
}

// ResourceRow is one resource change of a plan.
type ResourceRow struct {
	Address, Action, Reason string
	Importing               bool
	// Forced are the attributes forcing a replacement.
	Forced []string
}

// PlanView is everything the plan page shows.
type PlanView struct {
	Record *records.Record
	Plan   *records.Plan
	Text   string
	// TextError: the plan's text could not be read.
	TextError string
	Resources []ResourceRow
	Listeners []ListenerChange
	// ListenersError: the renderings could not be compared.
	ListenersError string
	Diff           []DiffLine
	// DiffNote says what the diff compares, or why there is none.
	DiffNote   string
	Have, Need int
	// Ignored are the controller's words on approvals it did not count
	// (ApprovalIgnored events of the object).
	Ignored []Event
	// Mine: the user made a change this plan carries (they cannot approve).
	Mine bool
	// Approved: the user already approved it.
	Approved bool
}

// newPlanView builds the plan page's view of p in r; text is its plan
// text (terraform show).
func newPlanView(r *records.Record, p *records.Plan, text, user string, events []Event) *PlanView {
	v := &PlanView{Record: r, Plan: p, Text: text, Have: len(p.Approvers()), Need: r.Required()}
	forced := forcedBy(text)
	for _, rc := range p.Summary.Resources {
		v.Resources = append(v.Resources, ResourceRow{Address: rc.Address, Action: rc.Action, Reason: rc.Reason, Importing: rc.Importing, Forced: forced[rc.Address]})
	}
	latest := latestPlan(r)
	switch {
	case latest == nil || latest.ID != p.ID && latest.HCLHash != p.HCLHash:
		v.DiffNote = "The record keeps the current rendering only; this plan was made from an earlier one."
	case len(r.AppliedFiles) == 0 && r.Applied != nil:
		v.DiffNote = "The applied rendering was not recorded (applied before the record kept it): the planned files are shown whole."
		v.Diff = hclDiff(nil, r.Files)
	case len(r.AppliedFiles) == 0:
		v.DiffNote = "Nothing applied yet: the planned files are shown whole."
		v.Diff = hclDiff(nil, r.Files)
	default:
		v.DiffNote = "The rendered files, against the ones last applied."
		v.Diff = hclDiff(r.AppliedFiles, r.Files)
	}
	if ls, err := listenerChanges(r.AppliedFiles, r.Files); err != nil {
		v.ListenersError = err.Error()
	} else {
		v.Listeners = ls
	}
	for _, e := range events {
		if e.Reason == "ApprovalIgnored" && (strings.Contains(e.Message, p.ID) || !strings.Contains(e.Message, "plan-")) {
			v.Ignored = append(v.Ignored, e)
		}
	}
	v.Mine = slices.Contains(p.AuthorSet().Authors, user)
	v.Approved = slices.Contains(p.Approvers(), user)
	return v
}

// latestPlan is r's newest plan, nil when it has none.
func latestPlan(r *records.Record) *records.Plan {
	var latest *records.Plan
	for i := range r.Plans {
		if latest == nil || r.Plans[i].PlannedAt.After(latest.PlannedAt) {
			latest = &r.Plans[i]
		}
	}
	return latest
}

// sortedPlans are r's plans, newest first.
func sortedPlans(r *records.Record) []records.Plan {
	plans := slices.Clone(r.Plans)
	slices.SortStableFunc(plans, func(a, b records.Plan) int { return b.PlannedAt.Compare(a.PlannedAt) })
	return plans
}

// describe is "Service shop/web" for a record's object.
func describe(r objectref.Ref) string { return r.Describe() }

// changesOf is "+1 ~0 -1" with replacements counted apart: "1 replaced".
func changesOf(p *records.Plan) string {
	s := p.Summary.String()
	n := 0
	for _, rc := range p.Summary.Resources {
		if rc.Action == "replace" {
			n++
		}
	}
	if n > 0 {
		s += fmt.Sprintf(", %d replaced", n)
	}
	return s
}

// Address is a reserved address as its record's last apply says: what
// the page shows of it and whether it offers its release.
type Address struct {
	ID, IP string
	// Holder is who holds it ("Service ns/name (lb-…)"), "" when detached;
	// Waiting, a plan of it awaiting approval (a move, or its release).
	// Either way it is not released now.
	Holder  string
	Waiting *records.Plan
}

// Releasable tells whether the page offers a's release.
func (a *Address) Releasable() bool { return a.IP != "" && a.Holder == "" && a.Waiting == nil }

// addressOf is rec's address, nil when rec is no address's.
func addressOf(rec *records.Record) *Address {
	if rec.Object.Kind != objectref.KindAddress {
		return nil
	}
	a := rec.Applied
	out := &Address{ID: a.Output("id"), IP: a.Output("ip")}
	if lb := a.Output("load_balancer_id"); lb != "" {
		out.Holder = strings.TrimSpace(a.Output("holder") + " (" + lb + ")")
	}
	if w := rec.Awaiting(); len(w) > 0 {
		out.Waiting = w[0]
	}
	return out
}
