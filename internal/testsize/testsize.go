// Package testsize is the size a test runs at. make test runs every test,
// each at the smallest size that proves its behaviour; make bench, make
// soak and make chaos run the scale tests at full size ($EXAMPLE_SCALE=full;
// make soak-long: long); make test-short (go test -short) leaves out the
// tests marked Long, and hack/testsummary lists them.
package testsize

import (
	"os"
	"testing"
)

// Env is the variable the Makefile's full-size targets set.
const Env = "EXAMPLE_SCALE"

// The values of Env.
const (
	// Full is make bench's, make soak's and make chaos's size.
	Full = "full"
	// Long is make soak-long's: longer than full.
	Long = "long"
)

// Scale is $EXAMPLE_SCALE: "" for make test's size, Full or Long.
func Scale() string { return os.Getenv(Env) }

// AtFull tells whether the scale tests run at full size (or longer).
func AtFull() bool { s := Scale(); return s == Full || s == Long }

// LeftOut starts the skip message of a test go test -short leaves out:
// hack/testsummary -short lists those skips and fails on any other.
const LeftOut = "left out by -short (make test runs it):"

// Acceptance is named by the skip of an acceptance test (terraform
// against the simulator, terraform-plugin-testing's convention): make
// test-short leaves TF_ACC unset, so hack/testsummary -short lists
// those skips as left out too; make test sets it.
const Acceptance = "TF_ACC"

// SkipShort leaves t out under go test -short (make test-short), saying
// why (what makes it long). make test never passes -short: every test
// marked so runs there.
func SkipShort(t testing.TB, why string) {
	t.Helper()
	if testing.Short() {
		t.Skip(LeftOut + " " + why)
	}
}
