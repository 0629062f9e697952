package main

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/example/cloud-provider-example/internal/testcpu"
)

// busiest is how many packages the CPU table names.
const busiest = 8

// busiestTests is how many tests it names.
const busiestTests = 12

// readCPU reads internal/testcpu's records (hack/testcpu's, one per test
// binary, and those of tests that metered the processes they started);
// dirs are made relative to root.
func readCPU(r io.Reader, root string) ([]testcpu.Record, error) {
	var out []testcpu.Record
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		rec, err := testcpu.Parse(sc.Text())
		if err != nil {
			return nil, err
		}
		if rel, err := filepath.Rel(root, rec.Dir); err == nil && !strings.HasPrefix(rel, "..") {
			rec.Dir = rel
		}
		out = append(out, rec)
	}
	return out, sc.Err()
}

// printCPU prints the suite's CPU, the packages that used most, and the
// tests whose processes did.
func printCPU(w io.Writer, records []testcpu.Record) {
	var pkgs, tests []testcpu.Record
	for _, r := range records {
		if r.Test == "" {
			pkgs = append(pkgs, r)
		} else {
			tests = append(tests, r)
		}
	}
	byTotal := func(rs []testcpu.Record) {
		sort.SliceStable(rs, func(i, j int) bool { return rs[i].Total() > rs[j].Total() })
	}
	byTotal(pkgs)
	byTotal(tests)
	if len(pkgs) > 0 {
		var user, sys float64
		for _, p := range pkgs {
			user, sys = user+p.User, sys+p.Sys
		}
		fmt.Fprintf(w, "CPU of the tests (test binaries and every process they waited for, from the OS): %.1f min (user %.0f s, system %.0f s) in %d packages; the busiest:\n",
			(user+sys)/60, user, sys, len(pkgs))
		for _, p := range pkgs[:min(busiest, len(pkgs))] {
			fmt.Fprintf(w, "%8.1fs %s (user %.0f s, system %.0f s)\n", p.Total(), p.Dir, p.User, p.Sys)
		}
	}
	if len(tests) > 0 {
		fmt.Fprintf(w, "the busiest of the %d tests that metered the processes they started (control planes, controllers and their terraform; part of their package's figure):\n", len(tests))
		for _, r := range tests[:min(busiestTests, len(tests))] {
			fmt.Fprintf(w, "%8.1fs %s %s\n", r.Total(), r.Dir, r.Test)
		}
	}
}

// cpuTable reads path (internal/testcpu's file) and prints its table; a
// missing file prints nothing (the run used no -exec testcpu).
func cpuTable(w io.Writer, path string) error {
	f, err := os.Open(path)
	if os.IsNotExist(err) {
		return nil
	}
	if err != nil {
		return err
	}
	defer f.Close()
	root, err := os.Getwd()
	if err != nil {
		return err
	}
	records, err := readCPU(f, root)
	if err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	printCPU(w, records)
	return nil
}
