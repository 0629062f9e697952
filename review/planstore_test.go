package review

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	clienttesting "k8s.io/client-go/testing"

	"github.com/example/cloud-provider-example/annotations"
	"github.com/example/cloud-provider-example/engine"
	"github.com/example/cloud-provider-example/internal/testkit"
	"github.com/example/cloud-provider-example/policy"
	"github.com/example/cloud-provider-example/records"
)

// TestLoad: what the engine gets back of a record after a start, from
// one List for all objects.
func TestLoad(t *testing.T) {
	f := newReviewFixture(t, "", false)
	t0 := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	flag := engine.Verdict{Rule: "replace", Effect: policy.RequireApproval, Message: "replaces the load balancer"}
	p0, p1 := planAt(t, "plan-000000000000", 1, t0), planAt(t, "plan-111111111111", 1, t0.Add(time.Minute))
	outputs := map[string]json.RawMessage{"ip": json.RawMessage(`"192.0.2.10"`)}
	const other = "prod-service-shop-api-0123456789abcdef"
	f.updateRecord(t.Context(), webSubject(records.KindChange), &engine.Outcome{Policy: annotations.ApplyAuto, Workspace: webWS, Planned: p0, Applied: p0,
		Result: &engine.Result{Plan: p0, Outputs: outputs, Applied: true}}, nil, t0)
	f.updateRecord(t.Context(), webSubject(records.KindChange), &engine.Outcome{Policy: annotations.ApplyAuto, Workspace: webWS, Planned: p1, Awaiting: p1,
		Verdicts: []engine.Verdict{flag}}, &engine.AwaitingApprovalError{PlanID: p1.ID}, t0.Add(time.Minute))
	api := webSubject(records.KindChange)
	api.ref.Name, api.ref.UID = "api", "uid-api"
	f.updateRecord(t.Context(), api, &engine.Outcome{Policy: annotations.ApplyAuto, Workspace: other, Planned: p0, Applied: p0,
		Result: &engine.Result{Plan: p0, Outputs: outputs, Applied: true}}, nil, t0)
	f.client.ClearActions()

	kept, err := f.Load(t.Context(), webWS, "uid-1")
	testkit.Must(t, err)
	if a := kept.Applied; a == nil || a.HCLHash != p0.Hash || string(a.Outputs["ip"]) != `"192.0.2.10"` || !a.At.Equal(t0) {
		t.Errorf("applied %+v; want plan %s's", a, p0.ID)
	}
	sp := kept.Pending
	if sp == nil || string(sp.Data) != "saved "+p1.ID || sp.Plan.ID != p1.ID || sp.Plan.Hash != p1.Hash || sp.Plan.FileHash == "" ||
		!sp.Plan.Created.Equal(p1.Created) || sp.Plan.Destroy || len(sp.Verdicts) != 1 || sp.Verdicts[0] != flag {
		t.Errorf("pending %+v; want plan %s with its saved file and verdict", sp, p1.ID)
	}
	// Another object of the name (another uid) is refused, every time.
	for i := range 2 {
		if kept, err := f.Load(t.Context(), other, "uid-new"); !errors.Is(err, engine.ErrOwnerMismatch) || !strings.Contains(err.Error(), "uid-api") {
			t.Errorf("load %d for another owner = %+v, %v; want ErrOwnerMismatch naming uid-api", i+1, kept, err)
		}
	}
	if kept, err := f.Load(t.Context(), "prod-service-shop-none-0123456789abcdef", "uid-3"); kept != nil || err != nil {
		t.Errorf("no record: %+v, %v", kept, err)
	}
	lists := 0
	for _, a := range f.client.Actions() {
		if a.GetResource().Resource == "configmaps" && a.GetVerb() == "list" {
			if l, ok := a.(clienttesting.ListAction); ok && strings.Contains(l.GetListRestrictions().Labels.String(), records.LabelPart) {
				lists++ // List of every record, not a workspace's objects
			}
		}
	}
	if lists != 1 {
		t.Errorf("%d Lists of every record; want 1 for all the first reads", lists)
	}

	// Later than warmFor, reads are Gets again.
	f.warm.listed = time.Now().Add(-warmFor - time.Second)
	f.client.ClearActions()
	kept, err = f.Load(t.Context(), webWS, "uid-1")
	if err != nil || kept.Applied == nil {
		t.Fatalf("late load: %+v, %v", kept, err)
	}
	for _, a := range f.client.Actions() {
		if l, ok := a.(clienttesting.ListAction); ok && a.GetResource().Resource == "configmaps" && strings.Contains(l.GetListRestrictions().Labels.String(), records.LabelPart) {
			t.Errorf("a late load listed every record")
		}
	}
}

// A record another replica writes after the List at start (sharding: a
// shard taken later) is not in that List: once the board drops it
// (DropWarmRecords, on a shard taken), the record is read as it is now.
func TestDropWarmRecords(t *testing.T) {
	f := newReviewFixture(t, "", false)
	t0 := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	p0 := planAt(t, "plan-000000000000", 1, t0)
	outputs := map[string]json.RawMessage{"ip": json.RawMessage(`"192.0.2.10"`)}
	if kept, err := f.Load(t.Context(), "prod-service-shop-api-0123456789abcdef", "uid-api"); kept != nil || err != nil {
		t.Fatalf("no record yet: %+v, %v", kept, err)
	} // the List is made
	write := func() {
		f.updateRecord(t.Context(), webSubject(records.KindChange), &engine.Outcome{Policy: annotations.ApplyAuto, Workspace: webWS, Planned: p0, Applied: p0,
			Result: &engine.Result{Plan: p0, Outputs: outputs, Applied: true}}, nil, t0)
	}
	write()
	if kept, err := f.Load(t.Context(), webWS, "uid-1"); kept != nil || err != nil {
		t.Fatalf("the List at start answers for a record written after it: %+v, %v", kept, err)
	}
	f.warm.read[webWS] = false // as if not read yet, to show the drop alone answers
	f.DropWarmRecords()
	kept, err := f.Load(t.Context(), webWS, "uid-1")
	if err != nil || kept == nil || kept.Applied == nil || kept.Applied.HCLHash != p0.Hash {
		t.Fatalf("after DropWarmRecords: %+v, %v; want the record written after the List", kept, err)
	}
}
