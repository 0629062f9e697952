package tftest

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// ProcessLog counts terraform processes from the operating system: a
// wrapper script that appends its first argument (the subcommand) to a
// log and execs the real binary, so every process anything starts through
// it is counted, version checks included, whatever the caller's own
// counters say.
type ProcessLog struct {
	// Wrapper is the path to give in place of the binary.
	Wrapper string
	log     string
}

// CountProcesses writes a wrapper of binary into a directory of the test.
func CountProcesses(tb testing.TB, binary string) *ProcessLog {
	tb.Helper()
	dir := tb.TempDir()
	p := &ProcessLog{Wrapper: filepath.Join(dir, filepath.Base(binary)), log: filepath.Join(dir, "processes.log")}
	// One short write per process: appends of that size are atomic, so
	// concurrent processes do not interleave lines. The environment is
	// not used (terraform-exec replaces it), so the paths are literal.
	script := fmt.Sprintf("#!/bin/sh\nprintf '%%s\\n' \"${1:-none}\" >> %s\nexec %s \"$@\"\n", shellQuote(p.log), shellQuote(binary))
	if err := os.WriteFile(p.Wrapper, []byte(script), 0o755); err != nil {
		tb.Fatal(err)
	}
	return p
}

// Counts returns the processes started so far, by subcommand.
func (p *ProcessLog) Counts(tb testing.TB) map[string]int64 {
	tb.Helper()
	data, err := os.ReadFile(p.log)
	if os.IsNotExist(err) {
		return map[string]int64{}
	}
	if err != nil {
		tb.Fatal(err)
	}
	out := map[string]int64{}
	for _, line := range strings.Split(strings.TrimSpace(string(data)), "\n") {
		if line != "" {
			out[line]++
		}
	}
	return out
}

// Total is the number of processes started so far.
func (p *ProcessLog) Total(tb testing.TB) int64 {
	tb.Helper()
	var n int64
	for _, c := range p.Counts(tb) {
		n += c
	}
	return n
}

func shellQuote(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }
