// Package testcpu records the CPU tests use, as the kernel counts it for
// reaped processes, in the file $EXAMPLE_TEST_CPU names: hack/testcpu
// appends one record per test binary (the binary and every process it
// waited for), and a test that starts processes (a control plane, a
// controller and its terraform) appends one for itself with a Meter.
// hack/testsummary -cpu prints the suite's CPU by package and the
// busiest tests. On a machine of two cores the suite's wall time can fall
// no lower than half of its CPU, so it is the figure its budget is spent
// in.
package testcpu

import (
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
)

// Env names the file the records are appended to.
const Env = "EXAMPLE_TEST_CPU"

// Record is one line of the file: "<package dir>\t<user s>\t<system s>"
// for a test binary, with "\t<test>" for one test's processes (a part of
// its binary's figure, not an addition to it).
type Record struct {
	Dir       string
	User, Sys float64 // seconds
	Test      string  // "" for a whole test binary
}

// Total is user and system time.
func (r Record) Total() float64 { return r.User + r.Sys }

func (r Record) String() string {
	s := fmt.Sprintf("%s\t%.2f\t%.2f", r.Dir, r.User, r.Sys)
	if r.Test != "" {
		s += "\t" + r.Test
	}
	return s
}

// Parse reads one line of the file.
func Parse(line string) (Record, error) {
	f := strings.Split(line, "\t")
	if len(f) != 3 && len(f) != 4 {
		return Record{}, fmt.Errorf("a CPU record of %d fields: %q", len(f), line)
	}
	user, err1 := strconv.ParseFloat(f[1], 64)
	sys, err2 := strconv.ParseFloat(f[2], 64)
	if err1 != nil || err2 != nil {
		return Record{}, fmt.Errorf("a CPU record: %q", line)
	}
	r := Record{Dir: f[0], User: user, Sys: sys}
	if len(f) == 4 {
		r.Test = f[3]
	}
	return r, nil
}

// Append adds r to $EXAMPLE_TEST_CPU's file (nothing without it). Lines
// are short, so the appends of binaries that run at once do not
// interleave.
func Append(r Record) error {
	path := os.Getenv(Env)
	if path == "" {
		return nil
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		return fmt.Errorf("record the CPU of %s: %w", r.Dir, err)
	}
	_, err = fmt.Fprintln(f, r.String())
	return errors.Join(err, f.Close())
}
