package runner_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/example/cloud-provider-example/internal/testkit"
	"github.com/example/cloud-provider-example/internal/testpg"
	"github.com/example/cloud-provider-example/internal/tftest"
	"github.com/example/cloud-provider-example/runner"
)

// Spawned providers through a plugin cache, on both distributions: new
// workspaces initialised at once (one at a time with terraform, whose
// cache is not safe for concurrent installs; at once with OpenTofu, which
// locks it) all install the provider from the cache and apply.
func TestPluginCacheInits(t *testing.T) {
	for _, tc := range tftest.Distributions(t) {
		t.Run(tc.Distribution, func(t *testing.T) {
			cache := filepath.Join(t.TempDir(), "plugin-cache")
			if err := os.MkdirAll(cache, 0o755); err != nil {
				t.Fatal(err)
			}
			e := newEnv(t, nil, func(c *runner.Config) {
				c.Terraform = runner.BinaryConfig{Distribution: runner.Distribution(tc.Distribution), Path: tc.Terraform}
				c.Provider, c.PluginCacheDir, c.NoInitCopy = runner.ProviderSpawned, cache, true
			})
			dir := t.TempDir()
			const n = 3
			var wg sync.WaitGroup
			errs := make([]error, n)
			for i := range n {
				wg.Go(func() {
					name := fmt.Sprintf("cached-%d", i)
					_, errs[i] = e.r.Ensure(testkit.Context(t), e.job(t, name, lbModule{name: name, backend: filepath.Join(dir, name+".tfstate")}), runner.EnsureOptions{})
				})
			}
			wg.Wait()
			for _, err := range errs {
				if err != nil {
					t.Fatal(err)
				}
			}
			if p := e.r.Processes(); p["init"] != n || p["apply"] != n {
				t.Fatalf("processes %v: want an init and an apply per workspace", p)
			}
			cached, _ := filepath.Glob(filepath.Join(cache, "example.com", "example", "example", "*", "*", "terraform-provider-example*"))
			if len(cached) != 1 {
				t.Fatalf("plugin cache holds %v, want the provider once", cached)
			}
		})
	}
}

// While another process holds the pg backend's workspace-creation lock
// for a moment, a new object's workspace waits for it and is created.
func TestPGWorkspaceCreationWaitsForTheLock(t *testing.T) {
	srv := testpg.Start(t)
	lockedOut := make(chan struct{}, 1) // a workspace command failed
	e := newEnv(t, nil, func(c *runner.Config) {
		c.LockTimeout = 20 * time.Second
		c.Observe = func(op string, err error, _ time.Duration) {
			if op == "workspace" && err != nil {
				select {
				case lockedOut <- struct{}{}:
				default:
				}
			}
		}
	})
	if err := e.pgRun(t, srv.ConnStr, "first", 80); err != nil { // creates the schema
		t.Fatal(err)
	}
	select {
	case <-lockedOut:
		t.Fatal("a workspace command failed with nobody holding the lock")
	default:
	}
	before := e.r.Processes()["workspace"]
	lock := pgCreationLock(e.tc.Distribution, "ccm")
	conn := holdPGLock(t, srv.ConnStr, lock)
	released := make(chan bool, 1) // whether a command had found the lock taken
	go func() {
		// Release the lock once `workspace new` has found it taken (or
		// after the lock timeout, so that the run ends).
		var found bool
		select {
		case <-lockedOut:
			found = true
		case <-time.After(30 * time.Second):
		}
		_, _ = conn.ExecContext(context.Background(), "SELECT pg_advisory_unlock($1)", lock)
		released <- found
	}()
	if err := e.pgRun(t, srv.ConnStr, "second", 80); err != nil {
		t.Fatalf("the workspace was not created once the lock was released: %v", err)
	}
	if !<-released {
		t.Error("no workspace command found the lock taken")
	}
	// workspace list, at least one refused workspace new, then the one
	// that succeeds.
	if n := e.r.Processes()["workspace"] - before; n < 3 {
		t.Errorf("%d workspace commands: the creation did not wait for the lock", n)
	}
}
