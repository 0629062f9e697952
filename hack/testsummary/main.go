// Command testsummary reads `go test -json` on standard input and prints
// what plain `go test` prints (each package's ok/FAIL line, and the output
// of failed tests only), then every skipped test with its reason, every
// failed test with what it said of its failure, and a closing line
// "N passed, N failed, N skipped". Before that closing line it names the
// slowest top-level tests (less what they waited for a slot), so a run's
// time can be read by test, and with
// -cpu the tests' CPU by package (hack/testcpu).
//
// The failures are said again at the end because a failed test's output
// can be long (an end-to-end test prints its processes' log tails), and
// CI shows the tail of what was printed.
//
// It exits non-zero when a test failed, a package did not build, or a test
// skipped while EXAMPLE_ALLOW_SKIPS is unset: in make test every test gets
// its tool (the targets build or install them) or fails naming it, so a
// skip there means a test silently did not run. EXAMPLE_ALLOW_SKIPS=1 is
// the documented opt-out for a machine that lacks a tool on purpose.
//
// With -short (make test-short: go test -short, TF_ACC unset) the tests
// it leaves out (testsize.SkipShort, and the acceptance tests that skip
// naming TF_ACC) are listed as such and fail nothing; any other skip
// fails as in make test. Without -short such a skip fails like any
// other: make test runs every test.
package main

import (
	"bufio"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"github.com/example/cloud-provider-example/internal/need"
	"github.com/example/cloud-provider-example/internal/testsize"
)

// event is one line of `go test -json` (cmd/test2json).
type event struct {
	Action  string
	Package string
	Test    string
	Output  string
	Elapsed float64 // seconds, on pass, fail and skip
}

type key struct{ pkg, test string }

type summary struct {
	out            io.Writer
	passed, failed int
	// failedPackages: packages that failed, by a test or by not building.
	failedPackages int
	skipped        []string
	// leftOut: the tests go test -short left out (testsize.SkipShort),
	// counted apart under -short only.
	leftOut []string
	short   bool
	// cpu is hack/testcpu's file, read once the tests ended ("": none).
	cpu string
	// failures: each failed test and the lines it wrote from a _test.go
	// file (t.Error, t.Fatal, t.Log), printed again at the end.
	failures []string
	// output buffers each running test's output until it ends.
	output map[key]*strings.Builder
	// elapsed is each top-level test's time, for the slowest.
	elapsed []timed
	// queued is, by top-level test, the least time one of its
	// environments waited for a slot (queuedLine): time it ran nothing.
	queued map[key]float64
}

// queuedLine is what the e2e package's tests log when they waited for a
// slot (test/e2e/main_test.go); the slowest tests are named by their time
// less their wait before their first slot.
var queuedLine = regexp.MustCompile(`queued ([0-9.]+)s for a slot`)

type timed struct {
	name    string
	seconds float64
}

// slowest is how many of the slowest top-level tests are named.
const slowest = 12

func main() {
	short := flag.Bool("short", false, "the run is make test-short's: the tests it leaves out (testsize.SkipShort, acceptance tests without TF_ACC) are listed, not failed")
	cpu := flag.String("cpu", "", "hack/testcpu's records (go test -exec testcpu): the tests' CPU by package is printed before the closing line")
	flag.Parse()
	s := &summary{out: os.Stdout, output: map[key]*strings.Builder{}, short: *short, cpu: *cpu}
	if err := s.read(os.Stdin); err != nil {
		fmt.Fprintln(os.Stderr, "testsummary:", err)
		os.Exit(2)
	}
	os.Exit(s.finish(os.Getenv(need.AllowSkips) != ""))
}

func (s *summary) read(r io.Reader) error {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<20), 16<<20)
	for sc.Scan() {
		line := sc.Bytes()
		var e event
		if err := json.Unmarshal(line, &e); err != nil || e.Action == "" {
			// Not an event (a build error printed by go itself): as is.
			fmt.Fprintln(s.out, string(line))
			continue
		}
		s.event(e)
	}
	return sc.Err()
}

