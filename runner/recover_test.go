package runner_test

import (
	"bytes"
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/example/cloud-provider-example/internal/testhttpbackend"
	"github.com/example/cloud-provider-example/internal/testkit"
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
	p, err := e.r.Plan(testkit.Context(t), job, runner.PlanOptions{})
	if err != nil {
		t.Fatal(err)
	}
	srv.FailWrites(true)
	if _, err := e.r.Apply(testkit.Context(t), p); err == nil {
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

// A push of the errored state landed, but its answer was lost: the
// backend holds that state under a higher serial, and pushing the file
// again would be refused for ever. The run finds the backend holds what
// the file does and carries on. A backend holding something else keeps
// the file, and the run fails.
func TestErroredStatePushThatLanded(t *testing.T) {
	srv := testhttpbackend.Start(t)
	e := newEnv(t, nil)
	// interrupted runs an apply of name whose state write the backend
	// refuses, leaving errored.tfstate; it returns the job and that file.
	interrupted := func(name string) (runner.Job, string) {
		tg := httpLocation(t, srv, name)
		job := e.job(t, tg.Key, lbModule{name: name, block: toBlock(tg.Block)})
		// One attempt a request, so that a lost answer is not retried
		// into a success.
		job.Env = map[string]string{"TF_HTTP_RETRY_MAX": "0"}
		p, err := e.r.Plan(testkit.Context(t), job, runner.PlanOptions{})
		if err != nil {
			t.Fatal(err)
		}
		srv.FailWrites(true)
		defer srv.FailWrites(false)
		if _, err := e.r.Apply(testkit.Context(t), p); err == nil {
			t.Fatal("the apply succeeded although the backend refused its state")
		}
		errored := filepath.Join(e.r.WorkDir(), job.Key, "errored.tfstate")
		if _, err := os.Stat(errored); err != nil {
			t.Fatal(err)
		}
		return job, errored
	}

	job, errored := interrupted("landed")
	srv.LoseWriteAnswers(1)
	res := e.ensure(t, job)
	if res.Plan != nil && res.Plan.Summary.Add != 0 {
		t.Errorf("the run plans to create again: %s", res.Plan.Summary)
	}
	if n := len(e.lbs(t, "landed")); n != 1 {
		t.Errorf("%d load balancers named landed", n)
	}
	if _, err := os.Stat(errored); !os.IsNotExist(err) {
		t.Errorf("errored.tfstate still there: %v", err)
	}

	job, errored = interrupted("other")
	raw, err := os.ReadFile(errored)
	if err != nil {
		t.Fatal(err)
	}
	var st map[string]any
	testkit.Must(t, json.Unmarshal(raw, &st))
	// Not empty (terraform overwrites an empty state whatever its serial).
	post(t, srv.Address(job.Key), map[string]any{"version": 4, "serial": 99, "lineage": st["lineage"], "resources": []any{},
		"outputs": map[string]any{"writer": map[string]any{"value": "another", "type": "string"}}})
	if _, err := e.r.Ensure(testkit.Context(t), job, runner.EnsureOptions{}); err == nil || !strings.Contains(err.Error(), "errored.tfstate") {
		t.Fatalf("a backend holding another state: %v", err)
	}
	if _, err := os.Stat(errored); err != nil {
		t.Fatalf("errored.tfstate gone although the backend holds another state: %v", err)
	}
}

// post stores state (as JSON) at address, as terraform's http backend
// does.
func post(t *testing.T, address string, state any) {
	t.Helper()
	b, err := json.Marshal(state)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := http.Post(address, "application/json", bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("POST %s: %s", address, resp.Status)
	}
}
