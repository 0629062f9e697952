package servicelb

import (
	"context"
	"testing"
	"time"

	utilwait "k8s.io/apimachinery/pkg/util/wait"

	"github.com/example/cloud-provider-example/annotations"
	"github.com/example/cloud-provider-example/cloudconfig"
)

// A group's lock is kept while someone holds or waits for it, not for
// every group ever named.
func TestGroupLocksGoWhenFree(t *testing.T) {
	gs := newGroups(&cloudconfig.Config{})
	g := annotations.Group{Namespace: "shop", Name: "front"}
	unlock := gs.lock(g)
	waited := make(chan struct{})
	go func() {
		gs.lock(g)()
		close(waited)
	}()
	waiting := func(context.Context) (bool, error) {
		gs.mu.Lock()
		defer gs.mu.Unlock()
		return gs.locks[g] != nil && gs.locks[g].users == 2, nil
	}
	if err := utilwait.PollUntilContextTimeout(t.Context(), time.Millisecond, 10*time.Second, true, waiting); err != nil {
		t.Fatalf("the second caller does not wait: %v", err)
	}
	unlock()
	<-waited
	gs.mu.Lock()
	defer gs.mu.Unlock()
	if len(gs.locks) != 0 {
		t.Errorf("locks %v after every holder left", gs.locks)
	}
}

// A namespace's preview budget unused for as long as it takes to refill
// is dropped (a new one is the same); one in use stays.
func TestPreviewBudgetsOfIdleNamespacesGo(t *testing.T) {
	cfg := &cloudconfig.Config{}
	cfg.Webhook.PreviewsPerMinute, cfg.Webhook.PreviewBurst = 60, 5 // refills in 5 s
	a := &Admission{cfg: cfg}
	a.PlanAllowed("idle")
	a.PlanAllowed("busy")
	a.rates["idle"].used = time.Now().Add(-6 * time.Second)
	a.PlanAllowed("new")
	if _, ok := a.rates["idle"]; ok || a.Budgets() != 2 {
		t.Errorf("budgets %v, want busy and new", a.rates)
	}
}
