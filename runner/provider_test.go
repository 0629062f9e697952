package runner_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/example/cloud-provider-example/internal/testkit"
	"github.com/example/cloud-provider-example/runner"
	"github.com/example/cloud-provider-example/simulator/simtest"
)

// The same lifecycle in both provider modes. Attached: terraform installs
// nothing and needs no mirror (the CLI config here has none), the
// provider's environment is Config.Env, not the process's, and every
// command works attached, `terraform output` included. Spawned: the
// provider comes from the mirror, pinned by the lock file.
func TestProviderModes(t *testing.T) {
	for _, mode := range []runner.ProviderMode{runner.ProviderAttached, runner.ProviderSpawned} {
		t.Run(string(mode), func(t *testing.T) {
			t.Setenv("EXAMPLE_TOKEN", "not-the-token-the-provider-must-use")
			e := newEnv(t, nil, func(c *runner.Config) {
				c.Provider = mode
				if mode == runner.ProviderAttached {
					c.CLIConfigFile = filepath.Join(t.TempDir(), "no-mirror.rc")
					testkit.Must(t, os.WriteFile(c.CLIConfigFile, []byte("# no provider installation: attached\n"), 0o644))
				}
			})
			job, statePath := e.localJob(t, "m")
			res, err := e.r.Ensure(testkit.Context(t), job, runner.EnsureOptions{PlanText: true})
			if err != nil {
				t.Fatal(err)
			}
			if !res.Applied || res.Output("id") == "" || !strings.Contains(res.Plan.Text, "will be created") {
				t.Fatalf("create: %+v", res)
			}
			dir := filepath.Join(e.r.WorkDir(), "m")
			lock, providers := exists(filepath.Join(dir, ".terraform.lock.hcl")), exists(filepath.Join(dir, ".terraform", "providers"))
			if attached := mode == runner.ProviderAttached; lock == attached || providers == attached {
				t.Fatalf("lock file %v, providers installed %v in %s mode", lock, providers, mode)
			}
			upd := e.job(t, "m", lbModule{name: "m", port: 81, backend: statePath})
			if res, err = e.r.Ensure(testkit.Context(t), upd, runner.EnsureOptions{}); err != nil || res.Plan.Summary.Change != 1 {
				t.Fatalf("update: %+v %v", res, err)
			}
			// No record: the outputs come from `terraform output`.
			os.Remove(filepath.Join(dir, ".ccm", "last-apply.json"))
			outs, err := e.r.Outputs(testkit.Context(t), upd)
			if err != nil || string(outs["id"]) != string(res.Outputs["id"]) {
				t.Fatalf("outputs from state: %s %v", outs, err)
			}
			upd.DeleteState = func(context.Context) error { return os.Remove(statePath) }
			if _, err := e.r.Destroy(testkit.Context(t), upd, runner.EnsureOptions{}); err != nil {
				t.Fatal(err)
			}
			if n := len(e.lbs(t, "m")); n != 0 || exists(statePath) {
				t.Fatalf("after destroy: %d LBs, state left %v", n, exists(statePath))
			}
		})
	}
}

