package tftest

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// ProcessLog counts terraform processes from the operating system: a
// wrapper script that appends its first argument (the subcommand) and its
// working directory (the workspace) to a log and execs the real binary, so every process anything starts through
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
	// not used (terraform-exec replaces it), so the paths are literal;
	// $PWD is the shell's own.
	script := fmt.Sprintf("#!/bin/sh\nprintf '%%s\\t%%s\\n' \"${1:-none}\" \"$PWD\" >> %s\nexec %s \"$@\"\n", shellQuote(p.log), shellQuote(binary))
	if err := os.WriteFile(p.Wrapper, []byte(script), 0o755); err != nil {
		tb.Fatal(err)
	}
	return p
}

// Process is one terraform process: its subcommand and the directory it
// ran in.
type Process struct{ Command, Dir string }

// Processes are the processes started so far, in the order they started.
func (p *ProcessLog) Processes(tb testing.TB) []Process {
	tb.Helper()
	data, err := os.ReadFile(p.log)
	if os.IsNotExist(err) {
		return nil
	}
	if err != nil {
		tb.Fatal(err)
	}
	var out []Process
	for _, line := range strings.Split(strings.TrimSpace(string(data)), "\n") {
		if line != "" {
			command, dir, _ := strings.Cut(line, "\t")
			out = append(out, Process{command, dir})
		}
	}
	return out
}

// Counts returns the processes started so far, by subcommand.
func (p *ProcessLog) Counts(tb testing.TB) map[string]int64 {
	tb.Helper()
	out := map[string]int64{}
	for _, pr := range p.Processes(tb) {
		out[pr.Command]++
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
