package runner_test

import (
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"k8s.io/client-go/kubernetes"

	"github.com/example/cloud-provider-example/internal/testcluster"
	"github.com/example/cloud-provider-example/internal/testhttpbackend"
	"github.com/example/cloud-provider-example/internal/testkit"
	"github.com/example/cloud-provider-example/internal/testpg"
	"github.com/example/cloud-provider-example/internal/testsize"
	"github.com/example/cloud-provider-example/internal/tftest"
	"github.com/example/cloud-provider-example/runner"
	"github.com/example/cloud-provider-example/state"
)

// copyCases are the backends an initialisation is copied for, each
// started for one test (the kubernetes one: a namespace of the shared
// control plane), in both provider modes where it matters (spawned:
// the copy carries the installed provider and the lock file); a name
// ending in -tofu runs on OpenTofu.
func copyCases() map[string]func(t *testing.T) (state.Config, kubernetes.Interface, runner.ProviderMode) {
	local := func(t *testing.T) state.Config {
		return state.Config{Type: state.TypeLocal, Local: &state.LocalConfig{Dir: filepath.Join(t.TempDir(), "states")}}
	}
	kube := func(t *testing.T) (state.Config, kubernetes.Interface, runner.ProviderMode) {
		c := testcluster.Shared(t)
		return state.Config{Type: state.TypeKubernetes, Kubernetes: &state.KubernetesConfig{Namespace: c.Namespace(t), KubeconfigPath: c.AdminKubeconfig}}, c.Client, runner.ProviderAttached
	}
	return map[string]func(t *testing.T) (state.Config, kubernetes.Interface, runner.ProviderMode){
		"local": func(t *testing.T) (state.Config, kubernetes.Interface, runner.ProviderMode) {
			return local(t), nil, runner.ProviderAttached
		},
		"local-spawned": func(t *testing.T) (state.Config, kubernetes.Interface, runner.ProviderMode) {
			return local(t), nil, runner.ProviderSpawned
		},
		"kubernetes": kube,
		// OpenTofu caches its kubernetes backend's absent exec block as []
		// where terraform caches null: a copy must keep that (setBackend).
		"kubernetes-tofu": kube,
		"pg": func(t *testing.T) (state.Config, kubernetes.Interface, runner.ProviderMode) {
			srv := testpg.Start(t)
			t.Setenv("CCM_TEST_PG", srv.ConnStr)
			return state.Config{Type: state.TypePG, PG: &state.PGConfig{ConnStrEnv: "CCM_TEST_PG", SchemaName: "ccm_states"}}, nil, runner.ProviderAttached
		},
		"http": func(t *testing.T) (state.Config, kubernetes.Interface, runner.ProviderMode) {
			srv := testhttpbackend.Start(t, testhttpbackend.WithBasicAuth("ccm", "copy-init-pw"))
			dir := t.TempDir()
			testkit.Must(t, os.WriteFile(filepath.Join(dir, "user"), []byte("ccm"), 0o600))
			testkit.Must(t, os.WriteFile(filepath.Join(dir, "pass"), []byte("copy-init-pw"), 0o600))
			return state.Config{Type: state.TypeHTTP, HTTP: &state.HTTPConfig{Address: srv.URL + "/states", UsernameFile: filepath.Join(dir, "user"), PasswordFile: filepath.Join(dir, "pass")}}, nil, runner.ProviderAttached
		},
		"s3": func(t *testing.T) (state.Config, kubernetes.Interface, runner.ProviderMode) {
			srv := s3Server(t)
			return state.Config{Type: state.TypeS3, S3: &state.S3Config{Bucket: "states", Region: srv.Region, KeyPrefix: "ccm/", Endpoint: srv.Endpoint, UsePathStyle: true}}, nil, runner.ProviderAttached
		},
	}
}

