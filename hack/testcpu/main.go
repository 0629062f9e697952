// Command testcpu runs a test binary for go test (-exec) and records the
// CPU it used: user and system time of the binary and of every process
// it waited for (terraform, the control planes, the controllers), as the
// kernel counts them for a reaped child. make test names it, and
// hack/testsummary -cpu prints the suite's CPU by package: on a machine
// of two cores the suite's wall time can fall no lower than half of it,
// so it is the figure the suite's budget is spent in.
//
// Each run appends one record, "<package directory>\t<user s>\t<system s>",
// to the file $EXAMPLE_TEST_CPU names (package internal/testcpu).
package main

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"syscall"

	"github.com/example/cloud-provider-example/internal/testcpu"
)

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: testcpu <test binary> [args...] (go test -exec)")
		os.Exit(2)
	}
	os.Exit(run(os.Args[1], os.Args[2:]))
}

func run(bin string, args []string) int {
	cmd := exec.Command(bin, args...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	// go test kills what it started (this process) on its own timeout:
	// the test binary must not outlive it.
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, syscall.SIGINT, syscall.SIGTERM, syscall.SIGQUIT)
	if err := cmd.Start(); err != nil {
		fmt.Fprintln(os.Stderr, "testcpu:", err)
		return 2
	}
	go func() {
		for s := range sigs {
			_ = cmd.Process.Signal(s)
		}
	}()
	err := cmd.Wait()
	var exit *exec.ExitError
	if err != nil && !errors.As(err, &exit) {
		fmt.Fprintln(os.Stderr, "testcpu:", err)
		return 2
	}
	if err := record(cmd.ProcessState); err != nil {
		fmt.Fprintln(os.Stderr, "testcpu:", err)
	}
	if code := cmd.ProcessState.ExitCode(); code >= 0 {
		return code
	}
	return 1 // killed by a signal
}

// record appends the test binary's CPU to $EXAMPLE_TEST_CPU.
func record(ps *os.ProcessState) error {
	dir, err := os.Getwd()
	if err != nil {
		return err
	}
	return testcpu.Append(testcpu.Record{Dir: dir, User: ps.UserTime().Seconds(), Sys: ps.SystemTime().Seconds()})
}
