package main

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/example/cloud-provider-example/internal/testcpu"
)

// The CPU of a process the test binary started and waited for counts:
// the shell's child counts to a million (about a second of CPU here,
// however loaded the machine); the record says so, and
// the exit code is the binary's.
func TestRecordsWaitedForChildren(t *testing.T) {
	file := filepath.Join(t.TempDir(), "cpu")
	t.Setenv(testcpu.Env, file)
	code := run("/bin/sh", []string{"-c", `sh -c 'i=0; while [ $i -lt 1000000 ]; do i=$((i+1)); done'; exit 3`})
	if code != 3 {
		t.Fatalf("exit code %d, want the binary's 3", code)
	}
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	f := strings.Split(strings.TrimSpace(string(b)), "\t")
	wd, _ := os.Getwd()
	if len(f) != 3 || f[0] != wd {
		t.Fatalf("record %q", b)
	}
	user, _ := strconv.ParseFloat(f[1], 64)
	sys, _ := strconv.ParseFloat(f[2], 64)
	if user+sys < 0.5 {
		t.Fatalf("record %q: the grandchild's CPU is missing", b)
	}
}
