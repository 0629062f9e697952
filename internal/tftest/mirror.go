package tftest

import (
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// The provider as laid out in the mirror (tfprovider.Address and
// tfprovider.Version: this package cannot import tfprovider, whose own
// tests use it).
const (
	ProviderAddress = "example.com/example/example"
	ProviderVersion = "0.1.0"
)

// Layout is the toolchain whose provider files hack/provider-mirror.sh
// writes into dir, without checking them (nor the terraform binary).
func Layout(dir string) Toolchain {
	return Toolchain{Distribution: Terraform, BinDir: dir, CLIConfig: filepath.Join(dir, "terraform.rc"), LockFile: filepath.Join(dir, "terraform-provider.lock.hcl")}
}

// ProviderBinary is the provider executable the mirror was made from.
func (tc Toolchain) ProviderBinary() string {
	return filepath.Join(tc.BinDir, "terraform-provider-example")
}

// MirrorDir is the filesystem mirror's root (the CLI config's).
func (tc Toolchain) MirrorDir() string { return filepath.Join(tc.BinDir, "terraform-mirror") }

// PlatformDir is the mirror directory terraform hashes for the lock file.
func (tc Toolchain) PlatformDir() string {
	return filepath.Join(tc.MirrorDir(), ProviderAddress, ProviderVersion, runtime.GOOS+"_"+runtime.GOARCH)
}

// MirrorBinary is the provider executable inside the mirror.
func (tc Toolchain) MirrorBinary() string {
	return filepath.Join(tc.PlatformDir(), "terraform-provider-example_v"+ProviderVersion)
}

// Build runs hack/provider-mirror.sh into dir and returns its output.
func Build(dir string) (string, error) {
	cmd := exec.Command(filepath.Join(RepoRoot(), "hack", "provider-mirror.sh"), dir)
	cmd.Env = append(os.Environ(), "CHECKPOINT_DISABLE=1")
	out, err := cmd.CombinedOutput()
	return string(out), err
}

// RequireAcceptance skips unless TF_ACC is set, the convention of
// terraform-plugin-testing (make test sets it).
func RequireAcceptance(t testing.TB) {
	t.Helper()
	if os.Getenv("TF_ACC") == "" {
		t.Skip("acceptance test skipped unless TF_ACC=1 (make test sets it)")
	}
}

// EnvList is the environment of a terraform process started with os/exec
// (not terraform-exec): Env, the KEY=VALUE pairs in extra, and what
// terraform-exec would set itself (no TLS between terraform and its
// plugins, which halves run time; automation mode).
func (tc Toolchain) EnvList(extra ...string) []string {
	env := tc.Env(map[string]string{"TF_DISABLE_PLUGIN_TLS": "1", "TF_IN_AUTOMATION": "1"})
	for _, kv := range extra {
		k, v, _ := strings.Cut(kv, "=")
		env[k] = v
	}
	out := make([]string, 0, len(env))
	for k, v := range env {
		out = append(out, k+"="+v)
	}
	return out
}