func (s *summary) event(e event) {
	k := key{e.Package, e.Test}
	top, _, _ := strings.Cut(e.Test, "/")
	if m := queuedLine.FindStringSubmatch(e.Output); e.Action == "output" && m != nil {
		if s.queued == nil {
			s.queued = map[key]float64{}
		}
		sec, _ := strconv.ParseFloat(m[1], 64)
		if q, ok := s.queued[key{e.Package, top}]; !ok || sec < q {
			s.queued[key{e.Package, top}] = sec
		}
	}
	if (e.Action == "pass" || e.Action == "fail") && e.Test != "" && top == e.Test {
		s.elapsed = append(s.elapsed, timed{e.Package + " " + e.Test, e.Elapsed - s.queued[k]})
	}
	switch e.Action {
	case "output":
		if e.Test == "" {
			// Package lines: "ok  pkg 1.2s", "FAIL pkg", "--- FAIL" of a
			// build, panics outside tests. "PASS"/"FAIL" alone repeat them.
			if t := strings.TrimSpace(e.Output); t != "PASS" && t != "FAIL" && !strings.HasPrefix(t, "=== RUN") {
				fmt.Fprint(s.out, e.Output)
			}
			return
		}
		b := s.output[k]
		if b == nil {
			b = &strings.Builder{}
			s.output[k] = b
		}
		b.WriteString(e.Output)
	case "pass":
		if e.Test != "" {
			s.passed++
			delete(s.output, k)
		}
	case "fail":
		if e.Test == "" {
			s.failedPackages++
			return
		}
		s.failed++
		if b := s.output[k]; b != nil {
			fmt.Fprint(s.out, b.String())
		}
		s.failures = append(s.failures, failure(e.Package, e.Test, s.output[k]))
		delete(s.output, k)
	case "skip":
		if e.Test != "" {
			if s.short && leftOut(s.output[k]) {
				s.leftOut = append(s.leftOut, e.Package+" "+e.Test)
			} else {
				s.skipped = append(s.skipped, e.Package+" "+e.Test+": "+skipReason(s.output[k]))
			}
			delete(s.output, k)
		}
	}
}

// leftOut tells whether a skipped test said make test-short left it out
// (testsize.SkipShort, or an acceptance test without TF_ACC), on any of
// its lines: a cleanup may log after the skip (a server stopped).
func leftOut(b *strings.Builder) bool {
	return b != nil && (strings.Contains(b.String(), testsize.LeftOut) || strings.Contains(b.String(), testsize.Acceptance))
}

// skipReason is what the test said when it skipped (its last lines).
func skipReason(b *strings.Builder) string {
	if b == nil {
		return "(no reason given)"
	}
	var lines []string
	for _, l := range strings.Split(b.String(), "\n") {
		l = strings.TrimSpace(l)
		if l != "" && !strings.HasPrefix(l, "=== ") && !strings.HasPrefix(l, "--- SKIP") {
			lines = append(lines, l)
		}
	}
	if len(lines) == 0 {
		return "(no reason given)"
	}
	return lines[len(lines)-1]
}

// testLine is a line written by t.Log and friends from a test file.
var testLine = regexp.MustCompile(`^\s+\S+_test\.go:\d+: `)

// Of a failed test's lines, at most maxFailureLines are said again, each
// cut at maxFailureLine bytes: enough to name the failure.
const maxFailureLines, maxFailureLine = 8, 400

// failure is a failed test's name and its lines from test files.
func failure(pkg, test string, b *strings.Builder) string {
	out := "FAIL " + pkg + " " + test
	if b == nil {
		return out
	}
	n := 0
	for _, l := range strings.Split(b.String(), "\n") {
		if !testLine.MatchString(l) {
			continue
		}
		if n++; n > maxFailureLines {
			out += "\n    ..."
			break
		}
		if len(l) > maxFailureLine {
			l = l[:maxFailureLine] + "..."
		}
		out += "\n" + l
	}
	return out
}

// finish prints the skips, the failures and the closing line and returns
// the exit code.
func (s *summary) finish(allowSkips bool) int {
	sort.Strings(s.skipped)
	for _, sk := range s.skipped {
		fmt.Fprintln(s.out, "SKIP", sk)
	}
	if len(s.leftOut) > 0 {
		sort.Strings(s.leftOut)
		fmt.Fprintf(s.out, "left out by make test-short (make test runs them): %s\n", strings.Join(s.leftOut, ", "))
	}
	sort.SliceStable(s.elapsed, func(i, j int) bool { return s.elapsed[i].seconds > s.elapsed[j].seconds })
	if len(s.elapsed) > 0 {
		fmt.Fprintln(s.out, "slowest tests:")
	}
	for _, t := range s.elapsed[:min(slowest, len(s.elapsed))] {
		fmt.Fprintf(s.out, "%8.1fs %s\n", t.seconds, t.name)
	}
	if s.cpu != "" {
		if err := cpuTable(s.out, s.cpu); err != nil {
			fmt.Fprintln(s.out, "the tests' CPU:", err)
		}
	}
	for _, f := range s.failures {
		fmt.Fprintln(s.out, f)
	}
	if s.short {
		fmt.Fprintf(s.out, "%d passed, %d failed, %d skipped, %d left out by make test-short\n", s.passed, s.failed, len(s.skipped), len(s.leftOut))
	} else {
		fmt.Fprintf(s.out, "%d passed, %d failed, %d skipped\n", s.passed, s.failed, len(s.skipped))
	}
	switch {
	case s.failed > 0 || s.failedPackages > 0:
		return 1
	case len(s.skipped) > 0 && !allowSkips:
		fmt.Fprintf(s.out, "FAIL: %d tests skipped: in make test every test gets its tool or fails naming it (%s=1 allows skips, see README)\n", len(s.skipped), need.AllowSkips)
		return 1
	}
	return 0
}
