package records

import (
	"slices"

	"github.com/example/cloud-provider-example/termsafe"
)

// inert escapes the control characters (termsafe) of the texts a record
// keeps for people to read: each plan's text, error, rule messages and
// approval comments, and the holder of a lock. They quote what tenants
// chose (a Service's annotations, a port's name, terraform's messages
// about them), and whoever reads them - examplectl, kubectl get -o yaml, a
// browser - must see them inert: an escape sequence cannot clear a
// reviewer's screen, a carriage return cannot overwrite a line, a bidi
// control cannot reorder what they read.
//
// Identifiers are kept as they are: user names (Author, Approval.By) are
// compared with the approvers the API server authenticates, the lock id is
// what a StateUnlock must name, and the summary's addresses and reasons
// are policy input when a waiting plan is loaded again. Whoever prints
// them escapes them (examplectl does).
//
// The slices and lock rec shares with the caller are copied before they
// change, never written through.
func inert(rec *Record) {
	for i := range rec.Plans {
		p := &rec.Plans[i]
		p.Text, p.Error = termsafe.Text(p.Text), termsafe.Text(p.Error)
		if slices.ContainsFunc(p.Verdicts, func(v Verdict) bool { return termsafe.Text(v.Message) != v.Message }) {
			p.Verdicts = slices.Clone(p.Verdicts)
			for j := range p.Verdicts {
				p.Verdicts[j].Message = termsafe.Text(p.Verdicts[j].Message)
			}
		}
		if slices.ContainsFunc(p.Approvals, func(a Approval) bool { return termsafe.Text(a.Comment) != a.Comment }) {
			p.Approvals = slices.Clone(p.Approvals)
			for j := range p.Approvals {
				p.Approvals[j].Comment = termsafe.Text(p.Approvals[j].Comment)
			}
		}
	}
	if l := rec.Lock; l != nil && termsafe.Line(l.Holder) != l.Holder {
		c := *l
		c.Holder = termsafe.Line(l.Holder)
		rec.Lock = &c
	}
}
