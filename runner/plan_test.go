package runner_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/example/cloud-provider-example/internal/testkit"
	"github.com/example/cloud-provider-example/runner"
)

func TestPlanThenApplyExactPlan(t *testing.T) {
	e := newEnv(t, nil)
	job, statePath := e.localJob(t, "p")
	p, err := e.r.Plan(testkit.Context(t), job, runner.PlanOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(p.ID, "plan-") || !p.HasChanges || p.Summary.Add != 1 {
		t.Fatalf("plan %+v", p)
	}
	if len(e.lbs(t, "p")) != 0 {
		t.Fatal("planning changed the cloud")
	}
	text, err := e.r.ShowPlan(testkit.Context(t), p)
	if err != nil || !strings.Contains(text, "example_load_balancer.this will be created") {
		t.Fatalf("show plan: %v\n%q", err, text)
	}
	if _, err := e.r.Apply(testkit.Context(t), p); err != nil {
		t.Fatal(err)
	}
	if len(e.lbs(t, "p")) != 1 {
		t.Fatal("apply did not create the LB")
	}
	// A saved plan is single-use.
	if _, err := e.r.Apply(testkit.Context(t), p); err == nil {
		t.Fatal("applying a used plan succeeded")
	}
	// A plan made stale by a later apply is refused by terraform.
	p1, err := e.r.Plan(testkit.Context(t), e.job(t, "p", lbModule{name: "p", port: 81, backend: statePath}), runner.PlanOptions{})
	if err != nil {
		t.Fatal(err)
	}
	p1copy := filepath.Join(t.TempDir(), "p1.tfplan")
	data, _ := os.ReadFile(p1.File)
	testkit.Must(t, os.WriteFile(p1copy, data, 0o600))
	if _, err := e.r.Ensure(testkit.Context(t), e.job(t, "p", lbModule{name: "p", port: 82, backend: statePath}), runner.EnsureOptions{}); err != nil {
		t.Fatal(err)
	}
	testkit.Must(t, os.WriteFile(p1.File, data, 0o600))
	_, err = e.r.Apply(testkit.Context(t), p1)
	if !errors.Is(err, runner.ErrStalePlan) {
		t.Fatalf("stale plan: want ErrStalePlan, got %v", err)
	}
}
