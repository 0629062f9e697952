package engine_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/example/cloud-provider-example/annotations"
	"github.com/example/cloud-provider-example/engine"
	"github.com/example/cloud-provider-example/internal/testkit"
	"github.com/example/cloud-provider-example/lbmodel"
	"github.com/example/cloud-provider-example/runner"
)

// An approval counts for the plan it names as long as that plan waits.
// The same plan made again (its id: a node renamed rewrites a comment of
// the route set's module, not what the plan does) keeps the time it was
// first made, so an approval made in between still counts: in the same
// process, and after a restart (from the plan store). A plan of another
// id supersedes it, and the superseded plan made once more needs an
// approval of its own.
func TestApprovalCountsWhileItsPlanWaits(t *testing.T) {
	store := newMemStore()
	f := newFixtureWith(t, 2, engine.Options{Plans: store})
	node := f.node(t, "node-a")
	ctx := testkit.Context(t)
	routes := func(nodeName string, dests ...string) []lbmodel.Route {
		var out []lbmodel.Route
		for _, d := range dests {
			out = append(out, lbmodel.Route{Destination: d, TargetInstanceID: instanceID(t, node), NodeName: nodeName})
		}
		return out
	}
	// As package review decides: an approval of the plan's id counts when
	// it was made after the plan was.
	var approvedID string
	var approvedAt time.Time
	approve := func(id string) { approvedID, approvedAt = id, time.Now() }
	rv := engine.Review{Policy: annotations.ApplyManual, Object: policyObject("", "routes"), Approval: func(p *runner.Plan) engine.Approval {
		if p.ID == approvedID && !approvedAt.Before(p.Created) {
			return engine.Approval{Approved: true, Approvers: []string{"rita"}}
		}
		return engine.Approval{}
	}}

	_, out, err := f.eng.ReconcileRoutes(ctx, routes("node-a", "10.244.1.0/24"), rv)
	first := awaiting(t, err)
	made := out.Planned.Created
	approve(first)
	_, out, err = f.eng.ReconcileRoutes(ctx, routes("node-a-renamed", "10.244.1.0/24"), rv)
	if err != nil || out.Planned == nil || out.Planned.ID != first || !out.Planned.Created.Equal(made) || out.Superseded != nil ||
		out.Applied == nil || out.Applied.ID != first {
		t.Fatalf("the same plan made again after its approval: %s, %v; want it applied, made when it first was, nothing superseded", ids(out), err)
	}
	store.keep(t, "", out)

	// After a restart: the record keeps the plan of the old rendering.
	_, out, err = f.eng.ReconcileRoutes(ctx, routes("node-a", "10.244.1.0/24", "10.244.2.0/24"), rv)
	second := awaiting(t, err)
	store.keep(t, "", out)
	approve(second)
	restarted := f.engine(t, 2, engine.Options{Plans: store})
	_, out, err = restarted.ReconcileRoutes(ctx, routes("node-a-again", "10.244.1.0/24", "10.244.2.0/24"), rv)
	if err != nil || out.Applied == nil || out.Applied.ID != second || out.Superseded != nil {
		t.Fatalf("the same plan made again after a restart: %s, %v; want it applied", ids(out), err)
	}

	// Another plan supersedes it: its approval no longer counts, even for
	// the same plan made once more.
	_, _, err = restarted.ReconcileRoutes(ctx, routes("node-a", "10.244.1.0/24", "10.244.2.0/24", "10.244.3.0/24"), rv)
	third := awaiting(t, err)
	approve(third)
	_, out, err = restarted.ReconcileRoutes(ctx, routes("node-a", "10.244.1.0/24", "10.244.2.0/24", "10.244.4.0/24"), rv)
	other := awaiting(t, err)
	if other == third || out.Superseded == nil || out.Superseded.ID != third {
		t.Fatalf("another plan: %s; want %s superseded", ids(out), third)
	}
	_, out, err = restarted.ReconcileRoutes(ctx, routes("node-a", "10.244.1.0/24", "10.244.2.0/24", "10.244.3.0/24"), rv)
	if again := awaiting(t, err); again != third || out.Superseded == nil || out.Superseded.ID != other || out.Applied != nil {
		t.Fatalf("the superseded plan made once more: %s; want %s awaiting its own approval, %s superseded", ids(out), third, other)
	}
}

// ids says which plans an outcome names.
func ids(out *engine.Outcome) string {
	id := func(p *runner.Plan) string {
		if p == nil {
			return "-"
		}
		return p.ID + " made " + p.Created.Format(time.RFC3339Nano)
	}
	return fmt.Sprintf("planned %s, awaiting %s, applied %s, superseded %s", id(out.Planned), id(out.Awaiting), id(out.Applied), id(out.Superseded))
}
