package main

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/example/cloud-provider-example/objectref"
	"github.com/example/cloud-provider-example/records"
)

// An address's line comes from its last apply's outputs: id, IP and who
// holds it; a detached one (null outputs) holds nothing; an address not
// applied yet has only its name and owner.
func TestAddressOf(t *testing.T) {
	raw := func(v any) json.RawMessage { b, _ := json.Marshal(v); return b }
	ref := objectref.Address("shop", "k8s-a-x")
	held := addressOf(&records.Record{Object: ref, Applied: &records.LastApply{Outputs: map[string]json.RawMessage{
		"id": raw("addr-1"), "ip": raw("203.0.113.4"), "load_balancer_id": raw("lb-1"), "holder": raw("Service shop/green"),
	}}})
	if held.ID != "addr-1" || held.IP != "203.0.113.4" || held.LoadBalancerID != "lb-1" || held.Holder != "Service shop/green" || held.Owner != "shop" {
		t.Errorf("held: %+v", held)
	}
	detached := addressOf(&records.Record{Object: ref, Applied: &records.LastApply{Outputs: map[string]json.RawMessage{
		"id": raw("addr-1"), "ip": raw("203.0.113.4"), "load_balancer_id": json.RawMessage("null"), "holder": json.RawMessage("null"),
	}}})
	if detached.LoadBalancerID != "" || detached.Holder != "" || detached.IP != "203.0.113.4" {
		t.Errorf("detached: %+v", detached)
	}
	if fresh := addressOf(&records.Record{Object: ref}); fresh.ID != "" || fresh.Owner != "shop" || fresh.AppliedAt != nil || fresh.ApplyingSince != nil {
		t.Errorf("not applied yet: %+v", fresh)
	}
	started := time.Date(2026, 12, 5, 9, 0, 0, 0, time.UTC)
	if busy := addressOf(&records.Record{Object: ref, Applying: &records.ApplyStart{StartedAt: started}}); busy.ID != "" || busy.ApplyingSince == nil || !busy.ApplyingSince.Equal(started) {
		t.Errorf("an apply under way: %+v", busy)
	}
}

// An address's id and IP are unknown only while its record may hide
// them: an apply under way, or a failed one; not before its first apply,
// nor once released.
func TestIDUnknown(t *testing.T) {
	ref := objectref.Address("shop", "k8s-a-x")
	plan := func(kind string, outcome records.Outcome) []records.Plan {
		return []records.Plan{{ID: "plan-1", Kind: kind, Outcome: outcome}}
	}
	for name, tc := range map[string]struct {
		rec  records.Record
		want bool
	}{
		"applied":          {records.Record{Applied: &records.LastApply{}}, false},
		"an apply running": {records.Record{Applying: &records.ApplyStart{}}, true},
		"its apply failed": {records.Record{Plans: plan(records.KindChange, records.Failed)}, true},
		"awaiting its first approval": {
			records.Record{Plans: plan(records.KindChange, records.AwaitingApproval)}, false},
		"released": {records.Record{Plans: plan(records.KindDestroy, records.Applied)}, false},
	} {
		tc.rec.Object = ref
		if got := idUnknown(&tc.rec); got != tc.want {
			t.Errorf("%s: idUnknown %v, want %v", name, got, tc.want)
		}
	}
}
