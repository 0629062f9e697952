package testcluster

import "syscall"

// sysProcAttr kills the child if the thread that started it dies (the test
// binary is killed, or panics on -timeout), so no etcd or apiserver is left
// running. Go threads do not exit while the process lives, except for
// goroutines locked to a thread, which we never start processes from.
func sysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}
