package runner_test

import (
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/example/cloud-provider-example/internal/testkit"
	"github.com/example/cloud-provider-example/internal/testpg"
	"github.com/example/cloud-provider-example/runner"
	"github.com/example/cloud-provider-example/state"
)

// Destroys that must still end with the object's pg workspace deleted
// (a CLI workspace, which terraform refuses to delete while its state
// holds resources).
func TestDestroyInPGWorkspace(t *testing.T) {
	srv := testpg.Start(t)
	t.Setenv("CCM_TEST_PG", srv.ConnStr)
	cfg := state.Config{Type: state.TypePG, PG: &state.PGConfig{ConnStrEnv: "CCM_TEST_PG", SchemaName: "ccm_states"}}
	e := newEnv(t, nil)
	job := func(name string) (runner.Job, *state.Location) {
		tg := serviceLocation(t, cfg, name)
		j := e.job(t, tg.Key, lbModule{name: name, block: toBlock(tg.Block)})
		j.Env, j.CLIWorkspace, j.DeleteState = tg.Env, tg.CLIWorkspace, tg.Delete
		return j, tg
	}
	destroyed := func(t *testing.T, j runner.Job, tg *state.Location, name string) {
		t.Helper()
		res, err := e.r.Destroy(testkit.Context(t), j, runner.EnsureOptions{})
		if err != nil {
			t.Fatalf("destroy: %v", err)
		}
		if !res.Applied {
			t.Errorf("destroy applied nothing: %+v", res.Plan)
		}
		if n := len(e.lbs(t, name)); n != 0 {
			t.Errorf("%d load balancers left", n)
		}
		if slices.Contains(pgWorkspaces(t, tg), tg.CLIWorkspace) {
			t.Errorf("pg workspace %s still there", tg.CLIWorkspace)
		}
	}

	// An earlier destroy deleted the load balancer but its answer was
	// lost, so the state still holds it: the new destroy plan finds it
	// gone, and applying that plan records the empty state.
	t.Run("deleted outside", func(t *testing.T) {
		j, tg := job("gone")
		res := e.ensure(t, j)
		if err := e.api.DeleteLoadBalancer(testkit.Context(t), res.Output("id")); err != nil {
			t.Fatal(err)
		}
		destroyed(t, j, tg, "gone")
	})

	// An earlier forget selected the default workspace, then failed to
	// delete the object's (its backend was down): the workspace directory
	// is left on "default", whose state is empty. The retry must plan in
	// the object's workspace again, not plan nothing in default and then
	// fail to delete a workspace that still holds the load balancer.
	t.Run("forget interrupted", func(t *testing.T) {
		j, tg := job("interrupted")
		e.ensure(t, j)
		testkit.Must(t, os.WriteFile(filepath.Join(e.r.WorkDir(), j.Key, ".terraform", "environment"), []byte("default"), 0o644))
		destroyed(t, j, tg, "interrupted")
	})
}
