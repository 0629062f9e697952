package runner_test

import (
	"errors"
	"fmt"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/example/cloud-provider-example/internal/testhttpbackend"
	"github.com/example/cloud-provider-example/internal/testkit"
	"github.com/example/cloud-provider-example/internal/testpg"
	"github.com/example/cloud-provider-example/internal/tests3"
	"github.com/example/cloud-provider-example/redact"
	"github.com/example/cloud-provider-example/runner"
	"github.com/example/cloud-provider-example/state"
)

// Hostile passwords: quotes, backslash, '%', '@', ':', '/', spaces and
// non-ASCII, each changed by some quoting or encoding.
const (
	hostilePW = `Hu"n\t3r %41@:/ ü'密`
	otherPW   = `wr"ong\pass %zz@:/ é`
)

// noForms fails if text holds any form of any of the passwords (exact,
// JSON, Go- or HCL-quoted, URL-encoded, ...).
func noForms(t *testing.T, what, text string, pws ...string) {
	t.Helper()
	if text == "" {
		t.Fatalf("%s: no error text to check", what)
	}
	for _, pw := range pws {
		for _, f := range redact.Forms(pw) {
			if strings.Contains(text, f) {
				t.Errorf("%s: error holds %q (a form of %q):\n%s", what, f, pw, text)
			}
		}
	}
}

// Terraform's diagnostics, not "exit status 1", and never a secret.
func TestErrorsCarryDiagnostics(t *testing.T) {
	e := newEnv(t, nil)
	job := e.job(t, "bad", lbModule{name: "bad", port: 70000, backend: filepath.Join(t.TempDir(), "bad.tfstate")})
	_, err := e.r.Ensure(testkit.Context(t), job, runner.EnsureOptions{})
	var re *runner.Error
	if !errors.As(err, &re) {
		t.Fatalf("want *runner.Error, got %T %v", err, err)
	}
	if re.Op != "plan" || !strings.Contains(err.Error(), "65535") || strings.Contains(err.Error(), "exit status") {
		t.Fatalf("error lacks the diagnostic: %v", err)
	}
	if strings.Contains(err.Error(), e.sim.Token) {
		t.Fatal("token in error")
	}
}

