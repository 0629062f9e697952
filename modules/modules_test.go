package modules_test

import (
	"context"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/terraform-exec/tfexec"

	"github.com/example/cloud-provider-example/internal/tftest"
	"github.com/example/cloud-provider-example/modules"
)

func TestFormatted(t *testing.T) {
	dir, err := filepath.Abs(".")
	if err != nil {
		t.Fatal(err)
	}
	tf := tftest.Get(t).Exec(t, dir)
	ok, files, err := tf.FormatCheck(context.Background(), tfexec.Recursive(true))
	if err != nil {
		t.Fatalf("terraform fmt -check: %v", err)
	}
	if !ok {
		t.Errorf("not formatted (run `terraform fmt -recursive modules`): %v", files)
	}
}

func TestValidate(t *testing.T) {
	m := tftest.Get(t)
	for _, dir := range writeModules(t).All() {
		t.Run(filepath.Base(dir), func(t *testing.T) { m.Validate(t, dir) })
	}
}

// writeModules writes the shipped modules to a temporary directory.
func writeModules(t *testing.T) modules.Paths {
	t.Helper()
	paths, err := modules.WriteTo(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	return paths
}

func TestWriteToIsIdempotent(t *testing.T) {
	dir := t.TempDir()
	paths, err := modules.WriteTo(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range paths.All() {
		for _, f := range []string{"versions.tf", "variables.tf", "main.tf", "outputs.tf", "README.md"} {
			if _, err := os.Stat(filepath.Join(p, f)); err != nil {
				t.Errorf("missing %s", err)
			}
		}
	}

	main := filepath.Join(paths.LoadBalancer, "main.tf")
	old := time.Now().Add(-time.Hour)
	if err := os.Chtimes(main, old, old); err != nil {
		t.Fatal(err)
	}
	stale := filepath.Join(paths.Routes, "removed.tf")
	if err := os.WriteFile(stale, []byte("# from an older binary\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	keep := filepath.Join(paths.Routes, ".terraform", "x")
	if err := os.MkdirAll(filepath.Dir(keep), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(keep, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	edited := filepath.Join(paths.Routes, "main.tf")
	if err := os.WriteFile(edited, []byte("# edited by hand\n"), 0o644); err != nil {
		t.Fatal(err)
	}

	again, err := modules.WriteTo(dir)
	if err != nil {
		t.Fatal(err)
	}
	if again != paths {
		t.Errorf("paths changed: %+v -> %+v", paths, again)
	}
	if st, err := os.Stat(main); err != nil || !st.ModTime().Equal(old) {
		t.Errorf("unchanged file was rewritten: %v %v", st.ModTime(), err)
	}
	if _, err := os.Stat(stale); !os.IsNotExist(err) {
		t.Errorf("stale file kept: %v", err)
	}
	if _, err := os.Stat(keep); err != nil {
		t.Errorf("dot-directory touched: %v", err)
	}
	want, _ := fs.ReadFile(modules.FS(), "routes/main.tf")
	if got, _ := os.ReadFile(edited); string(got) != string(want) {
		t.Errorf("edited file not restored")
	}
}

func TestDigestStable(t *testing.T) {
	d := modules.Digest()
	if len(d) != 64 || strings.Trim(d, "0123456789abcdef") != "" || d != modules.Digest() {
		t.Errorf("Digest() = %q", d)
	}
}
