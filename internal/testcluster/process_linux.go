package testcluster

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// sysProcAttr kills the child if the thread that started it dies (the test
// binary is killed, or panics on -timeout), so no etcd or apiserver is left
// running. Go threads do not exit while the process lives, except for
// goroutines locked to a thread, which we never start processes from.
func sysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}

// cpu is the CPU time (user and system) the process used so far, from
// /proc/PID/stat; 0 once it is gone.
func (p *process) cpu() time.Duration {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", p.cmd.Process.Pid))
	if err != nil {
		return 0
	}
	// The fields after the command name (which may hold spaces): utime
	// and stime are the 12th and 13th, in clock ticks (100 a second).
	_, rest, _ := strings.Cut(string(data), ") ")
	f := strings.Fields(rest)
	if len(f) < 13 {
		return 0
	}
	utime, _ := strconv.ParseInt(f[11], 10, 64)
	stime, _ := strconv.ParseInt(f[12], 10, 64)
	return time.Duration(utime+stime) * 10 * time.Millisecond
}
