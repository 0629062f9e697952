package runner_test

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/example/cloud-provider-example/internal/testhttpbackend"
	"github.com/example/cloud-provider-example/internal/testkit"
	"github.com/example/cloud-provider-example/internal/testpg"
	"github.com/example/cloud-provider-example/internal/tests3"
	"github.com/example/cloud-provider-example/runner"
	"github.com/example/cloud-provider-example/simulator/simtest"
	"github.com/example/cloud-provider-example/state"
)

// backendCase is one state backend under the shared suite.
type backendCase struct {
	name string
	cfg  func(t *testing.T) state.Config
	// gone reports whether the object's state was deleted.
	gone func(t *testing.T, tg *state.Location) bool
}

func backendCases() []backendCase {
	httpB := map[*testing.T]*testhttpbackend.Server{}
	s3B := map[*testing.T]*tests3.Server{}
	return []backendCase{
		{
			name: "local",
			cfg: func(t *testing.T) state.Config {
				return state.Config{Type: state.TypeLocal, Local: &state.LocalConfig{Dir: filepath.Join(t.TempDir(), "states")}}
			},
			gone: func(t *testing.T, tg *state.Location) bool {
				_, err := os.Stat(tg.Block.Attrs[0].Value.AsString())
				return os.IsNotExist(err)
			},
		},
		{
			name: "pg",
			cfg: func(t *testing.T) state.Config {
				srv := testpg.Start(t)
				t.Setenv("CCM_TEST_PG", srv.ConnStr)
				return state.Config{Type: state.TypePG, PG: &state.PGConfig{ConnStrEnv: "CCM_TEST_PG", SchemaName: "ccm_states"}}
			},
			gone: func(t *testing.T, tg *state.Location) bool {
				return !slices.Contains(pgWorkspaces(t, tg), tg.CLIWorkspace)
			},
		},
		{
			name: "http",
			cfg: func(t *testing.T) state.Config {
				user, pass := "ccm", "http-sekrit-pw"
				srv := testhttpbackend.Start(t, testhttpbackend.WithBasicAuth(user, pass))
				httpB[t] = srv
				dir := t.TempDir()
				testkit.Must(t, os.WriteFile(filepath.Join(dir, "user"), []byte(user), 0o600))
				testkit.Must(t, os.WriteFile(filepath.Join(dir, "pass"), []byte(pass), 0o600))
				return state.Config{Type: state.TypeHTTP, HTTP: &state.HTTPConfig{Address: srv.URL + "/states", UsernameFile: filepath.Join(dir, "user"), PasswordFile: filepath.Join(dir, "pass")}}
			},
			gone: func(t *testing.T, tg *state.Location) bool {
				_, ok := httpB[t].States()["states/"+tg.Key]
				return !ok
			},
		},
		{
			name: "s3",
			cfg: func(t *testing.T) state.Config {
				srv := s3Server(t)
				s3B[t] = srv
				return state.Config{Type: state.TypeS3, S3: &state.S3Config{Bucket: "states", Region: srv.Region, KeyPrefix: "ccm/", Endpoint: srv.Endpoint, UsePathStyle: true}}
			},
			gone: func(t *testing.T, tg *state.Location) bool {
				// Read from the server's disk, not through S3: neither the
				// state object nor a lock file is left.
				objs := s3B[t].Objects("states")
				if len(objs) != 0 {
					t.Logf("objects left: %q", objs)
				}
				return len(objs) == 0
			},
		},
	}
}

