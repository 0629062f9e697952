package serverproc

import (
	"bufio"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// start runs script, which prints a line once it is ready (its trap
// installed), and returns when it has.
func start(t *testing.T, script string) (*exec.Cmd, chan struct{}) {
	t.Helper()
	cmd := exec.Command("sh", "-c", script)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	if _, err := bufio.NewReader(out).ReadString('\n'); err != nil {
		t.Fatalf("script never said it was ready: %v", err)
	}
	exited := make(chan struct{})
	go func() { _ = cmd.Wait(); close(exited) }()
	return cmd, exited
}

// A process that exits on the signal is not killed; one that ignores it
// is killed after the grace period.
func TestStop(t *testing.T) {
	cmd, exited := start(t, "echo ready; exec sleep 60")
	Stop(cmd.Process, syscall.SIGTERM, 10*time.Second, exited)
	if ws := cmd.ProcessState.Sys().(syscall.WaitStatus); ws.Signal() != syscall.SIGTERM {
		t.Errorf("stopped by %v, want SIGTERM", ws.Signal())
	}

	cmd, exited = start(t, "trap '' TERM; echo ready; while :; do sleep 0.1; done")
	Stop(cmd.Process, syscall.SIGTERM, 200*time.Millisecond, exited)
	if ws := cmd.ProcessState.Sys().(syscall.WaitStatus); ws.Signal() != syscall.SIGKILL {
		t.Errorf("stopped by %v, want SIGKILL after the grace period", ws.Signal())
	}
}

func TestLogTail(t *testing.T) {
	path := filepath.Join(t.TempDir(), "server.log")
	if got := LogTail(path); got != "" {
		t.Errorf("missing log: %q", got)
	}
	log := strings.Repeat("a", 10<<10) + "the end"
	if err := os.WriteFile(path, []byte(log), 0o600); err != nil {
		t.Fatal(err)
	}
	if got := LogTail(path); len(got) != 8<<10 || !strings.HasSuffix(got, "the end") {
		t.Errorf("tail of %d bytes ending %q", len(got), got[len(got)-10:])
	}
}
