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
