package main

import (
	"bytes"
	"testing"
	"time"

	"github.com/example/cloud-provider-example/records"
)

// Names, comments and messages others chose cannot drive the terminal
// nor break a table: every cell is one line, its controls escaped.
func TestRowEscapes(t *testing.T) {
	for in, want := range map[string]string{
		"alice@example.com":         "alice@example.com",
		"Zoë Ünïcode ✓":             "Zoë Ünïcode ✓",
		"evil\x1b[2J\x1b]0;pwned\a": `evil\x1b[2J\x1b]0;pwned\x07`,
		"two\nlines\tand\rtab":      `two\nlines\tand\rtab`,
		"\u202eyned":                `\u202eyned`,
	} {
		var b bytes.Buffer
		row(&b, in, "next")
		if got := b.String(); got != want+"\tnext\n" {
			t.Errorf("row(%q) = %q; want %q", in, got, want+"\tnext\n")
		}
	}
}

func TestCells(t *testing.T) {
	rec := &records.Record{RequiredApprovals: 2}
	approved := []records.Approval{{By: "bob", At: ago(3 * time.Minute)}, {By: "bob", At: ago(time.Minute)}, {By: "carol", At: ago(time.Minute)}}
	for _, c := range []struct {
		p    *records.Plan
		want string
	}{
		{nil, "-"},
		{&records.Plan{Outcome: records.Applied}, "-"},
		{&records.Plan{Outcome: records.AwaitingApproval}, "0/2"},
		// Distinct approvers count; each approval is listed.
		{&records.Plan{Outcome: records.AwaitingApproval, Approvals: approved}, "2/2 bob (3m), bob (60s), carol (60s)"},
		// A decided plan was held to the number required then, not now.
		{&records.Plan{Outcome: records.Applied, Approvals: approved[:1]}, "bob (3m)"},
	} {
		if got := approvalsCell(rec, c.p); got != c.want {
			t.Errorf("approvalsCell(%+v) = %q; want %q", c.p, got, c.want)
		}
	}
	if got := approvalsCell(&records.Record{}, &records.Plan{Outcome: records.AwaitingApproval}); got != "0/1" {
		t.Errorf("approvalsCell with no required count = %q; want 0/1 (one approver)", got)
	}
	p := &records.Plan{Verdicts: []records.Verdict{{Rule: "a", Effect: "deny"}, {Rule: "b\x1b", Effect: "require-approval"}}}
	if got := verdictsCell(p); got != `a (deny), b\x1b (require-approval)` {
		t.Errorf("verdictsCell = %q", got)
	}
}

// The records are in the controller's namespace, example-ccm by default.
func TestNamespaceDefault(t *testing.T) {
	for _, cmd := range newRootCmd().Commands() {
		if f := cmd.Flags().Lookup("namespace"); f != nil && f.DefValue != "example-ccm" {
			t.Errorf("examplectl %s --namespace defaults to %q", cmd.Name(), f.DefValue)
		}
	}
}
