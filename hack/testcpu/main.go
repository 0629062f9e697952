// Command testcpu runs a test binary for go test (-exec) and records the
// CPU it used: user and system time of the binary and of every process
// it waited for (terraform, the control planes, the controllers), as the
// kernel counts them for a reaped child. make test names it, and
// hack/testsummary -cpu prints the suite's CPU by package: on a machine
// of two cores the suite's wall time can fall no lower than half of it,
// so it is the figure the suite's budget is spent in.
//
// Each run appends one line, "<package directory>\t<user s>\t<system s>",
// to the file $EXAMPLE_TEST_CPU names (nothing without it); lines are
// short, so appends of packages that run at once do not interleave.
package main

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"syscall"
)

// Env names the file the records are appended to.
const Env = "EXAMPLE_TEST_CPU"

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
	path := os.Getenv(Env)
	if path == "" {
		return nil
	}
	dir, err := os.Getwd()
	if err != nil {
		return err
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		return fmt.Errorf("record the CPU of %s: %w", dir, err)
	}
	_, err = fmt.Fprintf(f, "%s\t%.2f\t%.2f\n", dir, ps.UserTime().Seconds(), ps.SystemTime().Seconds())
	return errors.Join(err, f.Close())
}
