package runner_test

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"testing"
	"time"

	clocktesting "k8s.io/utils/clock/testing"

	"github.com/example/cloud-provider-example/internal/testkit"
	"github.com/example/cloud-provider-example/runner"
)

// A record older than MaxAge is not trusted: a real (no-op) plan runs.
func TestFastPathMaxAge(t *testing.T) {
	clk := clocktesting.NewFakePassiveClock(time.Now())
	e := newEnv(t, nil, func(c *runner.Config) { c.Clock = clk })
	job, _ := e.localJob(t, "aged")
	e.ensure(t, job)
	res, err := e.r.Ensure(testkit.Context(t), job, runner.EnsureOptions{MaxAge: time.Hour})
	if err != nil || !res.FastPath {
		t.Fatalf("young record: fast=%v err=%v", res != nil && res.FastPath, err)
	}
	// The record ages past MaxAge on the runner's clock.
	clk.SetTime(clk.Now().Add(time.Hour + time.Second))
	plans := e.r.Processes()["plan"]
	res, err = e.r.Ensure(testkit.Context(t), job, runner.EnsureOptions{MaxAge: time.Hour})
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
	p, err := e.r.Plan(testkit.Context(t), e.job(t, "back", lbModule{name: "back", port: 81, backend: statePath}), runner.PlanOptions{})
	if err != nil || !p.HasChanges {
		t.Fatalf("plan the change: %+v %v", p, err)
	}
	// Deleted outside terraform after the plan: the apply's update fails.
	for _, lb := range e.lbs(t, "back") {
		testkit.Must(t, e.api.DeleteLoadBalancer(testkit.Context(t), lb.ID))
	}
	if _, err := e.r.Apply(testkit.Context(t), p); err == nil {
		t.Fatal("want the apply to fail: its load balancer is gone")
	}
	if res, ok := e.r.FastPath(first.Key, first.Hash, 0); ok {
		t.Fatalf("a failed apply left the record of the one before it: %+v", res)
	}
}

// Seed takes a record newer than the workspace's own last apply (another
// replica applied since), and leaves one as recent or more.
func TestSeedTakesANewerRecord(t *testing.T) {
	clk := clocktesting.NewFakePassiveClock(time.Now())
	e := newEnv(t, nil, func(c *runner.Config) { c.Clock = clk })
	job, _ := e.localJob(t, "seeded")
	e.ensure(t, job) // last apply: job.Hash, now
	applied := clk.Now()
	other := job
	other.Hash = "h1:another-replicas-rendering"
	testkit.Must(t, e.r.Seed(other, nil, applied.Add(-time.Minute)))
	if _, ok := e.r.FastPath(job.Key, job.Hash, 0); !ok {
		t.Fatal("an older record replaced the workspace's own last apply")
	}
	testkit.Must(t, e.r.Seed(other, nil, applied.Add(time.Minute)))
	if _, ok := e.r.FastPath(job.Key, job.Hash, 0); ok {
		t.Fatal("a newer record did not replace the workspace's own last apply")
	}
	if _, ok := e.r.FastPath(other.Key, other.Hash, 0); !ok {
		t.Fatal("the newer record is not the last apply")
	}
}

// Asking the fast path about a workspace creates none: a reconcile that
// waited for its object's destroy asks it first, and the directory it
// made outlived the object.
func TestFastPathCreatesNoWorkspace(t *testing.T) {
	e := newEnv(t, nil)
	job, _ := e.localJob(t, "asked")
	e.ensure(t, job)
	_, err := e.r.Destroy(testkit.Context(t), job, runner.EnsureOptions{})
	testkit.Must(t, err)
	for _, key := range []string{job.Key, "never-applied"} {
		if _, ok := e.r.FastPath(key, job.Hash, 0); ok {
			t.Fatalf("%s: a fast path without a workspace", key)
		}
		if _, err := os.Stat(filepath.Join(e.r.WorkDir(), key)); !errors.Is(err, fs.ErrNotExist) {
			t.Fatalf("%s: the fast path left a workspace directory (%v)", key, err)
		}
	}
}
