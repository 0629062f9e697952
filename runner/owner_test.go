package runner_test

import (
	"errors"
	"testing"

	"github.com/example/cloud-provider-example/internal/testkit"
	"github.com/example/cloud-provider-example/runner"
)

// A destroyed object is not created again by a late run of its old job
// (a drift sweep's snapshot); a new object of the same name is.
func TestTombstone(t *testing.T) {
	e := newEnv(t, nil)
	job := e.job(t, "tomb", lbModule{name: "tomb"})
	job.Owner = "uid-1"
	e.ensure(t, job)
	if _, err := e.r.Destroy(testkit.Context(t), job, runner.EnsureOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := e.r.Ensure(testkit.Context(t), job, runner.EnsureOptions{}); !errors.Is(err, runner.ErrGone) {
		t.Fatalf("a run of the destroyed object's job: %v", err)
	}
	if _, err := e.r.Plan(testkit.Context(t), job, runner.PlanOptions{}); !errors.Is(err, runner.ErrGone) {
		t.Fatalf("a plan of the destroyed object's job: %v", err)
	}
	if res, err := e.r.Destroy(testkit.Context(t), job, runner.EnsureOptions{}); err != nil || res.Applied {
		t.Fatalf("destroying it again: %+v %v", res, err)
	}
	if len(e.lbs(t, "tomb")) != 0 {
		t.Fatal("the load balancer came back")
	}
	job.Owner = "uid-2"
	if _, err := e.r.Ensure(testkit.Context(t), job, runner.EnsureOptions{}); err != nil || len(e.lbs(t, "tomb")) != 1 {
		t.Fatalf("a new object of the same name: %v", err)
	}
}

// A workspace applied for one owner refuses another.
func TestOwnerMismatch(t *testing.T) {
	e := newEnv(t, nil)
	job := e.job(t, "owned", lbModule{name: "owned"})
	job.Owner = "uid-1"
	e.ensure(t, job)
	other := e.job(t, "owned", lbModule{name: "owned", port: 81})
	other.Owner = "uid-2"
	if _, err := e.r.Ensure(testkit.Context(t), other, runner.EnsureOptions{}); !errors.Is(err, runner.ErrOwnerMismatch) {
		t.Fatalf("another owner's job: %v", err)
	}
}
