package testcluster

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
)

// findBinaries returns the directory holding etcd, kube-apiserver and the
// Kubernetes components named (kube-controller-manager, kube-scheduler).
func findBinaries(ctx context.Context, binDir string, components []string, log io.Writer) (string, error) {
	if binDir == "" {
		binDir = os.Getenv("EXAMPLE_CONTROL_PLANE_DIR")
	}
	if binDir == "" {
		env := []string{"K8S_COMPONENTS=" + strings.Join(append([]string{"kube-apiserver"}, components...), " ")}
		var err error
		if binDir, err = runScript(ctx, "control-plane.sh", env, log); err != nil {
			return "", err
		}
	}
	for _, name := range append([]string{"etcd", "kube-apiserver"}, components...) {
		if _, err := os.Stat(filepath.Join(binDir, name)); err != nil {
			return "", fmt.Errorf("control plane binaries: %w", err)
		}
	}
	return binDir, nil
}

// Tool is the path of the tool hack/NAME.sh builds from the Go module
// proxy (hack/coredns.sh), built first if missing, under the lock every
// cold build here takes. Its progress goes to log.
func Tool(ctx context.Context, name string, log io.Writer) (string, error) {
	return runScript(ctx, name+".sh", nil, log)
}

// runScript runs hack/NAME (instant when cached) with env added and
// returns the path it prints. Its progress (stderr) goes to log.
func runScript(ctx context.Context, name string, env []string, log io.Writer) (string, error) {
	script, err := findScript(name)
	if err != nil {
		return "", err
	}
	// Test packages run in parallel (go test ./...): on a cold cache they
	// would all build into the same directories at once.
	unlock, err := lockBuild(log)
	if err != nil {
		return "", err
	}
	defer unlock()

	var out bytes.Buffer
	cmd := exec.CommandContext(ctx, "bash", script)
	cmd.Env = append(os.Environ(), env...)
	cmd.Stdout = &out
	cmd.Stderr = log
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("%s: %w (its output is in the log above)", script, err)
	}
	path := strings.TrimSpace(out.String())
	if path == "" {
		return "", fmt.Errorf("%s printed no path", script)
	}
	return path, nil
}

// findScript looks for hack/NAME above the working directory (tests run
// in their package directory, the demo in the repo), then above this
// source file.
func findScript(name string) (string, error) {
	var starts []string
	if wd, err := os.Getwd(); err == nil {
		starts = append(starts, wd)
	}
	if _, file, _, ok := runtime.Caller(0); ok {
		starts = append(starts, filepath.Dir(file))
	}
	for _, dir := range starts {
		for {
			p := filepath.Join(dir, "hack", name)
			if _, err := os.Stat(p); err == nil {
				return p, nil
			}
			parent := filepath.Dir(dir)
			if parent == dir {
				break
			}
			dir = parent
		}
	}
	return "", fmt.Errorf("hack/%s not found above the working directory; set Options.BinDir or $EXAMPLE_CONTROL_PLANE_DIR", name)
}

// lockBuild takes an exclusive flock beside the script's cache.
func lockBuild(log io.Writer) (func(), error) {
	cache := os.Getenv("CACHE_DIR")
	if cache == "" {
		home, err := os.UserHomeDir()
		if err != nil {
			return nil, err
		}
		cache = filepath.Join(home, ".cache", "cloud-provider-example")
	}
	dir := filepath.Join(cache, "control-plane")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	f, err := os.OpenFile(filepath.Join(dir, ".build.lock"), os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return nil, err
	}
	if syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB) != nil {
		fmt.Fprintln(log, "testcluster: waiting for another process building the control plane")
		if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX); err != nil {
			f.Close()
			return nil, err
		}
	}
	return func() { f.Close() }, nil
}
