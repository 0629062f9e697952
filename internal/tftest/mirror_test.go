package tftest

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"golang.org/x/mod/sumdb/dirhash"

	"github.com/example/cloud-provider-example/internal/filecopy"
)

// Tests of hack/provider-mirror.sh and the lock-file policy documented in
// docs/provider/README.md. They run the real terraform and are acceptance
// tests (TF_ACC=1).

var h1RE = regexp.MustCompile(`"(h1:[A-Za-z0-9+/=]+)"`)

func lockHash(t *testing.T, lockFile string) string {
	t.Helper()
	raw, err := os.ReadFile(lockFile)
	if err != nil {
		t.Fatal(err)
	}
	m := h1RE.FindAllSubmatch(raw, -1)
	if len(m) != 1 {
		t.Fatalf("%s: want exactly one h1 hash, found %d:\n%s", lockFile, len(m), raw)
	}
	return string(m[0][1])
}

// TestReproducibleBuild: building the same source twice gives the same
// binary and the same lock-file hash, and that hash is the h1 hash of the
// mirror's platform directory (what terraform init verifies).
func TestReproducibleBuild(t *testing.T) {
	RequireAcceptance(t)
	first := Get(t)
	second := Layout(t.TempDir())
	if out, err := Build(second.BinDir); err != nil {
		t.Fatalf("second build: %v\n%s", err, out)
	}
	a, _ := os.ReadFile(first.ProviderBinary())
	b, _ := os.ReadFile(second.ProviderBinary())
	if len(a) == 0 || !bytes.Equal(a, b) {
		t.Fatalf("two builds of the same source differ (%d vs %d bytes); if %s comes from EXAMPLE_BIN, "+
			"was it built from this source (make provider)?", len(a), len(b), first.BinDir)
	}
	h1, h2 := lockHash(t, first.LockFile), lockHash(t, second.LockFile)
	if h1 != h2 {
		t.Fatalf("lock hashes differ: %s vs %s", h1, h2)
	}
	want, err := dirhash.HashDir(second.PlatformDir(), "", dirhash.Hash1)
	if err != nil {
		t.Fatal(err)
	}
	if h2 != want {
		t.Fatalf("lock hash %s is not the mirror directory's h1 hash %s", h2, want)
	}

	// A no-op rerun changes nothing, not even timestamps.
	before, _ := os.Stat(second.LockFile)
	out, err := Build(second.BinDir)
	if err != nil {
		t.Fatalf("rerun: %v\n%s", err, out)
	}
	after, _ := os.Stat(second.LockFile)
	if !after.ModTime().Equal(before.ModTime()) || !strings.Contains(out, "binary unchanged") ||
		!strings.Contains(out, "lock file up to date") {
		t.Fatalf("rerun was not a no-op:\n%s", out)
	}
}

// TestCleanInit: a fresh workspace with the CLI config and the lock file
// initialises offline with no warning and keeps the lock file as is.
func TestCleanInit(t *testing.T) {
	RequireAcceptance(t)
	bin := Get(t)
	dir := workspace(t, bin.LockFile)
	out, err := terraform(bin, dir, "init", "-input=false", "-no-color")
	if err != nil {
		t.Fatalf("terraform init: %v\n%s", err, out)
	}
	if strings.Contains(strings.ToLower(out), "warning") {
		t.Fatalf("terraform init printed a warning:\n%s", out)
	}
	if !strings.Contains(out, "Installed "+ProviderAddress+" v"+ProviderVersion) {
		t.Fatalf("provider not installed from the mirror:\n%s", out)
	}
	got, _ := os.ReadFile(filepath.Join(dir, ".terraform.lock.hcl"))
	want, _ := os.ReadFile(bin.LockFile)
	if !bytes.Equal(got, want) {
		t.Fatalf("init rewrote the lock file:\n%s", got)
	}
	if out, err := terraform(bin, dir, "validate", "-no-color"); err != nil ||
		strings.Contains(strings.ToLower(out), "warning") {
		t.Fatalf("terraform validate: %v\n%s", err, out)
	}
}

// TestStaleLockFile: a workspace locked to a different build of the
// provider fails init with a checksum error, and initialises after taking
// the mirror's new lock file.
func TestStaleLockFile(t *testing.T) {
	RequireAcceptance(t)
	bin := Get(t)

	// An "older build": the same mirror layout with a different binary.
	old := Layout(t.TempDir())
	if err := os.MkdirAll(old.PlatformDir(), 0o755); err != nil {
		t.Fatal(err)
	}
	exe, err := os.ReadFile(bin.MirrorBinary())
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(old.MirrorBinary(), append(exe, "older build"...), 0o755); err != nil {
		t.Fatal(err)
	}
	gen := workspace(t, "")
	if out, err := terraform(bin, gen, "providers", "lock", "-fs-mirror="+old.MirrorDir(),
		"-platform="+filepath.Base(old.PlatformDir()), ProviderAddress); err != nil {
		t.Fatalf("locking the old build: %v\n%s", err, out)
	}
	staleLock := filepath.Join(gen, ".terraform.lock.hcl")
	if lockHash(t, staleLock) == lockHash(t, bin.LockFile) {
		t.Fatal("the stale lock file has the current hash")
	}

	dir := workspace(t, staleLock)
	out, err := terraform(bin, dir, "init", "-input=false", "-no-color")
	if err == nil {
		t.Fatalf("init with a stale lock file succeeded:\n%s", out)
	}
	if !regexp.MustCompile(`doesn't match any of the checksums\s+previously recorded in the dependency lock file`).MatchString(out) {
		t.Fatalf("init failed without the checksum error:\n%s", out)
	}

	copyFile(t, bin.LockFile, filepath.Join(dir, ".terraform.lock.hcl"))
	if out, err := terraform(bin, dir, "init", "-input=false", "-no-color"); err != nil {
		t.Fatalf("init with the new lock file: %v\n%s", err, out)
	}
}

// workspace is a directory with a configuration requiring the provider,
// pinned the way the CCM's renderer pins it, and lockFile copied in.
func workspace(t *testing.T, lockFile string) string {
	t.Helper()
	dir := t.TempDir()
	cfg := `terraform {
  required_providers {
    example = {
      source  = "` + ProviderAddress + `"
      version = "= ` + ProviderVersion + `"
    }
  }
}

provider "example" {
  endpoint = "http://127.0.0.1:1"
  token    = "unused"
}
`
	if err := os.WriteFile(filepath.Join(dir, "main.tf"), []byte(cfg), 0o644); err != nil {
		t.Fatal(err)
	}
	if lockFile != "" {
		copyFile(t, lockFile, filepath.Join(dir, ".terraform.lock.hcl"))
	}
	return dir
}

func terraform(tc Toolchain, dir string, args ...string) (string, error) {
	cmd := exec.Command(tc.Terraform, args...)
	cmd.Dir = dir
	cmd.Env = tc.EnvList()
	out, err := cmd.CombinedOutput()
	return string(out), err
}

// copyFile puts a copy of from at to, replacing what is there.
func copyFile(t *testing.T, from, to string) {
	t.Helper()
	if err := os.Remove(to); err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	if err := filecopy.File(from, to, 0o644); err != nil {
		t.Fatal(err)
	}
}
