// Package testpg starts throw-away PostgreSQL servers for tests (e.g. for
// Terraform's "pg" state backend).
//
// Each Server runs its own postmaster on a random loopback TCP port with a
// private data directory, SCRAM password auth for user "ccm" and no Unix
// socket, and is stopped and deleted in t.Cleanup. The first Start in a test
// process runs initdb once into a template cluster; every Server then gets a
// copy of it (~0.1 s on tmpfs, against ~1-2 s for initdb). Durability is switched off
// (fsync, synchronous_commit, full_page_writes): the data is disposable.
//
// PostgreSQL refuses to run as root. When the test runs as root, initdb and
// postgres are started with the credentials of the "postgres" OS user if it
// exists, else "nobody" (set via syscall.Credential, no su/sudo needed), in
// directories that user owns below a temp directory it can traverse.
//
// The binaries are looked up as initdb on PATH (symlinks resolved), then in
// /usr/lib/postgresql/<newest>/bin (Debian/Ubuntu), /usr/pgsql-*/bin and
// /usr/local/pgsql/bin; $TESTPG_BINDIR overrides. Without any, a test fails
// naming it (make test installs PostgreSQL first: hack/prerequisites.sh).
//
// Each test process uses one directory testpg-<pid>-* in /dev/shm (when it
// has 1 GiB free), else in $TMPDIR; $TESTPG_TMPDIR overrides. A helper
// process deletes it when the test process exits; any left behind (helper
// killed too) are removed by the next process that starts a server. The
// postmaster gets SIGQUIT (Pdeathsig) if the test process dies without
// cleaning up, e.g. on a go test -timeout panic.
package testpg

import (
	"bytes"
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"net/url"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/lib/pq"

	"github.com/example/cloud-provider-example/internal/filecopy"
	"github.com/example/cloud-provider-example/internal/freeport"
	"github.com/example/cloud-provider-example/internal/need"
	"github.com/example/cloud-provider-example/internal/procdir"
	"github.com/example/cloud-provider-example/internal/serverproc"
)

const (
	// User is the database superuser of every Server.
	User = "ccm"
	// Database is the database named in ConnStr.
	Database = "postgres"
	// Host is the only address the servers listen on.
	Host = "127.0.0.1"
)

// Server is a running PostgreSQL server owned by one test.
type Server struct {
	// ConnStr is postgres://ccm:<password>@127.0.0.1:<port>/postgres?sslmode=disable.
	// It holds the password: don't log it.
	ConnStr  string
	Host     string
	Port     int
	User     string
	Password string // random per test process, or WithPassword's
	Database string
	DataDir  string

	t    testing.TB
	dir  string // DataDir's parent: also holds postgres.log
	proc *serverproc.Process
	once sync.Once
}

// env is what initdb and postgres run with: the test's PG* variables
// (PGDATA, PGPORT, ...) must not leak in.
var env = []string{"PATH=" + os.Getenv("PATH"), "LC_ALL=C", "TZ=UTC"}

// setup is the per-process state created by the first Start.
type setup struct {
	bin      string // directory holding initdb and postgres
	version  string // "postgres (PostgreSQL) 15.18 ..."
	base     string // <tempRoot>/testpg-<pid>-*
	template string // initdb'd data directory
	password string
	osUser   string
	cred     *syscall.Credential // nil unless running as root
	took     time.Duration
	err      error
	skip     string
}

var (
	once     sync.Once
	reported sync.Once // the first Start logs the template setup
	shared   setup
)

// Option configures a Server.
type Option func(*options)

type options struct{ password string }

// WithPassword makes the server's user "ccm" log in with password instead
// of the random one: any text, quotes, backslashes, '@', '%', spaces and
// non-ASCII included (ConnStr escapes it). It is set with ALTER ROLE once
// the server is up.
func WithPassword(password string) Option {
	return func(o *options) { o.password = password }
}

