package procdir

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/example/cloud-provider-example/internal/testkit"
)

// A directory is swept when its process is gone, kept while it lives.
func TestSweep(t *testing.T) {
	root := t.TempDir()
	gone := exec.Command("true")
	if err := gone.Run(); err != nil {
		t.Fatal(err)
	}
	dead := filepath.Join(root, "h-"+itoa(gone.Process.Pid)+"-x")
	mine := filepath.Join(root, "h-"+itoa(os.Getpid())+"-y")
	other := filepath.Join(root, "other-1-z")
	for _, d := range []string{dead, mine, other} {
		if err := os.Mkdir(d, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	dir, err := Make(root, "h")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(filepath.Base(dir), "h-"+itoa(os.Getpid())+"-") {
		t.Errorf("dir %s is not named after this process", dir)
	}
	for d, want := range map[string]bool{dead: false, mine: true, other: true, dir: true} {
		if _, err := os.Stat(d); (err == nil) != want {
			t.Errorf("%s: exists=%v, want %v", d, err == nil, want)
		}
	}
}

// The directory goes when the process that made it exits, however it ends.
func TestRemovedOnExit(t *testing.T) {
	if os.Getenv("PROCDIR_CHILD") != "" {
		dir, err := Make(os.Getenv("PROCDIR_ROOT"), "child")
		if err != nil {
			os.Exit(2)
		}
		os.Stdout.WriteString(dir + "\n")
		select {} // killed by the parent
	}
	root := t.TempDir()
	cmd := exec.Command(os.Args[0], "-test.run=^TestRemovedOnExit$")
	cmd.Env = append(os.Environ(), "PROCDIR_CHILD=1", "PROCDIR_ROOT="+root)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 4096)
	n, _ := out.Read(buf)
	dir := strings.TrimSpace(string(buf[:n]))
	if _, err := os.Stat(dir); err != nil {
		t.Fatalf("child's dir %q: %v", dir, err)
	}
	_ = cmd.Process.Kill() // SIGKILL: no cleanup of its own
	_ = cmd.Wait()
	// Another process (the helper) removes it: poll.
	testkit.EventuallyEvery(t, 10*time.Second, 50*time.Millisecond, dir+" removed after its process was killed", func() error {
		if _, err := os.Stat(dir); !os.IsNotExist(err) {
			return fmt.Errorf("still there (%v)", err)
		}
		return nil
	})
}

func itoa(i int) string { return strconv.Itoa(i) }
