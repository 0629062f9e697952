package runner_test

import (
	"fmt"
	"maps"
	"path/filepath"
	"testing"

	"github.com/example/cloud-provider-example/internal/tftest"
	"github.com/example/cloud-provider-example/runner"
)

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
		return func() error { _, err := e.r.Ensure(ctxT(t), jobOf(key, port), runner.EnsureOptions{}); return err }
	}
	step("the first create", map[string]int64{"version": 1, "init": 1, "plan": 1, "apply": 1}, ensure("a", 80))
	for i := range 3 {
		key := fmt.Sprintf("b%d", i)
		step("create "+key, map[string]int64{"init": 1, "plan": 1, "apply": 1}, ensure(key, 80))
	}
	step("an update", map[string]int64{"plan": 1, "apply": 1}, ensure("a", 81))
	step("no change", map[string]int64{}, ensure("a", 81))
	step("a destroy", map[string]int64{"plan": 1, "apply": 1}, func() error {
		_, err := e.r.Destroy(ctxT(t), jobOf("b0", 80), runner.EnsureOptions{})
		return err
	})
	if got, want := total(e.r.Processes()), fromOS.Total(t); got != want {
		t.Fatalf("the runner counted %d processes (%v), the OS saw %d (%v)", got, e.r.Processes(), want, fromOS.Counts(t))
	}
}
