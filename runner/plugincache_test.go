package runner_test

import (
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"

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
					_, errs[i] = e.r.Ensure(ctxT(t), e.job(t, name, lbModule{name: name, backend: filepath.Join(dir, name+".tfstate")}), runner.EnsureOptions{})
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
