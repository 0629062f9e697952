package tfprovider

import (
	"io"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/example/cloud-provider-example/internal/tftest"
)

// captureStderr returns what this process writes to file descriptor 2
// while fn runs (terraform-plugin-log writes to the stderr the process
// started with, not to os.Stderr).
func captureStderr(t *testing.T, fn func()) string {
	t.Helper()
	saved, err := syscall.Dup(2)
	if err != nil {
		t.Fatal(err)
	}
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := syscall.Dup3(int(w.Fd()), 2, 0); err != nil {
		t.Fatal(err)
	}
	got := make(chan string)
	go func() { b, _ := io.ReadAll(r); got <- string(b) }()
	func() {
		defer func() {
			_ = syscall.Dup3(saved, 2, 0)
			_ = syscall.Close(saved)
			_ = w.Close()
		}()
		fn()
	}()
	return <-got
}

// The in-process provider logs as terraform's providers do: nothing
// unless TF_LOG asks, then into TF_LOG_PATH_MASK's file named after the
// server; never onto this process's stderr (tf6server's default is TRACE
// there).
func TestAccInProcessLogs(t *testing.T) {
	tftest.RequireAcceptance(t)
	for _, k := range []string{"TF_LOG", "TF_LOG_PATH", "TF_LOG_PATH_MASK", "TF_ACC_LOG_PATH", "TF_LOG_SDK", "TF_LOG_PROVIDER", "TF_LOG_PROVIDER_EXAMPLE"} {
		t.Setenv(k, "")
	}
	e := newTestEnv(t)
	apply := func(name string) {
		s := serveTest(t, providerFor(e.tokenEnv), InProcessOptions{Name: name})
		dir := t.TempDir()
		at := attach(t, dir, s)
		ctx, cancel := bg()
		defer cancel()
		writeFile(t, filepath.Join(dir, "main.tf"), e.lbConfig(name, 80))
		if err := at.tf.Init(ctx, at.opt); err != nil {
			t.Fatal(err)
		}
		if err := at.tf.Apply(ctx, at.opt); err != nil {
			t.Fatal(err)
		}
	}
	if out := captureStderr(t, func() { apply("quiet") }); strings.Contains(out, "@level") || strings.Contains(out, "tf_rpc") {
		t.Fatalf("the in-process provider logged onto stderr:\n%.2000s", out)
	}

	logs := t.TempDir()
	t.Setenv("TF_LOG", "DEBUG")
	t.Setenv("TF_LOG_PATH_MASK", filepath.Join(logs, "%s.log"))
	apply("loud")
	data, err := os.ReadFile(filepath.Join(logs, "example-provider-loud.log"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(data), "Example API request") || strings.Contains(string(data), e.sim.Token) {
		t.Fatalf("provider log (want its API requests, never the token):\n%.2000s", data)
	}
}
