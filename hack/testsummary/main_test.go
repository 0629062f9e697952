package main

import (
	"strings"
	"testing"
)

func run(t *testing.T, allowSkips bool, events ...string) (string, int) {
	t.Helper()
	var out strings.Builder
	s := &summary{out: &out, output: map[key]*strings.Builder{}}
	if err := s.read(strings.NewReader(strings.Join(events, "\n"))); err != nil {
		t.Fatal(err)
	}
	code := s.finish(allowSkips)
	return out.String(), code
}

const (
	passEvents = `{"Action":"run","Package":"p","Test":"TestA"}
{"Action":"output","Package":"p","Test":"TestA","Output":"=== RUN   TestA\n"}
{"Action":"output","Package":"p","Test":"TestA","Output":"    a_test.go:3: chatter\n"}
{"Action":"pass","Package":"p","Test":"TestA","Elapsed":0.5}`
	skipEvents = `{"Action":"run","Package":"p","Test":"TestB"}
{"Action":"output","Package":"p","Test":"TestB","Output":"    b_test.go:9: terraform is not on PATH\n"}
{"Action":"output","Package":"p","Test":"TestB","Output":"--- SKIP: TestB (0.00s)\n"}
{"Action":"skip","Package":"p","Test":"TestB"}`
	failEvents = `{"Action":"run","Package":"p","Test":"TestC"}
{"Action":"output","Package":"p","Test":"TestC","Output":"    c_test.go:1: boom\n"}
{"Action":"fail","Package":"p","Test":"TestC"}
{"Action":"output","Package":"p","Output":"FAIL\tp\t0.1s\n"}
{"Action":"fail","Package":"p"}`
	okPackage = `{"Action":"output","Package":"p","Output":"ok  \tp\t0.1s\n"}
{"Action":"pass","Package":"p"}`
)

func TestPassingRun(t *testing.T) {
	out, code := run(t, false, passEvents, okPackage)
	if code != 0 || !strings.HasSuffix(out, "ok  \tp\t0.1s\nslowest tests:\n     0.5s p TestA\n1 passed, 0 failed, 0 skipped\n") || strings.Contains(out, "chatter") {
		t.Fatalf("exit %d, output:\n%s", code, out)
	}
}

func TestSkipFailsUnlessAllowed(t *testing.T) {
	out, code := run(t, false, passEvents, skipEvents, okPackage)
	if code != 1 || !strings.Contains(out, "SKIP p TestB: b_test.go:9: terraform is not on PATH\nslowest tests:\n     0.5s p TestA\n1 passed, 0 failed, 1 skipped\nFAIL: 1 tests skipped") {
		t.Fatalf("exit %d, output:\n%s", code, out)
	}
	if _, code := run(t, true, passEvents, skipEvents, okPackage); code != 0 {
		t.Fatalf("with skips allowed: exit %d", code)
	}
}

func TestFailureShowsItsOutput(t *testing.T) {
	out, code := run(t, true, passEvents, failEvents)
	if code != 1 || !strings.Contains(out, "c_test.go:1: boom\nFAIL\tp\t0.1s\nslowest tests:\n     0.5s p TestA\n     0.0s p TestC\nFAIL p TestC\n    c_test.go:1: boom\n1 passed, 1 failed, 0 skipped\n") {
		t.Fatalf("exit %d, output:\n%s", code, out)
	}
}

// A failure's own lines are said again last, without the log lines
// printed after them (a cluster's log tails), which CI would otherwise
// show in their place.
func TestFailureIsSaidAgainLast(t *testing.T) {
	tails := `{"Action":"output","Package":"p","Test":"TestD","Output":"    d_test.go:7: the policy in force: not within 30s\n"}
{"Action":"output","Package":"p","Test":"TestD","Output":"    testing.go:58: testcluster: test failed; files kept\n"}
{"Action":"output","Package":"p","Test":"TestD","Output":"        I1126 04:03:49.784349 policy_source.go:240] refreshing policies\n"}
{"Action":"fail","Package":"p","Test":"TestD"}`
	out, code := run(t, true, tails, failEvents)
	want := "slowest tests:\n     0.0s p TestD\n     0.0s p TestC\nFAIL p TestD\n    d_test.go:7: the policy in force: not within 30s\nFAIL p TestC\n    c_test.go:1: boom\n0 passed, 2 failed, 0 skipped\n"
	if code != 1 || !strings.HasSuffix(out, want) {
		t.Fatalf("exit %d, output:\n%s\nwant it to end with:\n%s", code, out, want)
	}
}

