package runner_test

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"hash/fnv"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	_ "github.com/lib/pq"

	"github.com/example/cloud-provider-example/internal/testhttpbackend"
	"github.com/example/cloud-provider-example/internal/testpg"
	"github.com/example/cloud-provider-example/internal/tftest"
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

// pgCase runs one job against a pg backend reached with conn and returns
// its error.
func (e *env) pgRun(t *testing.T, conn, name string, port int64) error {
	t.Helper()
	t.Setenv("CCM_SCRUB_PG", conn)
	tg := serviceLocation(t, state.Config{Type: state.TypePG, PG: &state.PGConfig{ConnStrEnv: "CCM_SCRUB_PG", SchemaName: "ccm"}}, name)
	j := e.job(t, tg.Key, lbModule{name: name, port: port, block: toBlock(tg.Block)})
	j.Env, j.CLIWorkspace = tg.Env, tg.CLIWorkspace
	_, err := e.r.Ensure(ctxT(t), j, runner.EnsureOptions{})
	return err
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
	must(t, os.WriteFile(user, []byte("ccm"), 0o600))
	run := func(pw, name string, port int64) (*state.Location, error) {
		must(t, os.WriteFile(pass, []byte(pw), 0o600))
		tg := serviceLocation(t, state.Config{Type: state.TypeHTTP, HTTP: &state.HTTPConfig{Address: srv.URL + "/states", UsernameFile: user, PasswordFile: pass}}, name)
		j := e.job(t, tg.Key, lbModule{name: name, port: port, block: toBlock(tg.Block)})
		j.Env = tg.Env
		_, err := e.r.Ensure(ctxT(t), j, runner.EnsureOptions{})
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

// An Error built without diagnostics (terraform-exec's error text holds
// terraform's stderr) is scrubbed too, with every secret a runner saw.
func TestErrorWithoutDiagnosticsIsScrubbed(t *testing.T) {
	e := newEnv(t, nil, func(c *runner.Config) { c.Env["CCM_SCRUB_SECRET"] = hostilePW })
	// A run registers the runner's secrets; its failure does not matter.
	_, _ = e.r.Ensure(ctxT(t), runner.Job{Key: "scrub", Files: map[string][]byte{"main.tf": []byte("terraform {}\n")}}, runner.EnsureOptions{})
	err := &runner.Error{Op: "workspace list", Workspace: "w", Err: fmt.Errorf("exit status 1\n\nError: parse %q: invalid", "postgres://ccm:"+hostilePW+"@h/db")}
	noForms(t, "bare error", err.Error(), hostilePW)
}

// holdPGLock takes the advisory lock in a session of its own, as another
// holder would; the session ends with the test, or the caller unlocks on
// the connection returned.
func holdPGLock(t *testing.T, connStr string, lock int64) *sql.Conn {
	t.Helper()
	db, err := sql.Open("postgres", connStr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = db.Close() })
	conn, err := db.Conn(ctxT(t))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = conn.Close() })
	if _, err := conn.ExecContext(ctxT(t), "SELECT pg_advisory_lock($1)", lock); err != nil {
		t.Fatal(err)
	}
	return conn
}

// pgCreationLock is the advisory lock the pg backend takes for workspace
// creation, and with every state lock: terraform's is -1, one for the
// whole database; OpenTofu's is per schema (and table), minus the FNV-32
// hash of "<schema>\x00states".
func pgCreationLock(dist, schema string) int64 {
	if dist != tftest.Tofu {
		return -1
	}
	h := fnv.New32()
	h.Write([]byte(schema + "\x00states"))
	return -int64(h.Sum32())
}

// While another process holds the pg backend's workspace-creation lock
// for a moment, a new object's workspace waits for it and is created.
func TestPGWorkspaceCreationWaitsForTheLock(t *testing.T) {
	srv := testpg.Start(t)
	lockedOut := make(chan struct{}, 1) // a workspace command failed
	e := newEnv(t, nil, func(c *runner.Config) {
		c.LockTimeout = 20 * time.Second
		c.Observe = func(op string, err error, _ time.Duration) {
			if op == "workspace" && err != nil {
				select {
				case lockedOut <- struct{}{}:
				default:
				}
			}
		}
	})
	if err := e.pgRun(t, srv.ConnStr, "first", 80); err != nil { // creates the schema
		t.Fatal(err)
	}
	select {
	case <-lockedOut:
		t.Fatal("a workspace command failed with nobody holding the lock")
	default:
	}
	before := e.r.Processes()["workspace"]
	lock := pgCreationLock(e.tc.Distribution, "ccm")
	conn := holdPGLock(t, srv.ConnStr, lock)
	released := make(chan bool, 1) // whether a command had found the lock taken
	go func() {
		// Release the lock once `workspace new` has found it taken (or
		// after the lock timeout, so that the run ends).
		var found bool
		select {
		case <-lockedOut:
			found = true
		case <-time.After(30 * time.Second):
		}
		_, _ = conn.ExecContext(context.Background(), "SELECT pg_advisory_unlock($1)", lock)
		released <- found
	}()
	if err := e.pgRun(t, srv.ConnStr, "second", 80); err != nil {
		t.Fatalf("the workspace was not created once the lock was released: %v", err)
	}
	if !<-released {
		t.Error("no workspace command found the lock taken")
	}
	// workspace list, at least one refused workspace new, then the one
	// that succeeds.
	if n := e.r.Processes()["workspace"] - before; n < 3 {
		t.Errorf("%d workspace commands: the creation did not wait for the lock", n)
	}
}
