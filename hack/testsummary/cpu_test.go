package main

import (
	"strings"
	"testing"
)

func TestCPUTable(t *testing.T) {
	records := "/repo/test/e2e\t1200.50\t600.00\n/repo/runner\t100.00\t20.00\n/elsewhere/x\t1.00\t0.00\n"
	pkgs, err := readCPU(strings.NewReader(records), "/repo")
	if err != nil {
		t.Fatal(err)
	}
	var out strings.Builder
	printCPU(&out, pkgs)
	want := "CPU of the tests (test binaries and every process they waited for, from the OS): 32.0 min (user 1302 s, system 620 s) in 3 packages; the busiest:\n" +
		"  1800.5s test/e2e (user 1200 s, system 600 s)\n" +
		"   120.0s runner (user 100 s, system 20 s)\n" +
		"     1.0s /elsewhere/x (user 1 s, system 0 s)\n"
	if out.String() != want {
		t.Fatalf("got:\n%s\nwant:\n%s", out.String(), want)
	}
}

func TestCPURecordRefused(t *testing.T) {
	for _, bad := range []string{"/repo/x\t1.0\n", "/repo/x\tone\t2.0\n"} {
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