// Start starts a PostgreSQL server and registers its Stop with t.Cleanup.
// Without initdb it fails t naming it (need.Missing), as on any other error.
func Start(t testing.TB, opts ...Option) *Server {
	t.Helper()
	once.Do(func() { shared.init() })
	if shared.skip != "" {
		need.Missing(t, shared.skip)
	}
	if shared.err != nil {
		t.Fatalf("testpg: %v", shared.err)
	}
	reported.Do(func() {
		t.Logf("testpg: %s; template cluster (initdb as OS user %s) in %s", shared.version, shared.osUser, shared.took.Round(time.Millisecond))
	})
	var o options
	for _, opt := range opts {
		opt(&o)
	}
	s, err := start(t)
	if err != nil {
		t.Fatalf("testpg: %v", err)
	}
	t.Cleanup(s.Stop)
	if o.password != "" {
		if err := s.setPassword(o.password); err != nil {
			t.Fatalf("testpg: %v", err)
		}
	}
	return s
}

// setPassword changes the user's password and ConnStr.
func (s *Server) setPassword(pw string) error {
	db, err := sql.Open("postgres", s.ConnStr)
	if err != nil {
		return err
	}
	defer db.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	// ALTER ROLE takes no bind parameters: the password goes in as a
	// quoted literal (never logged: log_statement is off).
	if _, err := db.ExecContext(ctx, "ALTER ROLE "+pq.QuoteIdentifier(s.User)+" PASSWORD "+pq.QuoteLiteral(pw)); err != nil {
		return fmt.Errorf("setting the password of %s: %w", s.User, err)
	}
	s.Password = pw
	s.ConnStr = s.connStr()
	return nil
}

func (s *Server) connStr() string {
	return (&url.URL{
		Scheme:   "postgres",
		User:     url.UserPassword(s.User, s.Password),
		Host:     net.JoinHostPort(s.Host, strconv.Itoa(s.Port)),
		Path:     "/" + s.Database,
		RawQuery: "sslmode=disable",
	}).String()
}

func start(t testing.TB) (*Server, error) {
	began := time.Now()
	dir, err := os.MkdirTemp(shared.base, "srv-*")
	if err != nil {
		return nil, err
	}
	if err := os.Chmod(dir, 0o755); err != nil {
		return nil, err
	}
	s := &Server{
		Host: Host, User: User, Password: shared.password, Database: Database,
		DataDir: filepath.Join(dir, "data"), t: t, dir: dir,
	}
	if err := filecopy.Tree(shared.template, s.DataDir, filecopy.TreeOptions{Copied: func(p string) error { return chown(p, shared.cred) }}); err != nil {
		os.RemoveAll(dir)
		return nil, fmt.Errorf("copying template cluster: %w", err)
	}
	copied := time.Since(began)
	// A port picked here may be taken before postgres binds it (other
	// packages' tests run in parallel): retry with another one.
	for attempt := 1; ; attempt++ {
		err = s.run()
		if err == nil {
			break
		}
		if attempt == 5 || !strings.Contains(s.log(), "could not bind") {
			os.RemoveAll(dir)
			return nil, err
		}
		t.Logf("testpg: port %d was taken, retrying", s.Port)
	}
	s.ConnStr = s.connStr()
	t.Logf("testpg: postgres ready on %s:%d (db %s, user %s, data %s) in %s (copy %s)",
		s.Host, s.Port, s.Database, s.User, s.DataDir,
		time.Since(began).Round(time.Millisecond), copied.Round(time.Millisecond))
	return s, nil
}

// run starts the postmaster on a free port and waits until it accepts
// connections.
func (s *Server) run() error {
	port, err := freeport.One()
	if err != nil {
		return err
	}
	return s.runOn(port)
}

// runOn starts the postmaster on port and waits until it accepts
// connections.
func (s *Server) runOn(port int) error {
	s.Port = port
	logf, err := os.Create(filepath.Join(s.dir, "postgres.log"))
	if err != nil {
		return err
	}
	defer logf.Close() // the child has its own descriptor
	cmd := exec.Command(filepath.Join(shared.bin, "postgres"),
		"-D", s.DataDir,
		"-p", strconv.Itoa(port),
		"-c", "listen_addresses="+Host,
		"-c", "unix_socket_directories=",
		"-c", "fsync=off",
		"-c", "synchronous_commit=off",
		"-c", "full_page_writes=off",
		"-c", "autovacuum=off",
		"-c", "shared_buffers=16MB",
		"-c", "max_connections=50",
	)
	cmd.Dir, cmd.Env, cmd.Stdout, cmd.Stderr = s.dir, env, logf, logf
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: shared.cred, Pdeathsig: syscall.SIGQUIT}
	if s.proc, err = serverproc.Start(cmd); err != nil {
		return fmt.Errorf("starting postgres: %w", err)
	}
	return s.proc.WaitReady("postgres", func() bool {
		// postgres writes "ready" as line 8 of postmaster.pid (what pg_ctl -w reads).
		b, err := os.ReadFile(filepath.Join(s.DataDir, "postmaster.pid"))
		lines := strings.Split(string(b), "\n")
		return err == nil && len(lines) > 7 && strings.TrimSpace(lines[7]) == "ready"
	}, s.kill, s.log)
}

