package runner_test

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/example/cloud-provider-example/internal/testhttpbackend"
	"github.com/example/cloud-provider-example/internal/testpg"
	"github.com/example/cloud-provider-example/internal/tests3"
	"github.com/example/cloud-provider-example/internal/tftest"
	"github.com/example/cloud-provider-example/runner"
	"github.com/example/cloud-provider-example/simulator/simtest"
	"github.com/example/cloud-provider-example/state"
	"github.com/hashicorp/terraform-exec/tfexec"
	"github.com/zclconf/go-cty/cty"
	clocktesting "k8s.io/utils/clock/testing"
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
				must(t, os.WriteFile(filepath.Join(dir, "user"), []byte(user), 0o600))
				must(t, os.WriteFile(filepath.Join(dir, "pass"), []byte(pass), 0o600))
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

// s3Server starts an S3 server with a bucket "states", and gives this
// test the AWS_* environment the s3 backend reads (nothing else of AWS_*
// leaks in from the test's own environment).
func s3Server(t *testing.T, opts ...tests3.Option) *tests3.Server {
	srv := tests3.Start(t, opts...)
	srv.CreateBucket("states")
	for _, k := range []string{"AWS_SESSION_TOKEN", "AWS_PROFILE", "AWS_SHARED_CREDENTIALS_FILE", "AWS_CONFIG_FILE", "AWS_ROLE_ARN", "AWS_WEB_IDENTITY_TOKEN_FILE", "AWS_CONTAINER_CREDENTIALS_FULL_URI", "AWS_CA_BUNDLE", "AWS_SSE_CUSTOMER_KEY", "AWS_ENDPOINT_URL", "AWS_ENDPOINT_URL_S3"} {
		t.Setenv(k, "")
	}
	t.Setenv("AWS_ACCESS_KEY_ID", srv.AccessKey)
	t.Setenv("AWS_SECRET_ACCESS_KEY", srv.SecretKey)
	return srv
}

// pgWorkspaces lists the pg backend's workspaces from a fresh directory.
func pgWorkspaces(t *testing.T, tg *state.Location) []string {
	t.Helper()
	tc := tftest.Get(t)
	dir := t.TempDir()
	f := "terraform {\n  backend \"pg\" {\n    schema_name = \"ccm_states\"\n  }\n}\n"
	must(t, os.WriteFile(filepath.Join(dir, "main.tf"), []byte(f), 0o644))
	tf, _ := tfexec.NewTerraform(dir, tc.Terraform)
	must(t, tf.SetEnv(tc.Env(map[string]string{"PG_CONN_STR": tg.Env["PG_CONN_STR"]})))
	if err := tf.Init(ctxT(t)); err != nil {
		t.Fatal(err)
	}
	ws, _, err := tf.WorkspaceList(ctxT(t))
	if err != nil {
		t.Fatal(err)
	}
	return ws
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
				j.Env, j.CLIWorkspace, j.DeleteState = tg.Env, tg.CLIWorkspace, tg.Delete
				return j
			}
			res, err := e.r.Ensure(ctxT(t), job(80), runner.EnsureOptions{})
			if err != nil {
				t.Fatal(err)
			}
			id := res.Output("id")
			if _, err := e.r.Ensure(ctxT(t), job(81), runner.EnsureOptions{}); err != nil {
				t.Fatal(err)
			}
			if lb, err := e.api.GetLoadBalancer(ctxT(t), id); err != nil || lb.Listeners[0].Port != 81 {
				t.Fatalf("update: %+v %v", lb, err)
			}
			if ok, err := tg.Exists(ctxT(t)); err != nil || !ok {
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
					_, errs[i] = r.Ensure(ctxT(t), job(82+int64(i)), runner.EnsureOptions{})
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
			third := newEnv(t, sim)
			res, err = third.r.Ensure(ctxT(t), job(int64(lbs[0].Listeners[0].Port)), runner.EnsureOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if res.Plan == nil || res.Plan.HasChanges {
				t.Fatalf("state and cloud differ after concurrent writers: %+v", res.Plan)
			}

			if _, err := e.r.Destroy(ctxT(t), job(83), runner.EnsureOptions{}); err != nil {
				t.Fatal(err)
			}
			if n := len(e.lbs(t, obj.Name)); n != 0 {
				t.Fatalf("%d LBs after destroy", n)
			}
			if !bc.gone(t, tg) {
				t.Fatal("state not deleted after destroy")
			}
			if ok, err := tg.Exists(ctxT(t)); err != nil || ok {
				t.Fatalf("state exists after destroy: %v %v", ok, err)
			}
		})
	}
}

