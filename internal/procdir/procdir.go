// Package procdir gives a test harness one temporary directory per test
// process, named <prefix>-<pid>-*. A helper process deletes it when the
// test process exits, however it ends (go test -timeout, kill -9); if that
// helper is killed too, the next process to call Make sweeps it. Sweep is
// the same clean-up for harnesses that make directories of their own with
// such names (testcluster: one per cluster), and Keep spares one for a day
// (the files of a failed test, kept for debugging).
package procdir

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// Make creates this process's <root>/<prefix>-<pid>-* directory (root ""
// is os.TempDir()), after deleting those of processes that are gone.
func Make(root, prefix string) (string, error) {
	if root == "" {
		root = os.TempDir()
	}
	Sweep(root, prefix)
	dir, err := os.MkdirTemp(root, fmt.Sprintf("%s-%d-*", prefix, os.Getpid()))
	if err != nil {
		return "", err
	}
	removeOnExit(dir)
	return dir, nil
}

// exitPipes' write ends are held by this process only (close-on-exec).
var exitPipes []*os.File

// removeOnExit starts a helper that deletes dir once this process has
// exited: the helper reads a pipe until EOF, which comes when the kernel
// closes the write end. Best effort: sweep is the fallback.
func removeOnExit(dir string) {
	r, w, err := os.Pipe()
	if err != nil {
		return
	}
	defer r.Close()
	cmd := exec.Command("/bin/sh", "-c",
		`cat >/dev/null; for i in 1 2 3 4 5; do rm -rf "$0" 2>/dev/null; [ -e "$0" ] || exit 0; sleep 1; done`, dir)
	cmd.Stdin = r // Stdout/Stderr: /dev/null, so go test does not wait for it
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if err := cmd.Start(); err != nil {
		w.Close()
		return
	}
	exitPipes = append(exitPipes, w) // no finalizer may close it
}

// keptMarker in a directory spares it from Sweep for keptFor.
const (
	keptMarker = "KEPT-FOR-DEBUGGING"
	keptFor    = 24 * time.Hour
)

// Keep spares dir from sweeps for a day.
func Keep(dir string) {
	_ = os.WriteFile(filepath.Join(dir, keptMarker), nil, 0o644)
}

// Sweep deletes the <root>/<prefix>-<pid>-* directories of processes that
// are gone (root "" is os.TempDir()), except those kept less than a day ago.
func Sweep(root, prefix string) {
	if root == "" {
		root = os.TempDir()
	}
	dirs, _ := filepath.Glob(filepath.Join(root, prefix+"-*-*"))
	for _, d := range dirs {
		pid, err := strconv.Atoi(strings.SplitN(strings.TrimPrefix(filepath.Base(d), prefix+"-"), "-", 2)[0])
		if err != nil || pid == os.Getpid() {
			continue
		}
		if err := syscall.Kill(pid, 0); !errors.Is(err, syscall.ESRCH) {
			continue // alive (EPERM: alive, not ours)
		}
		if st, err := os.Stat(filepath.Join(d, keptMarker)); err == nil && time.Since(st.ModTime()) < keptFor {
			continue
		}
		_ = os.RemoveAll(d)
	}
}
