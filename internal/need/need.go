// Package need is what a test does when a tool it runs is missing: it
// fails, naming the tool and where it comes from, so that a test never
// passes by not running. Only with EXAMPLE_ALLOW_SKIPS set (the one
// documented opt-out, for a machine that lacks a tool on purpose) does it
// skip, and make test's summary then lists it.
package need

import (
	"os"
	"testing"
)

// AllowSkips is the opt-out variable.
const AllowSkips = "EXAMPLE_ALLOW_SKIPS"

// Missing fails t (or skips it under AllowSkips) with what is missing
// and how to get it.
func Missing(t testing.TB, what string) {
	t.Helper()
	if os.Getenv(AllowSkips) != "" {
		t.Skip(what)
	}
	t.Fatal(what + " (make test builds or installs what it can and names what it cannot: make prerequisites; " + AllowSkips + "=1 skips such tests instead)")
}