// Stop shuts the server down (fast shutdown) and deletes its data. It is
// called by t.Cleanup; calling it earlier, or again, is fine.
func (s *Server) Stop() {
	s.once.Do(func() {
		began := time.Now()
		s.kill()
		if s.t.Failed() {
			s.t.Logf("testpg: postgres log for port %d:\n%s", s.Port, s.log())
		}
		if err := os.RemoveAll(s.dir); err != nil {
			s.t.Errorf("testpg: %v", err)
		}
		s.t.Logf("testpg: stopped postgres on port %d in %s", s.Port, time.Since(began).Round(time.Millisecond))
	})
}

// Pause stops the server as an outage would (fast shutdown: clients are
// cut off), keeping its data; Resume starts it again on the same port.
func (s *Server) Pause() { s.kill() }

// Resume starts a paused server again, on the same port and data.
func (s *Server) Resume() error { return s.runOn(s.Port) }

// kill asks the postmaster for a fast shutdown and escalates to SIGKILL.
func (s *Server) kill() { s.proc.Stop(syscall.SIGINT, 15*time.Second) }

// log returns the tail of the server log.
func (s *Server) log() string { return serverproc.LogTail(filepath.Join(s.dir, "postgres.log")) }

func (su *setup) init() {
	began := time.Now()
	su.bin = findBinDir()
	if su.bin == "" {
		su.skip = "testpg: no PostgreSQL server found (initdb not on PATH, nor in /usr/lib/postgresql/*/bin, /usr/pgsql-*/bin, /usr/local/pgsql/bin; set TESTPG_BINDIR)"
		return
	}
	su.err = su.initErr()
	su.took = time.Since(began)
}

func (su *setup) initErr() error {
	out, err := exec.Command(filepath.Join(su.bin, "postgres"), "--version").Output()
	if err != nil {
		return fmt.Errorf("%s/postgres --version: %w", su.bin, err)
	}
	su.version = strings.TrimSpace(string(out))

	su.osUser = "current"
	if u, err := user.Current(); err == nil {
		su.osUser = u.Username
	}
	if os.Geteuid() == 0 {
		if su.cred, su.osUser, err = unprivileged(); err != nil {
			return err
		}
	}
	tmp := tempRoot(su.cred != nil)
	if su.base, err = procdir.Make(tmp, "testpg"); err != nil {
		return err
	}
	if err := os.Chmod(su.base, 0o755); err != nil { // traversable by su.cred
		return err
	}

	pw := make([]byte, 12)
	if _, err := rand.Read(pw); err != nil {
		return err
	}
	su.password = hex.EncodeToString(pw)
	pwfile := filepath.Join(su.base, "pwfile")
	if err := os.WriteFile(pwfile, []byte(su.password+"\n"), 0o600); err != nil {
		return err
	}
	defer os.Remove(pwfile)
	if err := chown(pwfile, su.cred); err != nil {
		return err
	}

	su.template = filepath.Join(su.base, "template")
	if err := os.Mkdir(su.template, 0o700); err != nil {
		return err
	}
	if err := chown(su.template, su.cred); err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, filepath.Join(su.bin, "initdb"),
		"-D", su.template,
		"--username="+User,
		"--pwfile="+pwfile,
		"--auth=scram-sha-256",
		"--encoding=UTF8",
		"--no-locale",
		"--no-sync",
		"--wal-segsize=1", // 1 MiB instead of 16 MiB to copy per server
	)
	// initdb fails if it can't access its working directory.
	cmd.Dir, cmd.Env = su.base, env
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: su.cred}
	var buf bytes.Buffer
	cmd.Stdout, cmd.Stderr = &buf, &buf
	if err := cmd.Run(); err != nil {
		hint := ""
		if su.cred != nil {
			hint = fmt.Sprintf(" (as OS user %s)", su.osUser)
			if errors.Is(err, syscall.EPERM) {
				hint += ": switching users needs CAP_SETUID and CAP_SETGID"
			}
		}
		return fmt.Errorf("initdb%s: %w\n%s", hint, err, buf.String())
	}
	return nil
}

