// Package mirrortest gives tests the offline provider installation that
// hack/provider-mirror.sh builds, and runs terraform against it the way the
// project does: own CLI config, no network, no checkpoint calls.
package mirrortest

import (
	"crypto/sha256"
	"encoding/hex"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"

	"github.com/example/cloud-provider-example/internal/need"
)

// Provider identity as laid out in the mirror.
const (
	Address = "example.com/example/example"
	Version = "0.1.0"
)

// Bin is a directory prepared by hack/provider-mirror.sh.
type Bin struct {
	Dir       string
	Binary    string // the provider executable
	Mirror    string // filesystem mirror root
	CLIConfig string // terraform.rc using only the mirror
	LockFile  string // dependency lock file for workspaces
}

// MirrorBinary is the provider executable inside the mirror.
func (b Bin) MirrorBinary() string {
	return filepath.Join(b.PlatformDir(), "terraform-provider-example_v"+Version)
}

// PlatformDir is the mirror directory terraform hashes for the lock file.
func (b Bin) PlatformDir() string {
	return filepath.Join(b.Mirror, Address, Version, runtime.GOOS+"_"+runtime.GOARCH)
}

// At describes the layout of dir without checking it.
func At(dir string) Bin {
	return Bin{
		Dir:       dir,
		Binary:    filepath.Join(dir, "terraform-provider-example"),
		Mirror:    filepath.Join(dir, "terraform-mirror"),
		CLIConfig: filepath.Join(dir, "terraform.rc"),
		LockFile:  filepath.Join(dir, "terraform-provider.lock.hcl"),
	}
}

var (
	builtOnce sync.Once
	builtDir  string
	builtErr  string
)

// Terraform returns the terraform executable or skips the test.
func Terraform(t testing.TB) string {
	t.Helper()
	p, err := exec.LookPath("terraform")
	if err != nil {
		need.Missing(t, "terraform is not on PATH (the provider tests run the real terraform CLI)")
	}
	return p
}

// RequireAcceptance skips unless TF_ACC is set, like terraform-plugin-testing.
func RequireAcceptance(t testing.TB) {
	t.Helper()
	if os.Getenv("TF_ACC") == "" {
		t.Skip("acceptance test skipped unless TF_ACC=1 (make test sets it)")
	}
}

// Get returns $EXAMPLE_BIN when it holds a mirror (make test builds it);
// otherwise it runs hack/provider-mirror.sh, once per test process, into a
// directory under the system temp dir kept per checkout: the script is
// idempotent and serialised, so later runs and parallel test processes
// reuse it.
func Get(t testing.TB) Bin {
	t.Helper()
	Terraform(t)
	if dir := os.Getenv("EXAMPLE_BIN"); dir != "" {
		b := At(dir)
		for _, f := range []string{b.CLIConfig, b.LockFile, b.MirrorBinary()} {
			if _, err := os.Stat(f); err != nil {
				t.Fatalf("EXAMPLE_BIN=%s has no complete provider mirror (run `make provider`): %v", dir, err)
			}
		}
		return b
	}
	builtOnce.Do(func() {
		sum := sha256.Sum256([]byte(RepoRoot()))
		dir := filepath.Join(os.TempDir(), "terraform-provider-example-mirror-"+hex.EncodeToString(sum[:6]))
		if out, err := Build(dir); err != nil {
			builtErr = err.Error() + "\n" + out
			return
		}
		builtDir = dir
	})
	if builtErr != "" {
		t.Fatalf("building the provider mirror: %s", builtErr)
	}
	return At(builtDir)
}

// Build runs hack/provider-mirror.sh into dir and returns its output.
func Build(dir string) (string, error) {
	cmd := exec.Command(filepath.Join(RepoRoot(), "hack", "provider-mirror.sh"), dir)
	cmd.Env = append(os.Environ(), "CHECKPOINT_DISABLE=1")
	out, err := cmd.CombinedOutput()
	return string(out), err
}

// RepoRoot is the module root, found from the go.mod above this package.
func RepoRoot() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Clean(filepath.Join(filepath.Dir(file), "..", "..", ".."))
}

// Env is a minimal environment for terraform: the given CLI config, no
// checkpoint calls, no TLS between terraform and plugins (halves run
// time), and proxies pointing nowhere so any network access fails loudly
// instead of silently succeeding.
func Env(cliConfig string, extra ...string) map[string]string {
	env := map[string]string{
		"PATH":                  os.Getenv("PATH"),
		"HOME":                  os.Getenv("HOME"),
		"TF_CLI_CONFIG_FILE":    cliConfig,
		"CHECKPOINT_DISABLE":    "1",
		"TF_DISABLE_PLUGIN_TLS": "1",
		"TF_IN_AUTOMATION":      "1",
		"HTTPS_PROXY":           "http://127.0.0.1:9",
		"HTTP_PROXY":            "http://127.0.0.1:9",
		"NO_PROXY":              "127.0.0.1,localhost",
	}
	for _, kv := range extra {
		k, v, _ := strings.Cut(kv, "=")
		env[k] = v
	}
	return env
}

// EnvList is Env as a KEY=VALUE list for os/exec.
func EnvList(cliConfig string, extra ...string) []string {
	var out []string
	for k, v := range Env(cliConfig, extra...) {
		out = append(out, k+"="+v)
	}
	return out
}