// A second object on the same backend gets a copy of the first's
// initialisation instead of `terraform init`, and plans and applies
// through it into its own state: both objects then change independently,
// and destroying one leaves the other's state alone.
func TestInitCopiedOnEveryBackend(t *testing.T) {
	testsize.SkipShort(t, "seven backends and distributions")
	cases := copyCases()
	for _, name := range slices.Sorted(maps.Keys(cases)) {
		t.Run(name, func(t *testing.T) {
			scfg, kube, mode := cases[name](t)
			states, err := state.New(scfg, state.Options{})
			if err != nil {
				t.Fatal(err)
			}
			if kube != nil {
				states.SetKubernetesClient(kube)
			}
			tc := tftest.Get(t)
			if strings.HasSuffix(name, "-tofu") {
				tc = tftest.OpenTofu(t)
			}
			e := newEnv(t, nil, func(c *runner.Config) {
				c.Provider = mode
				c.Terraform = runner.BinaryConfig{Distribution: runner.Distribution(tc.Distribution), Path: tc.Terraform}
			})
			target := func(n string) *state.Location {
				tg, err := states.Location(state.Object{Cluster: "test", Kind: "service", Namespace: "default", Name: n})
				if err != nil {
					t.Fatal(err)
				}
				return tg
			}
			job := func(tg *state.Location, name string, port int64) runner.Job {
				j := e.job(t, tg.Key, lbModule{name: name, port: port, block: toBlock(tg.Block)})
				j.Env, j.CLIWorkspace, j.DeleteState = tg.Env, tg.CLIWorkspace, tg.Delete
				return j
			}
			stateExists := func(tg *state.Location) bool {
				ok, err := tg.Exists(testkit.Context(t))
				if err != nil {
					t.Fatal(err)
				}
				return ok
			}
			a, b := target("first"), target("second")
			if _, err := e.r.Ensure(testkit.Context(t), job(a, "first", 80), runner.EnsureOptions{}); err != nil {
				t.Fatal(err)
			}
			if _, err := e.r.Ensure(testkit.Context(t), job(b, "second", 80), runner.EnsureOptions{}); err != nil {
				t.Fatal(err)
			}
			if inits, copies := e.r.Processes()["init"], e.r.InitsCopied(); inits != 1 || copies != 1 {
				t.Fatalf("%d inits, %d copies: want the second object's initialisation copied", inits, copies)
			}
			// The copy describes the second object's backend, nothing of
			// the first's (pg: the key is the selected workspace).
			bdir := filepath.Join(e.r.WorkDir(), b.Key, ".terraform")
			cached, err := os.ReadFile(filepath.Join(bdir, "terraform.tfstate"))
			if err != nil {
				t.Fatal(err)
			}
			env, _ := os.ReadFile(filepath.Join(bdir, "environment"))
			if strings.Contains(string(cached)+string(env), a.Key) || !strings.Contains(string(cached)+string(env), b.Key) {
				t.Fatalf("copied initialisation names the wrong object:\n%s\nworkspace %q", cached, env)
			}
			if spawned := mode == runner.ProviderSpawned; exists(filepath.Join(bdir, "providers")) != spawned ||
				exists(filepath.Join(bdir, "..", ".terraform.lock.hcl")) != spawned {
				t.Fatalf("%s mode: providers or lock file copied wrongly", mode)
			}
			if !stateExists(a) || !stateExists(b) {
				t.Fatalf("states: first %v, second %v", stateExists(a), stateExists(b))
			}
			for _, c := range []struct {
				tg   *state.Location
				name string
				port int64
			}{{b, "second", 81}, {a, "first", 82}} {
				res, err := e.r.Ensure(testkit.Context(t), job(c.tg, c.name, c.port), runner.EnsureOptions{})
				if err != nil {
					t.Fatal(err)
				}
				if s := res.Plan.Summary; s.Change != 1 || s.Add != 0 || s.Remove != 0 {
					t.Fatalf("update of %s: %+v", c.name, s)
				}
				if lb := e.lbs(t, c.name); len(lb) != 1 || int64(lb[0].Listeners[0].Port) != c.port {
					t.Fatalf("%s in the cloud: %+v", c.name, lb)
				}
			}
			// The second's destroy plans over its own state after the
			// first's update: had that update written there, the first's
			// load balancer would go and the second's stay.
			if _, err := e.r.Destroy(testkit.Context(t), job(b, "second", 81), runner.EnsureOptions{}); err != nil {
				t.Fatal(err)
			}
			if stateExists(b) || !stateExists(a) || len(e.lbs(t, "first")) != 1 || len(e.lbs(t, "second")) != 0 {
				t.Fatalf("after destroying the second: states %v %v, LBs %d %d", stateExists(a), stateExists(b), len(e.lbs(t, "first")), len(e.lbs(t, "second")))
			}
			if inits := e.r.Processes()["init"]; inits != 1 {
				t.Fatalf("%d inits", inits)
			}
		})
	}
}

// An initialisation terraform refuses (its cached backend configuration
// no longer matches the block: a bad copy, a hand edit) fails that run
// with terraform's reason, and the next run initialises again.
func TestRefusedInitialisationIsRedone(t *testing.T) {
	e := newEnv(t, nil)
	statePath := filepath.Join(t.TempDir(), "r.tfstate")
	if _, err := e.r.Ensure(testkit.Context(t), e.job(t, "r", lbModule{name: "r", backend: statePath}), runner.EnsureOptions{}); err != nil {
		t.Fatal(err)
	}
	cache := filepath.Join(e.r.WorkDir(), "r", ".terraform", "terraform.tfstate")
	data, err := os.ReadFile(cache)
	if err != nil {
		t.Fatal(err)
	}
	// Terraform trusts a cache whose hash matches the block: a hand edit
	// of the values alone would go unnoticed (copies have none).
	edited := regexp.MustCompile(`"hash": \d+`).ReplaceAllString(strings.ReplaceAll(string(data), statePath, statePath+".other"), `"hash": 1`)
	testkit.Must(t, os.WriteFile(cache, []byte(edited), 0o644))
	_, err = e.r.Ensure(testkit.Context(t), e.job(t, "r", lbModule{name: "r", port: 81, backend: statePath}), runner.EnsureOptions{})
	if err == nil || !strings.Contains(err.Error(), "Backend initialization required") {
		t.Fatalf("want terraform to refuse the initialisation, got %v", err)
	}
	inits := e.r.Processes()["init"]
	res, err := e.r.Ensure(testkit.Context(t), e.job(t, "r", lbModule{name: "r", port: 81, backend: statePath}), runner.EnsureOptions{})
	if err != nil || e.r.Processes()["init"] != inits+1 || res.Plan.Summary.Change != 1 {
		t.Fatalf("next run: %d inits after %d, %+v, %v", e.r.Processes()["init"], inits, res, err)
	}
}
