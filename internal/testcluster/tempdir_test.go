package testcluster

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/example/cloud-provider-example/internal/procdir"
)

func TestSweepTempDirs(t *testing.T) {
	t.Setenv("TMPDIR", t.TempDir())
	dead := exec.Command("true")
	if err := dead.Run(); err != nil {
		t.Fatal(err)
	}
	mk := func(pid int, kept bool) string {
		dir, err := os.MkdirTemp("", fmt.Sprintf("%s-%d-", tempPrefix, pid))
		if err != nil {
			t.Fatal(err)
		}
		if kept {
			procdir.Keep(dir)
		}
		return dir
	}
	stale := mk(dead.Process.Pid, false)
	kept := mk(dead.Process.Pid, true)
	mine, err := makeTempDir() // sweeps
	if err != nil {
		t.Fatal(err)
	}
	for dir, want := range map[string]bool{stale: false, kept: true, mine: true} {
		if _, err := os.Stat(dir); (err == nil) != want {
			t.Errorf("%s exists = %v, want %v", filepath.Base(dir), err == nil, want)
		}
	}
}
