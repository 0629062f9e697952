package serverproc

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

func start(t *testing.T, script string) (*exec.Cmd, chan struct{}) {
	t.Helper()
	cmd := exec.Command("sh", "-c", script)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan struct{})
	go func() { _ = cmd.Wait(); close(exited) }()
	time.Sleep(100 * time.Millisecond) // let sh install its trap
	return cmd, exited
}

// A process that exits on the signal is not killed; one that ignores it
// is killed after the grace period.
func TestStop(t *testing.T) {
	cmd, exited := start(t, "sleep 60")
	Stop(cmd.Process, syscall.SIGTERM, 10*time.Second, exited)
	if ws := cmd.ProcessState.Sys().(syscall.WaitStatus); ws.Signal() != syscall.SIGTERM {
		t.Errorf("stopped by %v, want SIGTERM", ws.Signal())
	}

	cmd, exited = start(t, "trap '' TERM; while :; do sleep 0.1; done")
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
