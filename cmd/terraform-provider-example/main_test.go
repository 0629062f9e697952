package main

import (
	"bufio"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"
)

// The test binary doubles as the provider: with this variable set it runs
// main, so the tests exercise the real entry point without a separate build.
const runMainEnv = "TERRAFORM_PROVIDER_EXAMPLE_RUN_MAIN"

func TestMain(m *testing.M) {
	if os.Getenv(runMainEnv) == "1" {
		os.Args = append([]string{os.Args[0]}, strings.Fields(os.Getenv(runMainEnv+"_ARGS"))...)
		main()
		os.Exit(0)
	}
	os.Exit(m.Run())
}

func command(args string) *exec.Cmd {
	cmd := exec.Command(os.Args[0])
	cmd.Env = append(os.Environ(), runMainEnv+"=1", runMainEnv+"_ARGS="+args)
	return cmd
}

// TestRunDirectly: started by hand rather than by terraform, the binary
// says what it is and fails.
func TestRunDirectly(t *testing.T) {
	out, err := command("").CombinedOutput()
	if err == nil {
		t.Fatalf("exited 0:\n%s", out)
	}
	if !strings.Contains(string(out), "This binary is a plugin") {
		t.Fatalf("unexpected output:\n%s", out)
	}
}

// TestDebugMode: -debug serves the provider under its registry address and
// prints the reattach configuration for TF_REATTACH_PROVIDERS.
func TestDebugMode(t *testing.T) {
	cmd := command("-debug")
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = cmd.Process.Kill(); _ = cmd.Wait() }()
	found := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			if line := sc.Text(); strings.Contains(line, "TF_REATTACH_PROVIDERS=") {
				found <- line
				return
			}
		}
		close(found)
	}()
	select {
	case line, ok := <-found:
		if !ok || !strings.Contains(line, `"example.com/example/example"`) {
			t.Fatalf("no reattach line for example.com/example/example: %q", line)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("no reattach line within 30s")
	}
	// It stops cleanly on interrupt.
	if err := cmd.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		t.Fatal("did not exit after SIGINT")
	}
}
