// Package tftest gives tests the real terraform toolchain of this repo:
// the terraform binary (or OpenTofu's, built by hack/tofu.sh) and the
// offline provider mirror built by hack/provider-mirror.sh.
package tftest

import (
	"context"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"syscall"
	"testing"

	"github.com/hashicorp/terraform-exec/tfexec"

	"github.com/example/cloud-provider-example/internal/need"
	"github.com/example/cloud-provider-example/internal/testsize"
	"github.com/example/cloud-provider-example/internal/tfgc"
)

// Distributions.
const (
	Terraform = "terraform"
	Tofu      = "tofu"
)

// Toolchain is what a terraform run in a test needs.
type Toolchain struct {
	// Distribution is Terraform or Tofu (runner.Distribution's values).
	Distribution string
	// Terraform is the distribution's binary: terraform on PATH, or tofu from
	// EXAMPLE_TOFU.
	Terraform string
	// BinDir holds the provider, its mirror, CLI config and lock file.
	BinDir string
	// CLIConfig is the project's terraform CLI config (mirror only).
	CLIConfig string
	// LockFile is the provider lock file for workspaces.
	LockFile string
}

var (
	once      sync.Once
	tc        Toolchain
	tcErr     string
	tcMissing bool
)

// Get returns the toolchain. With EXAMPLE_BIN set (make test sets it after
// `make provider`) it uses that; otherwise it runs hack/provider-mirror.sh
// once into a cache directory, serialised across test processes. A machine
// without terraform fails the test naming it (need.Missing), as any other
// failure does.
//
// The distribution is terraform, or the one EXAMPLE_DISTRIBUTION names: with
// EXAMPLE_DISTRIBUTION=tofu (and EXAMPLE_TOFU) every test of a package runs on
// OpenTofu, as a person checking the whole suite on it would.
func Get(t testing.TB) Toolchain {
	t.Helper()
	base := get(t)
	switch e := os.Getenv("EXAMPLE_DISTRIBUTION"); e {
	case "", Terraform:
		return base
	case Tofu:
		return tofu(t, base)
	default:
		t.Fatalf("EXAMPLE_DISTRIBUTION=%q: want %q or %q", e, Terraform, Tofu)
	}
	return base
}

// Distributions returns a toolchain per distribution to run a test on: terraform, and
// tofu when EXAMPLE_TOFU is set (make test always sets it). Tests that
// loop over them name subtests by Distribution.
func Distributions(t testing.TB) []Toolchain {
	t.Helper()
	base := get(t)
	out := []Toolchain{base}
	if os.Getenv("EXAMPLE_TOFU") != "" {
		out = append(out, tofu(t, base))
	} else {
		t.Log("EXAMPLE_TOFU is unset: running on terraform only (make test builds tofu and sets it)")
	}
	return out
}

// OnDistributions runs test once per distribution (Distributions), as a
// subtest named by the distribution.
func OnDistributions(t *testing.T, test func(t *testing.T, tc Toolchain)) {
	for _, tc := range Distributions(t) {
		t.Run(tc.Distribution, func(t *testing.T) { test(t, tc) })
	}
}

// OpenTofu returns the toolchain with OpenTofu's binary (EXAMPLE_TOFU, built
// by hack/tofu.sh); the test fails naming it when it is unset (need.Missing).
func OpenTofu(t testing.TB) Toolchain {
	t.Helper()
	return tofu(t, get(t))
}

func tofu(t testing.TB, base Toolchain) Toolchain {
	t.Helper()
	path := os.Getenv("EXAMPLE_TOFU")
	if path == "" {
		need.Missing(t, "EXAMPLE_TOFU is unset: the OpenTofu binary comes from hack/tofu.sh")
	}
	if _, err := os.Stat(path); err != nil {
		t.Fatalf("EXAMPLE_TOFU: %v (run make tofu)", err)
	}
	base.Distribution, base.Terraform = Tofu, path
	return base
}

// EndToEnd is set by the end-to-end tests (test/e2e), the one layer make
// test-short runs terraform in: under go test -short, a test elsewhere
// that asks for the toolchain is left out (testsize.SkipShort), make test
// runs it. The fast tier then keeps to what runs without terraform and
// to the end-to-end tests that neither scale up nor take minutes.
var EndToEnd bool

func get(t testing.TB) Toolchain {
	t.Helper()
	if !EndToEnd {
		testsize.SkipShort(t, "runs terraform or OpenTofu below the end-to-end tests")
	}
	once.Do(setup)
	if tcMissing {
		need.Missing(t, tcErr)
	}
	if tcErr != "" {
		t.Fatal(tcErr)
	}
	return tc
}

