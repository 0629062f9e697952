// Package serverproc stops the server processes test harnesses run
// (PostgreSQL, versitygw) and reads their logs, the same way for each.
package serverproc

import (
	"os"
	"time"
)

// Stop sends sig to p and waits up to grace for exited to close (the
// harness closes it when its Wait returns); then it kills p and waits.
func Stop(p *os.Process, sig os.Signal, grace time.Duration, exited <-chan struct{}) {
	_ = p.Signal(sig)
	select {
	case <-exited:
		return
	case <-time.After(grace):
	}
	_ = p.Kill()
	<-exited
}

// LogTail is the last 8 KiB of the log file at path ("" when unreadable):
// enough to see why a server failed, short enough for a test log.
func LogTail(path string) string {
	b, _ := os.ReadFile(path)
	if len(b) > 8<<10 {
		b = b[len(b)-8<<10:]
	}
	return string(b)
}
