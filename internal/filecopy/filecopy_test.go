package filecopy

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"testing"
)

func TestFile(t *testing.T) {
	dir := t.TempDir()
	from, to := filepath.Join(dir, "a"), filepath.Join(dir, "b")
	if err := os.WriteFile(from, []byte("content"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := File(from, to, 0o640); err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(to)
	st, _ := os.Stat(to)
	if err != nil || string(got) != "content" || st.Mode().Perm() != 0o640 {
		t.Fatalf("copy: %q, mode %v, %v", got, st.Mode().Perm(), err)
	}
	if err := File(from, to, 0o640); !errors.Is(err, fs.ErrExist) {
		t.Fatalf("copy over an existing file: %v, want fs.ErrExist", err)
	}
}