func TestBuildFailureFails(t *testing.T) {
	out, code := run(t, true, "# p\np/x.go:1:1: syntax error", `{"Action":"output","Package":"p","Output":"FAIL\tp [build failed]\n"}`, `{"Action":"fail","Package":"p"}`)
	if code != 1 || !strings.Contains(out, "p/x.go:1:1: syntax error\nFAIL\tp [build failed]\n0 passed, 0 failed, 0 skipped\n") {
		t.Fatalf("exit %d, output:\n%s", code, out)
	}
}

// The slowest top-level tests are named, slowest first; subtests are not.
func TestSlowestNamed(t *testing.T) {
	out, _ := run(t, true, `{"Action":"pass","Package":"p","Test":"TestFast","Elapsed":1}`,
		`{"Action":"pass","Package":"p","Test":"TestSlow","Elapsed":90.25}`,
		`{"Action":"pass","Package":"p","Test":"TestSlow/sub","Elapsed":90}`)
	want := "slowest tests:\n    90.2s p TestSlow\n     1.0s p TestFast\n3 passed, 0 failed, 0 skipped\n"
	if !strings.HasSuffix(out, want) {
		t.Fatalf("output:\n%s\nwant it to end with:\n%s", out, want)
	}
}

// A test's time waiting for a slot before its first environment (its
// own or a subtest's line, the least) is not counted as its time.
func TestSlowestLessQueued(t *testing.T) {
	out, _ := run(t, true,
		`{"Action":"output","Package":"p","Test":"TestQueued/a","Output":"    main_test.go:70: queued 100.5s for a slot (of 5)\n"}`,
		`{"Action":"output","Package":"p","Test":"TestQueued/b","Output":"    main_test.go:70: queued 40.0s for a slot (of 5)\n"}`,
		`{"Action":"pass","Package":"p","Test":"TestQueued/a","Elapsed":120}`,
		`{"Action":"pass","Package":"p","Test":"TestQueued/b","Elapsed":60}`,
		`{"Action":"pass","Package":"p","Test":"TestQueued","Elapsed":120.5}`,
		`{"Action":"pass","Package":"p","Test":"TestAlone","Elapsed":50}`)
	want := "slowest tests:\n    80.5s p TestQueued\n    50.0s p TestAlone\n4 passed, 0 failed, 0 skipped\n"
	if !strings.HasSuffix(out, want) {
		t.Fatalf("output:\n%s\nwant it to end with:\n%s", out, want)
	}
}

// leftOutEvents is a test go test -short left out (testsize.SkipShort),
// a server's cleanup logging after the skip.
const leftOutEvents = `{"Action":"run","Package":"p","Test":"TestSoak"}
{"Action":"output","Package":"p","Test":"TestSoak","Output":"    soak_test.go:80: left out by -short (make test runs it): 500 terraform processes\n"}
{"Action":"output","Package":"p","Test":"TestSoak","Output":"    testpg.go:278: testpg: stopped postgres on port 23892 in 191ms\n"}
{"Action":"output","Package":"p","Test":"TestSoak","Output":"--- SKIP: TestSoak (0.00s)\n"}
{"Action":"skip","Package":"p","Test":"TestSoak"}`

// accEvents is an acceptance test skipped without TF_ACC (make test-short).
const accEvents = `{"Action":"run","Package":"p","Test":"TestAcc"}
{"Action":"output","Package":"p","Test":"TestAcc","Output":"    testing_new.go:29: Acceptance tests skipped unless env 'TF_ACC' set\n"}
{"Action":"skip","Package":"p","Test":"TestAcc"}`

// Under -short the tests it leaves out are listed and fail nothing; any
// other skip still fails. Without -short (make test) they fail as skips.
func TestShortListsWhatItLeftOut(t *testing.T) {
	short := func(events ...string) (string, int) {
		var out strings.Builder
		s := &summary{out: &out, output: map[key]*strings.Builder{}, short: true}
		if err := s.read(strings.NewReader(strings.Join(events, "\n"))); err != nil {
			t.Fatal(err)
		}
		code := s.finish(false)
		return out.String(), code
	}
	out, code := short(passEvents, leftOutEvents, accEvents, okPackage)
	if code != 0 || !strings.Contains(out, "left out by make test-short (make test runs them): p TestAcc, p TestSoak\n") ||
		!strings.HasSuffix(out, "1 passed, 0 failed, 0 skipped, 2 left out by make test-short\n") {
		t.Fatalf("exit %d, output:\n%s", code, out)
	}
	if out, code := short(passEvents, leftOutEvents, skipEvents, okPackage); code != 1 || !strings.Contains(out, "SKIP p TestB: ") {
		t.Fatalf("another skip under -short: exit %d, output:\n%s", code, out)
	}
	if out, code := run(t, false, passEvents, leftOutEvents, okPackage); code != 1 || !strings.Contains(out, "SKIP p TestSoak: ") {
		t.Fatalf("a -short skip in make test: exit %d, output:\n%s", code, out)
	}
}