// httpLocation is where the http backend srv keeps the state of the
// Service default/name.
func httpLocation(t *testing.T, srv *testhttpbackend.Server, name string) *state.Location {
	t.Helper()
	return serviceLocation(t, state.Config{Type: state.TypeHTTP, HTTP: &state.HTTPConfig{Address: srv.URL}}, name)
}

// A lock left by a crashed holder is forced open once it is older than
// StaleLockAge; a younger one is reported as ErrStateLocked.
func TestStaleLockIsForcedOpen(t *testing.T) {
	srv := testhttpbackend.Start(t)
	tg := httpLocation(t, srv, "locked")
	var unlocked []string
	clk := clocktesting.NewFakePassiveClock(time.Now())
	e := newEnv(t, nil, func(c *runner.Config) {
		c.LockTimeout = 100 * time.Millisecond
		c.StaleLockAge = 2 * time.Second
		c.Clock = clk
	})
	e.r.OnForceUnlock = func(ws, id, who string, created time.Time) { unlocked = append(unlocked, id) }
	job := e.job(t, tg.Key, lbModule{name: "locked", block: toBlock(tg.Block)})
	srv.InjectLock(tg.Key, testhttpbackend.LockInfo{ID: "crashed-holder-lock", Operation: "OperationTypeApply", Who: "ccm@gone", Created: clk.Now()})

	_, err := e.r.Ensure(ctxT(t), job, runner.EnsureOptions{})
	if !errors.Is(err, runner.ErrStateLocked) {
		t.Fatalf("fresh lock: want ErrStateLocked, got %v", err)
	}
	if len(e.lbs(t, "locked")) != 0 || len(unlocked) != 0 {
		t.Fatal("a fresh lock was broken or the cloud changed")
	}
	// The lock ages past StaleLockAge on the runner's clock.
	clk.SetTime(clk.Now().Add(2*time.Second + time.Millisecond))
	if _, err := e.r.Ensure(ctxT(t), job, runner.EnsureOptions{}); err != nil {
		t.Fatalf("stale lock: %v", err)
	}
	if len(unlocked) != 1 || unlocked[0] != "crashed-holder-lock" || len(srv.Locks()) != 0 {
		t.Fatalf("force-unlocked %v, locks left %v", unlocked, srv.Locks())
	}
	if len(e.lbs(t, "locked")) != 1 {
		t.Fatal("apply after unlocking did not create the LB")
	}
}

func toBlock(b state.Block) *backendBlock {
	bb := &backendBlock{typ: b.Type, attrs: map[string]cty.Value{}}
	for _, a := range b.Attrs {
		bb.attrs[a.Name] = a.Value
	}
	return bb
}

type file struct{ path, content string }

// walk reads every file of a workspace (plan files and .terraform included).
func walk(t *testing.T, r *runner.Runner, key string) []file {
	var out []file
	must(t, filepath.Walk(filepath.Join(r.WorkDir(), key), func(p string, info os.FileInfo, err error) error {
		if err == nil && info.Mode().IsRegular() && info.Size() < 10<<20 {
			data, _ := os.ReadFile(p)
			out = append(out, file{p, string(data)})
		}
		return nil
	}))
	if len(out) == 0 {
		t.Fatal("workspace is empty: nothing checked")
	}
	return out
}

// A person forces open a fresh lock they know is dead (examplectl unlock):
// HeldLock names it from the error and ForceUnlock opens exactly it.
func TestForceUnlockOnRequest(t *testing.T) {
	srv := testhttpbackend.Start(t)
	tg := httpLocation(t, srv, "held")
	e := newEnv(t, nil, func(c *runner.Config) { c.LockTimeout = 100 * time.Millisecond })
	job := e.job(t, tg.Key, lbModule{name: "held", block: toBlock(tg.Block)})
	srv.InjectLock(tg.Key, testhttpbackend.LockInfo{ID: "dead-holder", Operation: "OperationTypeApply", Who: "ccm@gone", Created: time.Now()})
	_, err := e.r.Ensure(ctxT(t), job, runner.EnsureOptions{})
	id, _, _, ok := runner.HeldLock(err)
	if !ok || id != "dead-holder" {
		t.Fatalf("HeldLock(%v) = %q %v", err, id, ok)
	}
	if err := e.r.ForceUnlock(ctxT(t), job, id); err != nil {
		t.Fatal(err)
	}
	if _, err := e.r.Ensure(ctxT(t), job, runner.EnsureOptions{}); err != nil {
		t.Fatalf("after unlock: %v", err)
	}
}
