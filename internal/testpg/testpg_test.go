package testpg_test

import (
	"database/sql"
	"net"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/example/cloud-provider-example/internal/need"
	"github.com/example/cloud-provider-example/internal/testpg"
	_ "github.com/lib/pq"
)

// TestTwoServers runs two servers side by side (and in parallel with the
// other test): distinct ports and data directories, both accepting TCP,
// both gone after Stop.
func TestTwoServers(t *testing.T) {
	t.Parallel()
	a, b := testpg.Start(t), testpg.Start(t)
	srvs := []*testpg.Server{a, b}
	if a.Port == b.Port || a.DataDir == b.DataDir {
		t.Fatalf("servers share port or data dir: %d %s / %d %s", a.Port, a.DataDir, b.Port, b.DataDir)
	}
	for _, s := range srvs {
		if !strings.Contains(s.ConnStr, ":"+s.Password+"@127.0.0.1:"+strconv.Itoa(s.Port)+"/") || s.Password == "" {
			t.Errorf("ConnStr %q lacks password/port", s.ConnStr)
		}
		addr := net.JoinHostPort(s.Host, strconv.Itoa(s.Port))
		c, err := net.DialTimeout("tcp", addr, 5*time.Second)
		if err != nil {
			t.Fatalf("dial %s: %v", addr, err)
		}
		c.Close()
		s.Stop()
		s.Stop() // idempotent
		if _, err := os.Stat(s.DataDir); !os.IsNotExist(err) {
			t.Errorf("data dir %s still there after Stop: %v", s.DataDir, err)
		}
		if c, err := net.DialTimeout("tcp", addr, time.Second); err == nil {
			c.Close()
			t.Errorf("%s still accepts connections after Stop", addr)
		}
	}
}

const config = `
terraform {
  backend "pg" {}
}

resource "terraform_data" "ws" {
  input = terraform.workspace
}

output "ws" {
  value = terraform_data.ws.output
}
`

// TestTerraformPGBackend drives the real terraform CLI against the server:
// state and workspaces live in PostgreSQL, the password stays out of
// terraform's files and output.
func TestTerraformPGBackend(t *testing.T) {
	t.Parallel()
	bin, err := exec.LookPath("terraform")
	if err != nil {
		need.Missing(t, "terraform is not on PATH: "+err.Error())
	}
	srv := testpg.Start(t)

	tmp := t.TempDir()
	cliConfig := filepath.Join(tmp, "empty.tfrc") // $TF_CLI_CONFIG_FILE may point at a missing file
	if err := os.WriteFile(cliConfig, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	env := []string{
		"PATH=" + os.Getenv("PATH"),
		"HOME=" + os.Getenv("HOME"),
		"TF_CLI_CONFIG_FILE=" + cliConfig,
		"CHECKPOINT_DISABLE=1",
		"TF_IN_AUTOMATION=1",
		"PG_CONN_STR=" + srv.ConnStr, // not -backend-config: that is saved in .terraform
	}
	var outputs strings.Builder
	tf := func(dir string, args ...string) string {
		t.Helper()
		began := time.Now()
		cmd := exec.Command(bin, args...)
		cmd.Dir, cmd.Env = dir, env
		out, err := cmd.CombinedOutput()
		outputs.Write(out)
		t.Logf("terraform %s: %s", strings.Join(args, " "), time.Since(began).Round(time.Millisecond))
		if err != nil {
			t.Fatalf("terraform %s: %v\n%s", strings.Join(args, " "), err, out)
		}
		return string(out)
	}
	mkdir := func(name string) string {
		dir := filepath.Join(tmp, name)
		if err := os.Mkdir(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, "main.tf"), []byte(config), 0o644); err != nil {
			t.Fatal(err)
		}
		return dir
	}

	dir := mkdir("a")
	tf(dir, "init", "-input=false", "-no-color")
	tf(dir, "apply", "-auto-approve", "-input=false", "-no-color", "-lock-timeout=30s")
	tf(dir, "workspace", "new", "-no-color", "-lock-timeout=30s", "w1")
	tf(dir, "apply", "-auto-approve", "-input=false", "-no-color", "-lock-timeout=30s")
	if out := tf(dir, "workspace", "list", "-no-color"); !strings.Contains(out, "  default") || !strings.Contains(out, "* w1") {
		t.Fatalf("workspace list: want default and current w1:\n%s", out)
	}
	if _, err := os.Stat(filepath.Join(dir, "terraform.tfstate")); err == nil {
		t.Error("state written locally: terraform.tfstate exists")
	}

	// A fresh working directory sees both workspaces' state: it lives in
	// PostgreSQL.
	dir2 := mkdir("b")
	tf(dir2, "init", "-input=false", "-no-color")
	if out := tf(dir2, "workspace", "list", "-no-color"); !strings.Contains(out, "w1") {
		t.Fatalf("fresh dir: workspace w1 missing:\n%s", out)
	}
	if out := tf(dir2, "output", "-raw", "ws"); out != "default" {
		t.Errorf("default workspace output ws = %q", out)
	}
	tf(dir2, "workspace", "select", "-no-color", "w1")
	if out := tf(dir2, "output", "-raw", "ws"); out != "w1" {
		t.Errorf("w1 workspace output ws = %q", out)
	}

	// The password must not end up in terraform's files or output.
	if strings.Contains(outputs.String(), srv.Password) {
		t.Error("terraform output contains the database password")
	}
	for _, d := range []string{dir, dir2} {
		_ = filepath.WalkDir(d, func(path string, e os.DirEntry, err error) error {
			if err != nil || e.IsDir() || e.Type()&os.ModeSymlink != 0 {
				return err
			}
			if b, _ := os.ReadFile(path); strings.Contains(string(b), srv.Password) {
				t.Errorf("%s contains the database password", path)
			}
			return nil
		})
	}
}

// WithPassword: a hostile password (quotes, backslash, URL syntax, spaces,
// non-ASCII) logs in through ConnStr; a wrong one does not.
func TestWithPassword(t *testing.T) {
	t.Parallel()
	pw := `p"a\s's@:/%20 ü?#&=密`
	srv := testpg.Start(t, testpg.WithPassword(pw))
	if srv.Password != pw {
		t.Fatalf("Password = %q", srv.Password)
	}
	ping := func(conn string) error {
		db, err := sql.Open("postgres", conn)
		if err != nil {
			return err
		}
		defer db.Close()
		return db.Ping()
	}
	if err := ping(srv.ConnStr); err != nil {
		t.Fatalf("login with the chosen password: %v", err)
	}
	wrong := strings.Replace(srv.ConnStr, url.UserPassword(srv.User, pw).String(), url.UserPassword(srv.User, "wrong").String(), 1)
	if wrong == srv.ConnStr {
		t.Fatal("test bug: password not found in ConnStr")
	}
	if err := ping(wrong); err == nil {
		t.Fatal("a wrong password logged in")
	}
}
