package testcpu

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

func TestRecordRoundTrip(t *testing.T) {
	for _, r := range []Record{{Dir: "/repo/runner", User: 1.25, Sys: 0.5}, {Dir: "/repo/test/e2e", User: 300, Sys: 30, Test: "TestSoak"}} {
		got, err := Parse(r.String())
		if err != nil || got != r {
			t.Errorf("%q: parsed %+v, %v", r.String(), got, err)
		}
	}
	for _, bad := range []string{"/x\t1", "/x\tone\t2", "/x\t1\t2\tT\textra"} {
		if _, err := Parse(bad); err == nil {
			t.Errorf("%q: parsed", bad)
		}
	}
}

// A metered test records the CPU of the process it started (a shell
// counting to 300,000, a fraction of a second), with its name.
func TestMeterRecordsTheTest(t *testing.T) {
	file := filepath.Join(t.TempDir(), "cpu.tsv")
	t.Setenv(Env, file)
	var m Meter
	cmd := exec.Command("sh", "-c", "i=0; while [ $i -lt 300000 ]; do i=$((i+1)); done")
	if err := cmd.Run(); err != nil {
		t.Fatal(err)
	}
	m.Add(cmd.ProcessState)
	m.Add(nil) // never started: nothing
	m.Report(t)
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	r, err := Parse(strings.TrimSpace(string(data)))
	if err != nil || r.Test != t.Name() || r.Total() < 0.05 || m.processes != 1 {
		t.Fatalf("recorded %q (%+v, %v), %d processes", data, r, err, m.processes)
	}
}
