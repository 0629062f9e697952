package serverproc

import (
	"fmt"
	"os"
	"os/exec"
	"time"
)

// Process is a server process a harness started.
type Process struct {
	cmd    *exec.Cmd
	exited chan struct{} // closed when Wait returns
	err    error         // what Wait returned, once exited is closed
}

// Start starts cmd and waits for it in the background.
func Start(cmd *exec.Cmd) (*Process, error) {
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	p := &Process{cmd: cmd, exited: make(chan struct{})}
	go func() { p.err = cmd.Wait(); close(p.exited) }()
	return p, nil
}

// Stop is Stop for p's process.
func (p *Process) Stop(sig os.Signal, grace time.Duration) { Stop(p.cmd.Process, sig, grace, p.exited) }

// WaitReady polls ready every 10 ms until the server (name, e.g.
// "postgres") is ready. It fails at once when the process exits first, and
// after 60 s, having stopped it with stop; both errors quote log, the
// server's log tail.
func (p *Process) WaitReady(name string, ready func() bool, stop func(), log func() string) error {
	deadline := time.After(60 * time.Second)
	for {
		if ready() {
			return nil
		}
		select {
		case <-p.exited:
			return fmt.Errorf("%s exited during startup (%v):\n%s", name, p.err, log())
		case <-deadline:
			stop()
			return fmt.Errorf("%s not ready after 60s:\n%s", name, log())
		case <-time.After(10 * time.Millisecond):
		}
	}
}
