package testcpu

import (
	"os"
	"sync"
	"testing"
	"time"
)

// Meter adds up the CPU of the processes one test started, each as the
// kernel counted it when it was reaped (with every process it waited
// for: a controller's terraform, terraform's providers). A process killed
// before its children were reaped leaves theirs out, and the test
// binary's own work (an in-process simulator) is not in it: the binary's
// record holds both.
type Meter struct {
	mu        sync.Mutex
	user, sys time.Duration
	processes int
}

// Add counts one reaped process; a nil state (never started, or not
// waited for) counts nothing.
func (m *Meter) Add(ps *os.ProcessState) {
	if m == nil || ps == nil {
		return
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	m.user += ps.UserTime()
	m.sys += ps.SystemTime()
	m.processes++
}

// Report logs the meter's figure and records it for t, at the end of the
// test (a cleanup registered before the processes' own, so that it runs
// after they are reaped).
func (m *Meter) Report(t testing.TB) {
	t.Helper()
	m.mu.Lock()
	r := Record{User: m.user.Seconds(), Sys: m.sys.Seconds(), Test: t.Name()}
	n := m.processes
	m.mu.Unlock()
	t.Logf("CPU of the %d processes the test started (from the OS): %.1f s (user %.1f, system %.1f)", n, r.Total(), r.User, r.Sys)
	dir, err := os.Getwd()
	if err == nil {
		r.Dir = dir
		err = Append(r)
	}
	if err != nil {
		t.Logf("testcpu: %v", err)
	}
}
