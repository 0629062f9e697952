package runner_test

import (
	"testing"

	"github.com/example/cloud-provider-example/internal/testhttpbackend"
	"github.com/example/cloud-provider-example/runner"
)

// The backend goes down while an apply creates a load balancer: terraform
// keeps the state it could not write in errored.tfstate. The next run
// pushes it before planning, so the load balancer is not created twice
// (nor left behind, unknown to the state).
func TestErroredStateIsPushed(t *testing.T) {
	srv := testhttpbackend.Start(t)
	tg := httpLocation(t, srv, "errored")
	e := newEnv(t, nil)
	job := e.job(t, tg.Key, lbModule{name: "errored", block: toBlock(tg.Block)})
	p, err := e.r.Plan(ctxT(t), job, runner.PlanOptions{})
	if err != nil {
		t.Fatal(err)
	}
	srv.FailWrites(true)
	if _, err := e.r.Apply(ctxT(t), p); err == nil {
		t.Fatal("the apply succeeded although the backend refused its state")
	}
	if len(e.lbs(t, "errored")) != 1 {
		t.Fatal("the apply did not create the load balancer")
	}
	srv.FailWrites(false)
	e.ensure(t, job)
	if n := len(e.lbs(t, "errored")); n != 1 {
		t.Fatalf("%d load balancers named errored after the backend came back", n)
	}
	if len(srv.States()[tg.Key]) == 0 {
		t.Fatal("the state was not pushed")
	}
}