// findBinDir returns the directory holding initdb and postgres, or "".
func findBinDir() string {
	var cands []string
	if d := os.Getenv("TESTPG_BINDIR"); d != "" {
		cands = append(cands, filepath.Join(d, "initdb"))
	}
	if p, err := exec.LookPath("initdb"); err == nil {
		cands = append(cands, p)
	}
	for _, pattern := range []string{"/usr/lib/postgresql/*/bin/initdb", "/usr/pgsql-*/bin/initdb"} {
		m, _ := filepath.Glob(pattern)
		sort.Slice(m, func(i, j int) bool { return majorOf(m[i]) > majorOf(m[j]) }) // newest first
		cands = append(cands, m...)
	}
	cands = append(cands, "/usr/local/pgsql/bin/initdb")
	for _, c := range cands {
		p, err := filepath.EvalSymlinks(c)
		if err != nil {
			continue
		}
		dir := filepath.Dir(p)
		if _, err := os.Stat(filepath.Join(dir, "postgres")); err == nil {
			return dir
		}
	}
	return ""
}

// majorOf returns 15 for /usr/lib/postgresql/15/bin/initdb.
func majorOf(initdb string) int {
	v := filepath.Base(filepath.Dir(filepath.Dir(initdb)))
	v = strings.TrimPrefix(v, "pgsql-")
	n, _ := strconv.Atoi(strings.SplitN(v, ".", 2)[0])
	return n
}

// unprivileged returns the credentials of the "postgres" or "nobody" user.
func unprivileged() (*syscall.Credential, string, error) {
	var errs []error
	for _, name := range []string{"postgres", "nobody"} {
		u, err := user.Lookup(name)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		uid, err1 := strconv.ParseUint(u.Uid, 10, 32)
		gid, err2 := strconv.ParseUint(u.Gid, 10, 32)
		if err1 != nil || err2 != nil || uid == 0 {
			continue
		}
		// Groups: an empty list drops root's supplementary groups.
		return &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid), Groups: []uint32{}}, name, nil
	}
	return nil, "", fmt.Errorf("running as root and no unprivileged OS user for postgres: %v", errors.Join(errs...))
}

// tempRoot returns where the servers' directories go: $TESTPG_TMPDIR if
// set, else /dev/shm when it has 1 GiB free (copying the template to tmpfs
// stays fast on a busy disk), else os.TempDir(). When postgres runs as
// another user, a root it cannot traverse (e.g. TMPDIR under /root) is
// passed over for /tmp or /var/tmp.
func tempRoot(otherUser bool) string {
	if d := os.Getenv("TESTPG_TMPDIR"); d != "" {
		return d
	}
	var st syscall.Statfs_t
	if syscall.Statfs("/dev/shm", &st) == nil && st.Bavail*uint64(st.Bsize) >= 1<<30 &&
		syscall.Access("/dev/shm", 0o2|0o1) == nil && worldTraversable("/dev/shm") {
		return "/dev/shm"
	}
	tmp := os.TempDir()
	if !otherUser {
		return tmp
	}
	for _, d := range []string{tmp, "/tmp", "/var/tmp"} {
		if worldTraversable(d) {
			return d
		}
	}
	return tmp // initdb will report the permission problem
}

func worldTraversable(dir string) bool {
	dir, err := filepath.EvalSymlinks(dir)
	if err != nil {
		return false
	}
	for {
		fi, err := os.Stat(dir)
		if err != nil || fi.Mode().Perm()&0o001 == 0 {
			return false
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return true
		}
		dir = parent
	}
}

func chown(path string, cred *syscall.Credential) error {
	if cred == nil {
		return nil
	}
	return os.Lchown(path, int(cred.Uid), int(cred.Gid))
}
