package simtest

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// BinaryPackage is the import path of the simulator's command.
const BinaryPackage = "github.com/example/cloud-provider-example/cmd/example-cloud"

var (
	buildOnce sync.Once
	buildPath string
	buildErr  error
)

// BuildBinary builds the example-cloud binary once per test process and
// returns its path, for tests that run (and kill) the real process. When
// $EXAMPLE_BIN names a directory holding an example-cloud binary (make test
// builds bin/ first and sets it), that binary is used instead.
func BuildBinary(t testing.TB) string {
	t.Helper()
	buildOnce.Do(func() {
		if dir := os.Getenv("EXAMPLE_BIN"); dir != "" {
			if path, err := filepath.Abs(filepath.Join(dir, "example-cloud")); err == nil {
				if fi, err := os.Stat(path); err == nil && fi.Mode().IsRegular() {
					buildPath = path
					return
				}
			}
		}
		buildPath, buildErr = build()
	})
	if buildErr != nil {
		t.Fatalf("simtest: building example-cloud: %v", buildErr)
	}
	return buildPath
}

func build() (string, error) {
	out, err := exec.Command("go", "env", "GOMOD").Output()
	if err != nil {
		return "", fmt.Errorf("go env GOMOD: %w", err)
	}
	modDir := filepath.Dir(strings.TrimSpace(string(out)))
	// One directory per module checkout, shared by the test processes of
	// all packages; each builds to a temporary name and renames it into
	// place, so concurrent builds cannot hand out a half-written file.
	sum := sha256.Sum256([]byte(modDir))
	dir := filepath.Join(os.TempDir(), "example-cloud-simtest-"+hex.EncodeToString(sum[:6]))
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	tmp, err := os.CreateTemp(dir, "example-cloud-*.tmp")
	if err != nil {
		return "", err
	}
	_ = tmp.Close()
	defer os.Remove(tmp.Name())
	cmd := exec.Command("go", "build", "-o", tmp.Name(), BinaryPackage)
	cmd.Dir = modDir
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("go build %s: %w\n%s", BinaryPackage, err, out)
	}
	path := filepath.Join(dir, "example-cloud")
	if err := os.Rename(tmp.Name(), path); err != nil {
		return "", err
	}
	return path, nil
}
