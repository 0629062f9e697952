package records_test

import (
	"testing"

	"github.com/example/cloud-provider-example/records"
)

// TestAwaiting: the plans awaiting approval, newest first, as pointers
// into the record (an approval recorded through one is the record's).
func TestAwaiting(t *testing.T) {
	r := &records.Record{Plans: []records.Plan{
		{ID: "p4", Outcome: records.AwaitingApproval},
		{ID: "p3", Outcome: records.Applied},
		{ID: "p2", Outcome: records.AwaitingApproval},
		{ID: "p1", Outcome: records.Planned},
	}}
	got := r.Awaiting()
	if len(got) != 2 || got[0].ID != "p4" || got[1].ID != "p2" {
		t.Fatalf("Awaiting = %v, want p4 and p2", got)
	}
	if got[1] != &r.Plans[2] {
		t.Fatal("Awaiting copied the plan: want a pointer into the record")
	}
	if none := (&records.Record{Plans: []records.Plan{{ID: "p1", Outcome: records.Applied}}}).Awaiting(); len(none) != 0 {
		t.Fatalf("Awaiting of a record with nothing awaiting = %v", none)
	}
}

// TestAwaitingDestroy: the newest destroy awaiting approval, or the
// newest other plan awaiting it; an applied destroy is not.
func TestAwaitingDestroy(t *testing.T) {
	r := &records.Record{Plans: []records.Plan{
		{ID: "p4", Kind: records.KindChange, Outcome: records.Applied},
		{ID: "p3", Kind: records.KindDestroy, Outcome: records.AwaitingApproval},
		{ID: "p2", Kind: records.KindChange, Outcome: records.AwaitingApproval},
		{ID: "p1", Kind: records.KindDestroy, Outcome: records.Applied},
	}}
	if p := r.AwaitingDestroy(true); p == nil || p.ID != "p3" {
		t.Errorf("AwaitingDestroy(true) = %v, want p3", p)
	}
	if p := r.AwaitingDestroy(false); p == nil || p.ID != "p2" {
		t.Errorf("AwaitingDestroy(false) = %v, want p2", p)
	}
	r.Plans[1].Outcome, r.Plans[2].Outcome = records.Superseded, records.Superseded
	if p, q := r.AwaitingDestroy(true), r.AwaitingDestroy(false); p != nil || q != nil {
		t.Errorf("nothing awaiting: %v, %v", p, q)
	}
}
