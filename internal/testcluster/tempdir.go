package testcluster

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// A cluster's temp dir holds ~120 MB (etcd preallocates its WAL), and one is
// left behind whenever a test binary is killed (e.g. go test -timeout). The
// dirs are named after the owning process, and each new one first sweeps
// those of dead processes. A dir kept for debugging a failed test (marked
// keptMarker) survives the sweep for a day.
const (
	tempPrefix = "testcluster-"
	keptMarker = "KEPT-FOR-DEBUGGING"
	keptFor    = 24 * time.Hour
)

func makeTempDir() (string, error) {
	sweepTempDirs()
	return os.MkdirTemp("", fmt.Sprintf("%s%d-", tempPrefix, os.Getpid()))
}

// keepTempDir marks dir to survive sweeps for keptFor.
func keepTempDir(dir string) {
	_ = os.WriteFile(filepath.Join(dir, keptMarker), nil, 0o644)
}

func sweepTempDirs() {
	dirs, _ := filepath.Glob(filepath.Join(os.TempDir(), tempPrefix+"*-*"))
	for _, dir := range dirs {
		pidStr, _, _ := strings.Cut(strings.TrimPrefix(filepath.Base(dir), tempPrefix), "-")
		pid, err := strconv.Atoi(pidStr)
		if err != nil || pid == os.Getpid() || alive(pid) {
			continue
		}
		if st, err := os.Stat(filepath.Join(dir, keptMarker)); err == nil && time.Since(st.ModTime()) < keptFor {
			continue
		}
		_ = os.RemoveAll(dir)
	}
}

// alive reports whether a process exists (EPERM: it does, not ours).
func alive(pid int) bool {
	err := syscall.Kill(pid, 0)
	return err == nil || err == syscall.EPERM
}
