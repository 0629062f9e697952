package main

import (
	"bufio"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/example/cloud-provider-example/internal/testkit"
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
	case err := <-done:
		t.Logf("exited after SIGINT: %v", err)
	case <-time.After(30 * time.Second):
		t.Fatal("did not exit after SIGINT")
	}
}

// TestExitsWhenTerraformDies: a provider whose terraform was SIGKILLed
// exits instead of living on as an orphan, and leaves no socket behind:
// it listens in a directory of its own, which it removes.
func TestExitsWhenTerraformDies(t *testing.T) {
	sockets := t.TempDir()
	// sh stands in for terraform: it starts the provider with the plugin
	// handshake cookie, prints its pid and waits.
	sh := exec.Command("sh", "-c", `"$0" & echo $!; wait`, os.Args[0])
	sh.Env = append(os.Environ(), runMainEnv+"=1", "PLUGIN_UNIX_SOCKET_DIR="+sockets,
		"TF_PLUGIN_MAGIC_COOKIE=d602bf8f470bc67ca7faa0386276bbdd4330efaf76d1a219cb4d6991ca9872b2")
	out, err := sh.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := sh.Start(); err != nil {
		t.Fatal(err)
	}
	r := bufio.NewReader(out)
	line, err := r.ReadString('\n')
	if err != nil {
		t.Fatal(err)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(line))
	if err != nil {
		t.Fatalf("pid line %q: %v", line, err)
	}
	t.Cleanup(func() { _ = syscall.Kill(pid, syscall.SIGKILL) })
	// The provider serves: it prints go-plugin's handshake line, which
	// names its socket (1|6|unix|<path>|grpc|...).
	hs, err := r.ReadString('\n')
	if f := strings.Split(hs, "|"); err != nil || len(f) < 4 || f[1] != "6" || f[2] != "unix" ||
		!strings.HasPrefix(f[3], filepath.Join(sockets, "terraform-provider-example-")) {
		t.Fatalf("handshake %q, %v: want a unix socket in a directory of its own under %s", hs, err, sockets)
	}
	if !alive(pid) {
		t.Fatal("provider exited while its parent lives")
	}
	_ = sh.Process.Kill()
	_ = sh.Wait()
	// Not our child, so no wait() reports its exit: poll.
	testkit.EventuallyEvery(t, 10*time.Second, 100*time.Millisecond, "the provider exiting after its parent died", func() error {
		if alive(pid) {
			return errors.New("still running")
		}
		return nil
	})
	if left, err := os.ReadDir(sockets); err != nil || len(left) != 0 {
		t.Fatalf("left in the socket directory: %v, %v", left, err)
	}
}

// alive reports whether pid runs (a zombie has exited).
func alive(pid int) bool {
	data, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return false
	}
	f := strings.Fields(string(data))
	return len(f) > 2 && f[2] != "Z"
}
