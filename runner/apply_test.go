package runner_test

import (
	"context"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/example/cloud-provider-example/exampleapi"
	"github.com/example/cloud-provider-example/internal/testkit"
	"github.com/example/cloud-provider-example/runner"
	"github.com/example/cloud-provider-example/simulator/simtest"
)

// Cancelling mid-apply interrupts terraform (SIGINT), which writes state
// and releases the lock; the next run converges to one LB, no orphan.
func TestCancelMidApply(t *testing.T) {
	reqs := simtest.NewRequests()
	sim := simtest.Start(t, simtest.WithProvisionDelay(20*time.Second), simtest.WithRequests(reqs))
	e := newEnv(t, sim)
	job, statePath := e.localJob(t, "slow")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	polled := make(chan error, 1)
	go func() {
		// Cancel once the provider polls the LB: the cloud has answered
		// its create and the LB is provisioning.
		_, err := reqs.Wait(ctx, func(r simtest.Request) bool {
			return r.Method == http.MethodGet && strings.HasPrefix(r.Path, "/v1/load-balancers/")
		})
		polled <- err
		cancel()
	}()
	start := time.Now()
	_, err := e.r.Ensure(ctx, job, runner.EnsureOptions{})
	cancel()
	if perr := <-polled; perr != nil {
		t.Fatalf("the apply ended (%v) before the provider polled the load balancer", err)
	}
	if err == nil {
		t.Fatal("want an error from a cancelled apply")
	}
	if time.Since(start) > 15*time.Second {
		t.Fatalf("cancel took %s: terraform did not stop waiting", time.Since(start))
	}
	if _, err := os.Stat(filepath.Join(filepath.Dir(statePath), ".slow.tfstate.lock.info")); err == nil {
		t.Fatal("state lock left behind")
	}
	state, err := os.ReadFile(statePath)
	if err != nil || !strings.Contains(string(state), `"example_load_balancer"`) {
		t.Fatalf("interrupted apply did not record the LB in state: %v\n%s", err, state)
	}
	// Converge: the tainted LB is replaced, never duplicated.
	e.sim.SetFaults(t, exampleapi.Faults{ProvisionDelayMs: 50})
	res, err := e.r.Ensure(testkit.Context(t), job, runner.EnsureOptions{})
	if err != nil {
		t.Fatal(err)
	}
	got := e.lbs(t, "slow")
	if len(got) != 1 || got[0].ID != res.Output("id") {
		t.Fatalf("after convergence: %d LBs %+v, outputs %s", len(got), got, res.Outputs)
	}
}

// KeepPlanText leaves terraform's own rendering of the last plan with
// changes next to the workspace, for reviewers.
func TestKeepPlanText(t *testing.T) {
	e := newEnv(t, nil, func(c *runner.Config) { c.KeepPlanText = true })
	job, _ := e.localJob(t, "kept")
	e.ensure(t, job)
	text, err := os.ReadFile(filepath.Join(e.r.WorkDir(), "kept", ".ccm", "last-plan.txt"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(text), "example_load_balancer.this will be created") || strings.Contains(string(text), e.sim.Token) {
		t.Fatalf("plan text:\n%s", text)
	}
}
