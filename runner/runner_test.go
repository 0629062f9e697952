package runner_test

import (
	"context"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/example/cloud-provider-example/exampleapi"
	"github.com/example/cloud-provider-example/internal/testkit"
	"github.com/example/cloud-provider-example/internal/tftest"
	"github.com/example/cloud-provider-example/runner"
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
	res2, err := e.r.Ensure(testkit.Context(t), job, runner.EnsureOptions{})
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
	lb, err := e.api.GetLoadBalancer(testkit.Context(t), res.Output("id"))
	if err != nil || lb.Listeners[0].Port != 8080 {
		t.Fatalf("cloud after update: %+v %v", lb, err)
	}

	// The record's outputs answer without terraform.
	outs, err := e.r.Outputs(testkit.Context(t), upd)
	if err != nil || string(outs["id"]) != string(res.Outputs["id"]) {
		t.Fatalf("outputs: %s %v", outs, err)
	}

	upd.DeleteState = func(context.Context) error {
		if err := os.Remove(statePath); err != nil && !os.IsNotExist(err) {
			return err
		}
		return nil
	}
	dres, err := e.r.Destroy(testkit.Context(t), upd, runner.EnsureOptions{})
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
	if _, err := e.r.Destroy(testkit.Context(t), upd, runner.EnsureOptions{}); err != nil {
		t.Fatalf("second destroy: %v", err)
	}
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
			if _, err := e.r.Ensure(testkit.Context(t), e.job(t, name, lbModule{name: name, backend: filepath.Join(dir, name+".tfstate")}), runner.EnsureOptions{}); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	all, err := e.api.ListLoadBalancers(testkit.Context(t), exampleapi.LoadBalancerFilter{})
	if err != nil || len(all) != n {
		t.Fatalf("want %d LBs, got %d (%v)", n, len(all), err)
	}
	// The first workspaces to start init (at most one per slot); the
	// others copy an initialisation.
	if p, c := e.r.Processes(), e.r.InitsCopied(); p["init"]+c != n || p["init"] > 4 || p["apply"] != n {
		t.Fatalf("processes %v, %d initialisations copied: want one init or copy and one apply per workspace, at most 4 inits", p, c)
	}
}

// The runner's process counters (what the terraform_runs metric shows)
// equal the processes the operating system saw, version checks included;
// the binary's version is checked once per runner, not per workspace; a
// create is init + plan + apply and an update plan + apply.
func TestProcessesCountedFromTheOS(t *testing.T) {
	tc := tftest.Get(t)
	fromOS := tftest.CountProcesses(t, tc.Terraform)
	e := newEnv(t, nil, func(c *runner.Config) { c.Terraform.Path = fromOS.Wrapper; c.NoInitCopy = true })
	if n := fromOS.Total(t); n != 0 {
		t.Fatalf("runner.New started %d processes (%v): the version check waits for the first command", n, fromOS.Counts(t))
	}
	states := t.TempDir()
	step := func(what string, want map[string]int64, run func() error) {
		t.Helper()
		before := fromOS.Counts(t)
		if err := run(); err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		got := fromOS.Counts(t)
		for k, v := range before {
			got[k] -= v
			if got[k] == 0 {
				delete(got, k)
			}
		}
		if !maps.Equal(got, want) {
			t.Errorf("%s started %v, want %v", what, got, want)
		}
	}
	jobOf := func(key string, port int64) runner.Job {
		return e.job(t, key, lbModule{name: key, port: port, backend: filepath.Join(states, key+".tfstate")})
	}
	ensure := func(key string, port int64) func() error {
		return func() error {
			_, err := e.r.Ensure(testkit.Context(t), jobOf(key, port), runner.EnsureOptions{})
			return err
		}
	}
	step("the first create", map[string]int64{"version": 1, "init": 1, "plan": 1, "apply": 1}, ensure("a", 80))
	for i := range 3 {
		key := fmt.Sprintf("b%d", i)
		step("create "+key, map[string]int64{"init": 1, "plan": 1, "apply": 1}, ensure(key, 80))
	}
	step("an update", map[string]int64{"plan": 1, "apply": 1}, ensure("a", 81))
	step("no change", map[string]int64{}, ensure("a", 81))
	step("a destroy", map[string]int64{"plan": 1, "apply": 1}, func() error {
		_, err := e.r.Destroy(testkit.Context(t), jobOf("b0", 80), runner.EnsureOptions{})
		return err
	})
	if got, want := total(e.r.Processes()), fromOS.Total(t); got != want {
		t.Fatalf("the runner counted %d processes (%v), the OS saw %d (%v)", got, e.r.Processes(), want, fromOS.Counts(t))
	}
}
