package main

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
)

// packageCPU is one test binary's CPU as hack/testcpu recorded it: its
// own and that of every process it waited for.
type packageCPU struct {
	dir       string
	user, sys float64
}

func (p packageCPU) total() float64 { return p.user + p.sys }

// busiest is how many packages the CPU table names.
const busiest = 8

// readCPU reads hack/testcpu's records; dir is made relative to root.
func readCPU(r io.Reader, root string) ([]packageCPU, error) {
	var out []packageCPU
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		f := strings.Split(sc.Text(), "\t")
		if len(f) != 3 {
			return nil, fmt.Errorf("a CPU record of %d fields: %q", len(f), sc.Text())
		}
		user, err1 := strconv.ParseFloat(f[1], 64)
		sys, err2 := strconv.ParseFloat(f[2], 64)
		if err1 != nil || err2 != nil {
			return nil, fmt.Errorf("a CPU record: %q", sc.Text())
		}
		dir := f[0]
		if rel, err := filepath.Rel(root, dir); err == nil && !strings.HasPrefix(rel, "..") {
			dir = rel
		}
		out = append(out, packageCPU{dir: dir, user: user, sys: sys})
	}
	return out, sc.Err()
}

// printCPU prints the suite's CPU and the packages that used most.
func printCPU(w io.Writer, pkgs []packageCPU) {
	if len(pkgs) == 0 {
		return
	}
	sort.SliceStable(pkgs, func(i, j int) bool { return pkgs[i].total() > pkgs[j].total() })
	var user, sys float64
	for _, p := range pkgs {
		user, sys = user+p.user, sys+p.sys
	}
	fmt.Fprintf(w, "CPU of the tests (test binaries and every process they waited for, from the OS): %.1f min (user %.0f s, system %.0f s) in %d packages; the busiest:\n",
		(user+sys)/60, user, sys, len(pkgs))
	for _, p := range pkgs[:min(busiest, len(pkgs))] {
		fmt.Fprintf(w, "%8.1fs %s (user %.0f s, system %.0f s)\n", p.total(), p.dir, p.user, p.sys)
	}
}

// cpuTable reads path (hack/testcpu's file) and prints its table; a
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
	pkgs, err := readCPU(f, root)
	if err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	printCPU(w, pkgs)
	return nil
}
