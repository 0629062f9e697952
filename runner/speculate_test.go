package runner_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/example/cloud-provider-example/internal/testkit"
	"github.com/example/cloud-provider-example/runner"
)

// A speculative plan sees the change and leaves the state as it was; its
// directory goes when the object's workspace is destroyed.
func TestSpeculate(t *testing.T) {
	e := newEnv(t, nil)
	job, statePath := e.localJob(t, "s")
	job.DeleteState = func(context.Context) error { return os.Remove(statePath) }
	e.ensure(t, job)
	before, err := os.ReadFile(statePath)
	testkit.Must(t, err)
	upd := e.job(t, "s", lbModule{name: "s", port: 81, backend: statePath})
	upd.DeleteState = job.DeleteState
	sp, err := e.r.Speculate(testkit.Context(t), upd)
	if err != nil {
		t.Fatal(err)
	}
	if !sp.HasChanges || sp.Summary.Change != 1 || sp.JSON == nil {
		t.Fatalf("speculation %+v, want one change in place", sp.Summary)
	}
	after, err := os.ReadFile(statePath)
	testkit.Must(t, err)
	if string(after) != string(before) {
		t.Fatal("the speculative plan wrote the state")
	}
	preview := filepath.Join(e.r.WorkDir(), ".preview", "s")
	if _, err := os.Stat(preview); err != nil {
		t.Fatalf("no preview directory: %v", err)
	}
	if _, err := e.r.Destroy(testkit.Context(t), job, runner.EnsureOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(preview); !os.IsNotExist(err) {
		t.Fatalf("the preview directory outlived its workspace: %v", err)
	}
}