// A real PostgreSQL whose password is hostile: the happy path works, and
// no failure (wrong database, refused password, a connection string that
// does not parse, a held lock) shows any form of a password.
func TestScrubPGErrors(t *testing.T) {
	srv := testpg.Start(t, testpg.WithPassword(hostilePW))
	e := newEnv(t, nil, func(c *runner.Config) { c.LockTimeout = time.Second })
	if err := e.pgRun(t, srv.ConnStr, "good", 80); err != nil {
		t.Fatalf("the hostile password does not work: %v", err)
	}
	host := net.JoinHostPort(srv.Host, strconv.Itoa(srv.Port))
	withDB := func(pw, db string) string {
		return (&url.URL{Scheme: "postgres", User: url.UserPassword(srv.User, pw), Host: host, Path: "/" + db, RawQuery: "sslmode=disable"}).String()
	}
	libpq := strings.NewReplacer(`\`, `\\`, `'`, `\'`).Replace
	cases := []struct {
		name, conn string
	}{
		{"wrong-database", withDB(hostilePW, "no_such_db")},
		{"refused-password", withDB(otherPW, srv.Database)},
		{"unparsable-url", "postgres://ccm:" + hostilePW + "@" + host + "/postgres?sslmode=disable"},
		{"keyword-form", fmt.Sprintf("host=%s port=%d user=ccm password='%s' dbname=no_such_db sslmode=disable", srv.Host, srv.Port, libpq(hostilePW))},
		{"keyword-refused", fmt.Sprintf("host=%s port=%d user=ccm password='%s' dbname=postgres sslmode=disable", srv.Host, srv.Port, libpq(otherPW))},
	}
	for _, c := range cases {
		err := e.pgRun(t, c.conn, c.name, 80)
		if err == nil {
			t.Fatalf("%s: no error", c.name)
		}
		var re *runner.Error
		if !errors.As(err, &re) {
			t.Fatalf("%s: %T %v", c.name, err, err)
		}
		t.Logf("%s: %v", c.name, err)
		noForms(t, c.name, err.Error(), hostilePW, otherPW)
	}

	// A held lock: another session holds the advisory lock that every lock
	// of the pg backend takes too (see pgCreationLock).
	holdPGLock(t, srv.ConnStr, pgCreationLock(e.tc.Distribution, "ccm"))
	err := e.pgRun(t, srv.ConnStr, "good", 81)
	if !errors.Is(err, runner.ErrStateLocked) {
		t.Fatalf("held lock: want ErrStateLocked, got %v", err)
	}
	t.Logf("locked: %v", err)
	noForms(t, "lock", err.Error(), hostilePW)
	// The same lock held while a new object's workspace is created
	// (terraform workspace new, which says so in its own words).
	err = e.pgRun(t, srv.ConnStr, "fresh", 80)
	if !errors.Is(err, runner.ErrStateLocked) {
		t.Fatalf("held lock at workspace creation: want ErrStateLocked, got %v", err)
	}
	t.Logf("locked at creation: %v", err)
	noForms(t, "creation lock", err.Error(), hostilePW)
}

// A real http backend with basic auth and a hostile password: refused
// credentials and a held lock show no form of either password.
func TestScrubHTTPErrors(t *testing.T) {
	srv := testhttpbackend.Start(t, testhttpbackend.WithBasicAuth("ccm", hostilePW))
	e := newEnv(t, nil, func(c *runner.Config) { c.LockTimeout = time.Second })
	dir := t.TempDir()
	user, pass := filepath.Join(dir, "user"), filepath.Join(dir, "pass")
	testkit.Must(t, os.WriteFile(user, []byte("ccm"), 0o600))
	run := func(pw, name string, port int64) (*state.Location, error) {
		testkit.Must(t, os.WriteFile(pass, []byte(pw), 0o600))
		tg := serviceLocation(t, state.Config{Type: state.TypeHTTP, HTTP: &state.HTTPConfig{Address: srv.URL + "/states", UsernameFile: user, PasswordFile: pass}}, name)
		j := e.job(t, tg.Key, lbModule{name: name, port: port, block: toBlock(tg.Block)})
		j.Env = tg.Env
		_, err := e.r.Ensure(testkit.Context(t), j, runner.EnsureOptions{})
		return tg, err
	}
	tg, err := run(hostilePW, "good", 80)
	if err != nil {
		t.Fatalf("the hostile password does not work: %v", err)
	}
	if _, err := run(otherPW, "refused", 80); err == nil {
		t.Fatal("a wrong password was accepted")
	} else {
		t.Logf("refused: %v", err)
		noForms(t, "refused", err.Error(), hostilePW, otherPW)
	}
	srv.InjectLock("states/"+tg.Key, testhttpbackend.LockInfo{ID: "held", Operation: "OperationTypeApply", Who: "other@host", Info: "holder of " + hostilePW, Created: time.Now()})
	_, err = run(hostilePW, "good", 81)
	if !errors.Is(err, runner.ErrStateLocked) {
		t.Fatalf("held lock: want ErrStateLocked, got %v", err)
	}
	t.Logf("locked: %v", err)
	noForms(t, "lock", err.Error(), hostilePW)
}

// A hostile secret key: the happy path works, and neither refused keys
// nor a held lock whose info quotes the secret show any form of it.
func TestScrubS3Errors(t *testing.T) {
	srv := s3Server(t, tests3.WithCredentials("ccm-scrub", hostilePW))
	e := newEnv(t, nil, func(c *runner.Config) { c.LockTimeout = time.Second })
	run := func(name string, port int64) (*state.Location, error) {
		tg := s3Target(t, srv, name)
		j := e.job(t, tg.Key, lbModule{name: name, port: port, block: toBlock(tg.Block)})
		j.Env = tg.Env
		_, err := e.r.Ensure(testkit.Context(t), j, runner.EnsureOptions{})
		return tg, err
	}
	tg, err := run("good", 80)
	if err != nil {
		t.Fatalf("the hostile secret does not work: %v", err)
	}
	t.Setenv("AWS_SECRET_ACCESS_KEY", otherPW)
	if _, err := run("refused", 80); err == nil {
		t.Fatal("a wrong secret was accepted")
	} else {
		t.Logf("refused: %v", err)
		noForms(t, "refused", err.Error(), hostilePW, otherPW)
	}
	t.Setenv("AWS_SECRET_ACCESS_KEY", hostilePW)
	s3Lock(t, srv, tg, "held", "other@host", "holder of "+hostilePW, time.Now())
	_, err = run("good", 81)
	if !errors.Is(err, runner.ErrStateLocked) {
		t.Fatalf("held lock: want ErrStateLocked, got %v", err)
	}
	t.Logf("locked: %v", err)
	noForms(t, "lock", err.Error(), hostilePW)
}

// An Error built without diagnostics (terraform-exec's error text holds
// terraform's stderr) is scrubbed too, with every secret a runner saw.
func TestErrorWithoutDiagnosticsIsScrubbed(t *testing.T) {
	e := newEnv(t, nil, func(c *runner.Config) { c.Env["CCM_SCRUB_SECRET"] = hostilePW })
	// A run registers the runner's secrets; its failure does not matter.
	_, _ = e.r.Ensure(testkit.Context(t), runner.Job{Key: "scrub", Files: map[string][]byte{"main.tf": []byte("terraform {}\n")}}, runner.EnsureOptions{})
	err := &runner.Error{Op: "workspace list", Workspace: "w", Err: fmt.Errorf("exit status 1\n\nError: parse %q: invalid", "postgres://ccm:"+hostilePW+"@h/db")}
	noForms(t, "bare error", err.Error(), hostilePW)
}
