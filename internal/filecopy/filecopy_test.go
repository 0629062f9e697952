package filecopy

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
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

// Tree keeps modes and links, leaves out what Skip names, reports each
// path it made, and refuses what it cannot copy (a named pipe).
func TestTree(t *testing.T) {
	from, to := filepath.Join(t.TempDir(), "from"), filepath.Join(t.TempDir(), "to")
	for _, d := range []string{"plugins/a", "skipped"} {
		if err := os.MkdirAll(filepath.Join(from, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(from, "plugins/a/bin"), []byte("#!"), 0o751); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("/elsewhere/provider", filepath.Join(from, "plugins/link")); err != nil {
		t.Fatal(err)
	}
	var made []string
	err := Tree(from, to, TreeOptions{Skip: map[string]bool{"skipped": true}, Copied: func(p string) error {
		rel, _ := filepath.Rel(to, p)
		made = append(made, rel)
		return nil
	}})
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{".", "plugins", "plugins/a", "plugins/a/bin", "plugins/link"}; !slices.Equal(made, want) {
		t.Errorf("made %q, want %q", made, want)
	}
	if st, err := os.Stat(filepath.Join(to, "plugins/a/bin")); err != nil || st.Mode().Perm() != 0o751 {
		t.Errorf("file: %v, %v; want mode 0751", st, err)
	}
	if link, err := os.Readlink(filepath.Join(to, "plugins/link")); err != nil || link != "/elsewhere/provider" {
		t.Errorf("link: %q, %v", link, err)
	}
	if _, err := os.Stat(filepath.Join(to, "skipped")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("skipped entry copied: %v", err)
	}

	if err := syscall.Mkfifo(filepath.Join(from, "pipe"), 0o600); err != nil {
		t.Fatal(err)
	}
	err = Tree(from, filepath.Join(t.TempDir(), "again"), TreeOptions{})
	if err == nil || !strings.Contains(err.Error(), "pipe: not a file, directory or symlink") {
		t.Fatalf("copying a pipe: %v", err)
	}
}
