package runner_test

import (
	"testing"

	"github.com/example/cloud-provider-example/internal/testhttpbackend"
	"github.com/example/cloud-provider-example/runner"
	"github.com/example/cloud-provider-example/state"
)

// The backend goes down while an apply creates a load balancer: terraform
// keeps the state it could not write in errored.tfstate. The next run
// pushes it before planning, so the load balancer is not created twice
// (nor left behind, unknown to the state).
func TestErroredStateIsPushed(t *testing.T) {
	srv := testhttpbackend.Start(t)
	backends, err := state.New(state.Config{Type: state.TypeHTTP, HTTP: &state.HTTPConfig{Address: srv.URL}}, state.Options{})
	if err != nil {
		t.Fatal(err)
	}
	tg, _ := backends.Location(state.Object{Cluster: "test", Kind: "service", Namespace: "default", Name: "errored"})
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
	if _, err := e.r.Ensure(ctxT(t), job, runner.EnsureOptions{}); err != nil {
		t.Fatal(err)
	}
	if n := len(e.lbs(t, "errored")); n != 1 {
		t.Fatalf("%d load balancers named errored after the backend came back", n)
	}
	if len(srv.States()[tg.Key]) == 0 {
		t.Fatal("the state was not pushed")
	}
}
