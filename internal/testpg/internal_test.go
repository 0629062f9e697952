package testpg

import (
	"os"
	"path/filepath"
	"testing"
)

func TestWorldTraversable(t *testing.T) {
	sub := filepath.Join(t.TempDir(), "sub") // below a 0700 directory
	if err := os.Mkdir(sub, 0o755); err != nil {
		t.Fatal(err)
	}
	if worldTraversable(sub) {
		t.Errorf("%s: want false", sub)
	}
	if !worldTraversable("/") {
		t.Error("/: want true")
	}
}

func TestMajorOf(t *testing.T) {
	for in, want := range map[string]int{
		"/usr/lib/postgresql/15/bin/initdb":  15,
		"/usr/lib/postgresql/9.6/bin/initdb": 9,
		"/usr/pgsql-16/bin/initdb":           16,
	} {
		if got := majorOf(in); got != want {
			t.Errorf("majorOf(%s) = %d, want %d", in, got, want)
		}
	}
}