// A saved plan made in one provider mode is applied in the other (the
// controller restarted with another mode while a plan awaited approval):
// terraform refuses it, as a stale plan (it carries the lock file it was
// made with), and a new plan gets the same id, so its approval holds.
func TestSavedPlanAcrossModes(t *testing.T) {
	sim := simtest.Start(t)
	work := filepath.Join(t.TempDir(), "work")
	statePath := filepath.Join(t.TempDir(), "x.tfstate")
	// Each subtest's runners are its own (t: a skip or failure in newEnv
	// ends the subtest that asked).
	in := func(t *testing.T, mode runner.ProviderMode) *env {
		return newEnv(t, sim, func(c *runner.Config) { c.Provider, c.WorkDir = mode, work })
	}
	for _, modes := range [][2]runner.ProviderMode{{runner.ProviderSpawned, runner.ProviderAttached}, {runner.ProviderAttached, runner.ProviderSpawned}} {
		t.Run(string(modes[0])+"-to-"+string(modes[1]), func(t *testing.T) {
			before, after := in(t, modes[0]), in(t, modes[1])
			job := before.job(t, "x", lbModule{name: "x", port: 8000 + int64(len(modes[0])), backend: statePath})
			p, err := before.r.Plan(testkit.Context(t), job, runner.PlanOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if _, err := before.r.Identify(testkit.Context(t), p); err != nil {
				t.Fatal(err)
			}
			data, err := os.ReadFile(p.File)
			if err != nil {
				t.Fatal(err)
			}
			// As the engine does: the plan restored from its record, a
			// fresh plan to compare, then the approved one applied.
			restored, err := after.r.RestorePlan(testkit.Context(t), job, *p, data)
			if err != nil {
				t.Fatal(err)
			}
			fresh, err := after.r.Plan(testkit.Context(t), job, runner.PlanOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if _, err := after.r.Identify(testkit.Context(t), fresh); err != nil {
				t.Fatal(err)
			}
			if fresh.ID != p.ID {
				t.Fatalf("plan ids differ across modes: %s and %s", p.ID, fresh.ID)
			}
			if _, err := after.r.Apply(testkit.Context(t), restored); !errors.Is(err, runner.ErrStalePlan) {
				t.Fatalf("want ErrStalePlan applying a plan of the other mode, got %v", err)
			}
			if _, err := after.r.Apply(testkit.Context(t), fresh); err != nil {
				t.Fatal(err)
			}
		})
	}
}

// In attached mode a root module may configure the Example provider once:
// two configurations would be configured on one server at once.
func TestAttachedRefusesTwoProviderConfigs(t *testing.T) {
	e := newEnv(t, nil)
	job, _ := e.localJob(t, "two")
	job.Files["east.tf"] = []byte("provider \"example\" {\n  alias  = \"east\"\n  region = \"ex-east-1\"\n}\n")
	_, err := e.r.Ensure(testkit.Context(t), job, runner.EnsureOptions{})
	if err == nil || !strings.Contains(err.Error(), `2 provider "example" configurations`) || !strings.Contains(err.Error(), `"spawned"`) {
		t.Fatalf("want a refusal naming the spawned mode, got %v", err)
	}
	if p := e.r.Processes(); total(p) != 0 {
		t.Fatalf("terraform ran: %v", p)
	}
}

// An apply asks the attached provider again what its plan asked (the
// configuration's validation, the state's upgrade, the resource's plan,
// to check the plan still holds): the provider answers from memory, so a
// change costs its work once. What is applied is what was planned.
func TestAttachedProviderRemembersThePlan(t *testing.T) {
	var mu sync.Mutex
	seen := map[string][2]int{}
	e := newEnv(t, nil, func(c *runner.Config) {
		c.ObserveRemembered = func(rpc string, remembered bool) {
			mu.Lock()
			defer mu.Unlock()
			n := seen[rpc]
			if remembered {
				n[0]++
			} else {
				n[1]++
			}
			seen[rpc] = n
		}
	})
	job, statePath := e.localJob(t, "m")
	e.ensure(t, job)
	mu.Lock()
	clear(seen)
	mu.Unlock()
	upd := e.job(t, "m", lbModule{name: "m", port: 81, backend: statePath})
	res, err := e.r.Ensure(testkit.Context(t), upd, runner.EnsureOptions{})
	if err != nil || res.Plan.Summary.Change != 1 {
		t.Fatalf("update: %+v %v", res, err)
	}
	mu.Lock()
	defer mu.Unlock()
	// One resource, one change: the provider works each out once, and
	// every asking again (the apply's, and terraform's validating twice)
	// is remembered.
	for _, rpc := range []string{"ValidateResourceConfig", "UpgradeResourceState", "PlanResourceChange"} {
		if seen[rpc][0] < 1 || seen[rpc][1] != 1 {
			t.Errorf("%s: remembered, served %v; want served once, the rest remembered", rpc, seen[rpc])
		}
	}
	lbs := e.lbs(t, "m")
	if len(lbs) != 1 || len(lbs[0].Listeners) != 1 || lbs[0].Listeners[0].Port != 81 {
		t.Fatalf("applied: %+v", lbs)
	}
}