func setup() {
	tf, err := exec.LookPath("terraform")
	if err != nil {
		tcMissing, tcErr = true, "terraform is not on PATH"
		return
	}
	bin := os.Getenv("EXAMPLE_BIN")
	if bin == "" {
		bin, err = buildMirror()
		if err != nil {
			tcErr = err.Error()
			return
		}
	}
	tc = Toolchain{Distribution: Terraform, Terraform: tf, BinDir: bin, CLIConfig: filepath.Join(bin, "terraform.rc"), LockFile: filepath.Join(bin, "terraform-provider.lock.hcl")}
	for _, f := range []string{tc.CLIConfig, tc.LockFile, tc.MirrorBinary()} {
		if _, err := os.Stat(f); err != nil {
			tcErr = "provider mirror incomplete (run `make provider`): " + err.Error()
			return
		}
	}
}

// RepoRoot is the repository's top directory: the nearest directory
// holding go.mod above the working directory, which go test sets to the
// package's own. Not this file's path from runtime.Caller: make test builds
// with -trimpath, which leaves it an import path.
func RepoRoot() string {
	dir, err := os.Getwd()
	if err != nil {
		panic("tftest: working directory: " + err.Error())
	}
	for start := dir; ; {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			panic("tftest: no go.mod above " + start)
		}
		dir = parent
	}
}

func buildMirror() (string, error) {
	cache, err := os.UserCacheDir()
	if err != nil {
		cache = os.TempDir()
	}
	bin := filepath.Join(cache, "cloud-provider-example", "test-bin")
	if err := os.MkdirAll(bin, 0o755); err != nil {
		return "", err
	}
	lock, err := os.OpenFile(filepath.Join(bin, ".lock"), os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return "", err
	}
	defer lock.Close()
	if err := syscall.Flock(int(lock.Fd()), syscall.LOCK_EX); err != nil {
		return "", err
	}
	cmd := exec.Command(filepath.Join(RepoRoot(), "hack", "provider-mirror.sh"), bin)
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	if err := cmd.Run(); err != nil {
		return "", err
	}
	return bin, nil
}

// Env is the environment for a terraform process in a test (with
// terraform-exec, also call SetDisablePluginTLS(true): it refuses TF_*
// variables it manages itself): the project's CLI config, no checkpoint
// calls, and proxies pointing nowhere, so that any access beyond this
// machine fails loudly instead of silently succeeding.
func (tc Toolchain) Env(extra map[string]string) map[string]string {
	env := map[string]string{
		"PATH":               os.Getenv("PATH"),
		"HOME":               os.Getenv("HOME"),
		"TF_CLI_CONFIG_FILE": tc.CLIConfig,
		"CHECKPOINT_DISABLE": "1",
		"HTTPS_PROXY":        "http://127.0.0.1:9",
		"HTTP_PROXY":         "http://127.0.0.1:9",
		"NO_PROXY":           "127.0.0.1,localhost",
	}
	maps.Copy(env, tfgc.Env(0)) // as the runner's, shipped
	for k, v := range extra {
		env[k] = v
	}
	return env
}

// Exec returns a terraform-exec handle for dir with the project's CLI
// config: offline, provider from the mirror, plugin TLS off.
func (tc Toolchain) Exec(t testing.TB, dir string) *tfexec.Terraform {
	t.Helper()
	tf, err := tfexec.NewTerraform(dir, tc.Terraform)
	if err != nil {
		t.Fatal(err)
	}
	// SetEnv replaces the whole environment: pass what terraform needs and
	// nothing that could reach the network or a user's config.
	if err := tf.SetEnv(tc.Env(nil)); err != nil {
		t.Fatal(err)
	}
	// terraform-exec owns TF_DISABLE_PLUGIN_TLS; skipping the per-start
	// TLS certificate halves run time.
	if err := tf.SetDisablePluginTLS(true); err != nil {
		t.Fatal(err)
	}
	return tf
}

// Init copies the mirror's lock file into dir and runs terraform init
// there, so the provider comes from the mirror only.
func (tc Toolchain) Init(t testing.TB, dir string, opts ...tfexec.InitOption) *tfexec.Terraform {
	t.Helper()
	lock, err := os.ReadFile(tc.LockFile)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, ".terraform.lock.hcl"), lock, 0o644); err != nil {
		t.Fatal(err)
	}
	tf := tc.Exec(t, dir)
	if err := tf.Init(context.Background(), opts...); err != nil {
		t.Fatalf("terraform init in %s: %v", dir, err)
	}
	return tf
}

// Validate runs terraform init without a backend and terraform validate in
// dir, and fails the test on any diagnostic.
func (tc Toolchain) Validate(t testing.TB, dir string) {
	t.Helper()
	tf := tc.Init(t, dir, tfexec.Backend(false))
	out, err := tf.Validate(context.Background())
	if err != nil {
		t.Fatalf("terraform validate in %s: %v", dir, err)
	}
	for _, d := range out.Diagnostics {
		t.Errorf("%s: %s: %s", d.Severity, d.Summary, d.Detail)
	}
	if !out.Valid {
		t.Errorf("%s is not valid", dir)
	}
}
