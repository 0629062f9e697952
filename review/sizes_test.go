package review

import (
	"fmt"
	"testing"

	"github.com/example/cloud-provider-example/annotations"
	"github.com/example/cloud-provider-example/engine"
)

// The board's structures are bounded: one-time messages by saidSize
// (the newest kept), phases by the workspaces not removed, what was said
// of members by the groups not removed.
func TestBoardSizesBounded(t *testing.T) {
	b := New(testConfig(t, ""), nil)
	for i := range saidSize + 10 {
		if !b.once(fmt.Sprint("approved\x00plan-", i)) {
			t.Fatalf("message %d said before", i)
		}
	}
	if b.once(fmt.Sprint("approved\x00plan-", saidSize+9)) {
		t.Error("the newest message is said again")
	}
	b.phases.set("ws-1", "awaiting-approval")
	b.phases.set("ws-2", "applied")
	b.Removed(t.Context(), &engine.Outcome{Workspace: "ws-1"}) // a plan awaiting approval, its object deleted
	g := annotations.Group{Namespace: "shop", Name: "front"}
	b.members.changed(g, "said")
	b.GroupRemoved(g)
	got := b.Sizes()
	want := map[string]int{"review_said": saidSize, "review_workspace_phases": 1, "review_group_reports": 0, "review_warm_records": 0, "review_redacted_values": 0}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s = %d, want %d", k, got[k], v)
		}
	}
}