// The same create / update / no-op / destroy / concurrent-writer suite on
// every backend that runs without a cluster (kubernetes: engine and e2e).
func TestBackendSuite(t *testing.T) {
	for _, bc := range backendCases() {
		t.Run(bc.name, func(t *testing.T) {
			sim := simtest.Start(t)
			scfg := bc.cfg(t)
			backends, err := state.New(scfg, state.Options{})
			if err != nil {
				t.Fatal(err)
			}
			obj := state.Object{Cluster: "test", Kind: "service", Namespace: "default", Name: "web-" + bc.name}
			tg, err := backends.Location(obj)
			if err != nil {
				t.Fatal(err)
			}
			e := newEnv(t, sim)
			job := func(port int64) runner.Job {
				j := e.job(t, tg.Key, lbModule{name: obj.Name, port: port, block: toBlock(tg.Block)})
				j.Env, j.CLIWorkspace, j.DeleteState, j.Exists = tg.Env, tg.CLIWorkspace, tg.Delete, tg.Exists
				return j
			}
			res, err := e.r.Ensure(testkit.Context(t), job(80), runner.EnsureOptions{})
			if err != nil {
				t.Fatal(err)
			}
			id := res.Output("id")
			if _, err := e.r.Ensure(testkit.Context(t), job(81), runner.EnsureOptions{}); err != nil {
				t.Fatal(err)
			}
			if lb, err := e.api.GetLoadBalancer(testkit.Context(t), id); err != nil || lb.Listeners[0].Port != 81 {
				t.Fatalf("update: %+v %v", lb, err)
			}
			if ok, err := tg.Exists(testkit.Context(t)); err != nil || !ok {
				t.Fatalf("state exists: %v %v", ok, err)
			}
			for _, f := range walk(t, e.r, tg.Key) {
				for _, v := range tg.Env {
					if strings.Contains(f.content, v) {
						t.Fatalf("backend credential written to %s", f.path)
					}
				}
			}

			// A second CCM replica (its own work dir, same state) racing
			// the first: the state lock serialises them, one LB remains.
			other := newEnv(t, sim, func(c *runner.Config) { c.LockTimeout = 60 * time.Second })
			var wg sync.WaitGroup
			errs := make([]error, 2)
			for i, r := range []*runner.Runner{e.r, other.r} {
				wg.Go(func() {
					_, errs[i] = r.Ensure(testkit.Context(t), job(82+int64(i)), runner.EnsureOptions{})
				})
			}
			wg.Wait()
			if err := errors.Join(errs...); err != nil {
				t.Fatal(err)
			}
			lbs := e.lbs(t, obj.Name)
			if len(lbs) != 1 {
				t.Fatalf("%d LBs after concurrent writers", len(lbs))
			}
			// No update lost: the state holds what the last writer
			// applied, so a third replica plans no change for it.
			var thirdRuns atomic.Int64
			third := newEnv(t, sim, func(c *runner.Config) {
				c.Observe = func(string, error, time.Duration) { thirdRuns.Add(1) }
			})
			res, err = third.r.Ensure(testkit.Context(t), job(int64(lbs[0].Listeners[0].Port)), runner.EnsureOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if res.Plan == nil || res.Plan.HasChanges {
				t.Fatalf("state and cloud differ after concurrent writers: %+v", res.Plan)
			}

			if _, err := e.r.Destroy(testkit.Context(t), job(83), runner.EnsureOptions{}); err != nil {
				t.Fatal(err)
			}
			if n := len(e.lbs(t, obj.Name)); n != 0 {
				t.Fatalf("%d LBs after destroy", n)
			}
			if !bc.gone(t, tg) {
				t.Fatal("state not deleted after destroy")
			}
			if ok, err := tg.Exists(testkit.Context(t)); err != nil || ok {
				t.Fatalf("state exists after destroy: %v %v", ok, err)
			}
			// The third replica, which applied it too, is asked to destroy
			// it now (its shard moved mid-delete): the state is gone, so it
			// runs no terraform, which would create an empty state.
			runs := thirdRuns.Load()
			if _, err := third.r.Destroy(testkit.Context(t), job(83), runner.EnsureOptions{}); err != nil {
				t.Fatal(err)
			}
			if n := thirdRuns.Load() - runs; n != 0 {
				t.Errorf("destroying what another replica destroyed ran %d terraform commands, want 0", n)
			}
			if ok, err := tg.Exists(testkit.Context(t)); err != nil || ok {
				t.Fatalf("state exists after the second destroy: %v %v", ok, err)
			}
		})
	}
}
