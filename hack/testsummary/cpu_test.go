package main

import (
	"strings"
	"testing"
)

// The packages are named busiest first, then, apart, the tests that
// metered their processes: parts of their package's figure, not added
// to it.
func TestCPUTable(t *testing.T) {
	for _, c := range []struct{ records, want string }{{
		records: "/repo/test/e2e\t1200.50\t600.00\n/repo/runner\t100.00\t20.00\n/elsewhere/x\t1.00\t0.00\n",
		want: "CPU of the tests (test binaries and every process they waited for, from the OS): 32.0 min (user 1302 s, system 620 s) in 3 packages; the busiest:\n" +
			"  1800.5s test/e2e (user 1200 s, system 600 s)\n" +
			"   120.0s runner (user 100 s, system 20 s)\n" +
			"     1.0s /elsewhere/x (user 1 s, system 0 s)\n",
	}, {
		records: "/repo/test/e2e\t1200.50\t600.00\n/repo/test/e2e\t20.00\t5.00\tTestSmall\n/repo/test/e2e\t300.00\t30.00\tTestSoak\n",
		want: "CPU of the tests (test binaries and every process they waited for, from the OS): 30.0 min (user 1200 s, system 600 s) in 1 packages; the busiest:\n" +
			"  1800.5s test/e2e (user 1200 s, system 600 s)\n" +
			"the busiest of the 2 tests that metered the processes they started (control planes, controllers and their terraform; part of their package's figure):\n" +
			"   330.0s test/e2e TestSoak\n" +
			"    25.0s test/e2e TestSmall\n",
	}} {
		recs, err := readCPU(strings.NewReader(c.records), "/repo")
		if err != nil {
			t.Fatal(err)
		}
		var out strings.Builder
		printCPU(&out, recs)
		if out.String() != c.want {
			t.Errorf("got:\n%s\nwant:\n%s", out.String(), c.want)
		}
	}
}

func TestCPURecordRefused(t *testing.T) {
	for _, bad := range []string{"/repo/x\t1.0\n", "/repo/x\tone\t2.0\n", "/repo/x\t1\t2\tT\textra\n"} {
		if _, err := readCPU(strings.NewReader(bad), "/repo"); err == nil {
			t.Errorf("%q: read without an error", bad)
		}
	}
}

// A run without hack/testcpu (no file) prints no table.
func TestCPUTableWithoutRecords(t *testing.T) {
	var out strings.Builder
	if err := cpuTable(&out, t.TempDir()+"/none"); err != nil || out.Len() != 0 {
		t.Fatalf("err %v, printed %q", err, out.String())
	}
}
