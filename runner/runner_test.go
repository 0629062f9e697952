package runner_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	clocktesting "k8s.io/utils/clock/testing"

	"github.com/example/cloud-provider-example/exampleapi"
	"github.com/example/cloud-provider-example/runner"
	"github.com/example/cloud-provider-example/simulator/simtest"
)

func TestCreateUpdateNoopDestroy(t *testing.T) {
	e := newEnv(t, nil)
	job, statePath := e.localJob(t, "web")

	res := e.ensure(t, job)
	if !res.Applied || res.Plan.Summary.Add != 1 || res.Output("ipv4") == "" || res.Output("status") != "active" {
		t.Fatalf("create: applied=%v summary=%+v outputs=%s", res.Applied, res.Plan.Summary, res.Outputs)
	}
	if got := e.lbs(t, "web"); len(got) != 1 || got[0].ID != res.Output("id") {
		t.Fatalf("cloud after create: %+v", got)
	}

	// Same desired state: no terraform process at all.
	before := total(e.r.Processes())
	res2, err := e.r.Ensure(ctxT(t), job, runner.EnsureOptions{})
	if err != nil || !res2.FastPath || res2.Output("ipv4") != res.Output("ipv4") {
		t.Fatalf("no-op: fast=%v err=%v", res2.FastPath, err)
	}
	if after := total(e.r.Processes()); after != before {
		t.Fatalf("no-op started %d terraform processes", after-before)
	}

	// Changing a port is an in-place update and needs no new init.
	inits := e.r.Processes()["init"]
	upd := e.job(t, "web", lbModule{name: "web", port: 8080, backend: statePath})
	res3 := e.ensure(t, upd)
	if res3.Plan.Summary.Change != 1 || res3.Plan.Summary.Add != 0 || res3.Output("id") != res.Output("id") {
		t.Fatalf("update: %+v outputs %s", res3.Plan.Summary, res3.Outputs)
	}
	if e.r.Processes()["init"] != inits {
		t.Fatal("an input change re-ran init")
	}
	lb, err := e.api.GetLoadBalancer(ctxT(t), res.Output("id"))
	if err != nil || lb.Listeners[0].Port != 8080 {
		t.Fatalf("cloud after update: %+v %v", lb, err)
	}

	// The record's outputs answer without terraform.
	outs, err := e.r.Outputs(ctxT(t), upd)
	if err != nil || string(outs["id"]) != string(res.Outputs["id"]) {
		t.Fatalf("outputs: %s %v", outs, err)
	}

	upd.DeleteState = func(context.Context) error {
		if err := os.Remove(statePath); err != nil && !os.IsNotExist(err) {
			return err
		}
		return nil
	}
	dres, err := e.r.Destroy(ctxT(t), upd, runner.EnsureOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if dres.Plan.Summary.Remove != 1 {
		t.Fatalf("destroy summary %+v", dres.Plan.Summary)
	}
	if got := e.lbs(t, "web"); len(got) != 0 {
		t.Fatalf("cloud after destroy: %+v", got)
	}
	if _, err := os.Stat(statePath); !os.IsNotExist(err) {
		t.Fatal("state file left after destroy")
	}
	// Destroying again is a no-op, not an error.
	if _, err := e.r.Destroy(ctxT(t), upd, runner.EnsureOptions{}); err != nil {
		t.Fatalf("second destroy: %v", err)
	}
}

func total(m map[string]int64) (n int64) {
	for _, v := range m {
		n += v
	}
	return n
}

// Twenty workspaces at concurrency 4 share initialisations without races.
func TestManyWorkspacesConcurrently(t *testing.T) {
	e := newEnv(t, nil)
	dir := t.TempDir()
	const n = 20
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			name := fmt.Sprintf("svc-%02d", i)
			if _, err := e.r.Ensure(ctxT(t), e.job(t, name, lbModule{name: name, backend: filepath.Join(dir, name+".tfstate")}), runner.EnsureOptions{}); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	all, err := e.api.ListLoadBalancers(ctxT(t), exampleapi.LoadBalancerFilter{})
	if err != nil || len(all) != n {
		t.Fatalf("want %d LBs, got %d (%v)", n, len(all), err)
	}
	// The first workspaces to start init (at most one per slot); the
	// others copy an initialisation.
	if p, c := e.r.Processes(), e.r.InitsCopied(); p["init"]+c != n || p["init"] > 4 || p["apply"] != n {
		t.Fatalf("processes %v, %d initialisations copied: want one init or copy and one apply per workspace, at most 4 inits", p, c)
	}
}

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
	res, err := e.r.Ensure(ctxT(t), job, runner.EnsureOptions{})
	if err != nil {
		t.Fatal(err)
	}
	got := e.lbs(t, "slow")
	if len(got) != 1 || got[0].ID != res.Output("id") {
		t.Fatalf("after convergence: %d LBs %+v, outputs %s", len(got), got, res.Outputs)
	}
}

// Terraform's diagnostics, not "exit status 1", and never a secret.
func TestErrorsCarryDiagnostics(t *testing.T) {
	e := newEnv(t, nil)
	job := e.job(t, "bad", lbModule{name: "bad", port: 70000, backend: filepath.Join(t.TempDir(), "bad.tfstate")})
	_, err := e.r.Ensure(ctxT(t), job, runner.EnsureOptions{})
	var re *runner.Error
	if !errors.As(err, &re) {
		t.Fatalf("want *runner.Error, got %T %v", err, err)
	}
	if re.Op != "plan" || !strings.Contains(err.Error(), "65535") || strings.Contains(err.Error(), "exit status") {
		t.Fatalf("error lacks the diagnostic: %v", err)
	}
	if strings.Contains(err.Error(), e.sim.Token) {
		t.Fatal("token in error")
	}
}

func TestPlanThenApplyExactPlan(t *testing.T) {
	e := newEnv(t, nil)
	job, statePath := e.localJob(t, "p")
	p, err := e.r.Plan(ctxT(t), job, runner.PlanOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(p.ID, "plan-") || !p.HasChanges || p.Summary.Add != 1 {
		t.Fatalf("plan %+v", p)
	}
	if len(e.lbs(t, "p")) != 0 {
		t.Fatal("planning changed the cloud")
	}
	text, err := e.r.ShowPlan(ctxT(t), p)
	if err != nil || !strings.Contains(text, "example_load_balancer.this will be created") {
		t.Fatalf("show plan: %v\n%q", err, text)
	}
	if _, err := e.r.Apply(ctxT(t), p); err != nil {
		t.Fatal(err)
	}
	if len(e.lbs(t, "p")) != 1 {
		t.Fatal("apply did not create the LB")
	}
	// A saved plan is single-use.
	if _, err := e.r.Apply(ctxT(t), p); err == nil {
		t.Fatal("applying a used plan succeeded")
	}
	// A plan made stale by a later apply is refused by terraform.
	p1, err := e.r.Plan(ctxT(t), e.job(t, "p", lbModule{name: "p", port: 81, backend: statePath}), runner.PlanOptions{})
	if err != nil {
		t.Fatal(err)
	}
	p1copy := filepath.Join(t.TempDir(), "p1.tfplan")
	data, _ := os.ReadFile(p1.File)
	must(t, os.WriteFile(p1copy, data, 0o600))
	if _, err := e.r.Ensure(ctxT(t), e.job(t, "p", lbModule{name: "p", port: 82, backend: statePath}), runner.EnsureOptions{}); err != nil {
		t.Fatal(err)
	}
	must(t, os.WriteFile(p1.File, data, 0o600))
	_, err = e.r.Apply(ctxT(t), p1)
	if !errors.Is(err, runner.ErrStalePlan) {
		t.Fatalf("stale plan: want ErrStalePlan, got %v", err)
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

// A record older than MaxAge is not trusted: a real (no-op) plan runs.
func TestFastPathMaxAge(t *testing.T) {
	clk := clocktesting.NewFakePassiveClock(time.Now())
	e := newEnv(t, nil, func(c *runner.Config) { c.Clock = clk })
	job, _ := e.localJob(t, "aged")
	e.ensure(t, job)
	res, err := e.r.Ensure(ctxT(t), job, runner.EnsureOptions{MaxAge: time.Hour})
	if err != nil || !res.FastPath {
		t.Fatalf("young record: fast=%v err=%v", res != nil && res.FastPath, err)
	}
	// The record ages past MaxAge on the runner's clock.
	clk.SetTime(clk.Now().Add(time.Hour + time.Second))
	plans := e.r.Processes()["plan"]
	res, err = e.r.Ensure(ctxT(t), job, runner.EnsureOptions{MaxAge: time.Hour})
	if err != nil || res.FastPath || e.r.Processes()["plan"] != plans+1 || res.Plan.HasChanges {
		t.Fatalf("aged record: fast=%v plan=%+v err=%v", res != nil && res.FastPath, res, err)
	}
}

// An apply that fails may have changed the state: the record of the apply
// before it no longer answers for the object, so going back to that
// configuration plans again instead of trusting the record.
func TestFailedApplyForgetsTheLastApply(t *testing.T) {
	e := newEnv(t, nil)
	statePath := filepath.Join(t.TempDir(), "back.tfstate")
	first := e.job(t, "back", lbModule{name: "back", backend: statePath})
	e.ensure(t, first)
	if _, ok := e.r.FastPath(first.Key, first.Hash, 0); !ok {
		t.Fatal("no record of the first apply")
	}
	p, err := e.r.Plan(ctxT(t), e.job(t, "back", lbModule{name: "back", port: 81, backend: statePath}), runner.PlanOptions{})
	if err != nil || !p.HasChanges {
		t.Fatalf("plan the change: %+v %v", p, err)
	}
	// Deleted outside terraform after the plan: the apply's update fails.
	for _, lb := range e.lbs(t, "back") {
		must(t, e.api.DeleteLoadBalancer(ctxT(t), lb.ID))
	}
	if _, err := e.r.Apply(ctxT(t), p); err == nil {
		t.Fatal("want the apply to fail: its load balancer is gone")
	}
	if res, ok := e.r.FastPath(first.Key, first.Hash, 0); ok {
		t.Fatalf("a failed apply left the record of the one before it: %+v", res)
	}
}
