// Package tests3 starts throw-away S3 servers for tests (e.g. for
// Terraform's "s3" state backend): versitygw, an S3 gateway, with its posix
// backend (a bucket is a directory, an object a file, metadata in extended
// attributes), built from the Go module proxy by hack/versitygw.sh.
//
// Each Server runs its own versitygw on a random loopback TCP port with a
// private directory, SigV4 authentication for one root account (random
// keys, or WithCredentials'), and is stopped and deleted in t.Cleanup.
// versitygw evaluates conditional writes (If-None-Match: *) under a lock
// per object, which terraform's S3-native lock files need.
//
// The binary is $EXAMPLE_VERSITYGW (make test sets it; make versitygw
// builds it); tests are skipped when it is unset. Each test process uses
// one directory tests3-<pid>-* in $TMPDIR, deleted by a helper process when
// the test process exits; any left behind (helper killed too) are removed
// by the next process that starts a server. versitygw gets SIGKILL
// (Pdeathsig) if the test process dies without cleaning up. Where the
// file system has no user extended attributes, metadata goes to a sidecar
// directory (versitygw's --sidecar).
package tests3

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/example/cloud-provider-example/internal/freeport"
	"github.com/example/cloud-provider-example/internal/need"
	"github.com/example/cloud-provider-example/internal/procdir"
	"github.com/example/cloud-provider-example/internal/serverproc"
)

const (
	// Host is the only address the servers listen on.
	Host = "127.0.0.1"
	// Region is the region the servers sign and answer for.
	Region = "us-east-1"
	// EnvBinary names the variable holding the versitygw binary's path.
	EnvBinary = "EXAMPLE_VERSITYGW"
	// healthPath answers GET without authentication once the server is up.
	healthPath = "/tests3-health"
)

// Server is a running S3 server owned by one test.
type Server struct {
	// Endpoint is http://127.0.0.1:<port>; buckets are addressed by path.
	Endpoint  string
	Region    string
	AccessKey string
	SecretKey string // don't log it
	// Root holds a directory per bucket and a file per object.
	Root string

	t    testing.TB
	dir  string // Root's parent: also holds versitygw.log
	proc *serverproc.Process
	once sync.Once
}

// Option configures a Server.
type Option func(*options)

type options struct{ access, secret string }

// WithCredentials makes access/secret the root account's keys instead of
// random ones: any text, quotes, '%', '/', '+' and spaces included.
func WithCredentials(access, secret string) Option {
	return func(o *options) { o.access, o.secret = access, secret }
}

var (
	baseOnce sync.Once
	base     string
	baseErr  error
)

// Start starts a server and registers its Stop with t.Cleanup. It skips t
// when $EXAMPLE_VERSITYGW is unset and fails t on any other error.
func Start(t testing.TB, opts ...Option) *Server {
	t.Helper()
	bin := os.Getenv(EnvBinary)
	if bin == "" {
		need.Missing(t, "tests3: $"+EnvBinary+" is not set: run `make versitygw` and set it to the printed path")
	}
	o := options{access: "ccm-" + randomHex(8), secret: randomHex(20)}
	for _, opt := range opts {
		opt(&o)
	}
	baseOnce.Do(func() { base, baseErr = procdir.Make("", "tests3") })
	if baseErr != nil {
		t.Fatalf("tests3: %v", baseErr)
	}
	s, err := start(t, bin, o)
	if err != nil {
		t.Fatalf("tests3: %v", err)
	}
	t.Cleanup(s.Stop)
	return s
}

func start(t testing.TB, bin string, o options) (*Server, error) {
	began := time.Now()
	dir, err := os.MkdirTemp(base, "srv-*")
	if err != nil {
		return nil, err
	}
	s := &Server{Region: Region, AccessKey: o.access, SecretKey: o.secret, Root: filepath.Join(dir, "root"), t: t, dir: dir}
	if err := os.Mkdir(s.Root, 0o700); err != nil {
		return nil, err
	}
	args := []string{"posix"}
	if forceSidecar || !hasUserXattrs(s.Root) {
		meta := filepath.Join(dir, "meta")
		if err := os.Mkdir(meta, 0o700); err != nil {
			return nil, err
		}
		args = append(args, "--sidecar", meta)
	}
	args = append(args, s.Root)
	// A port picked here may be taken before versitygw binds it (other
	// packages' tests run in parallel): retry with another one.
	for attempt := 1; ; attempt++ {
		err = s.run(bin, args)
		if err == nil {
			break
		}
		if attempt == 5 || !strings.Contains(s.log(), "address already in use") {
			os.RemoveAll(dir)
			return nil, err
		}
		t.Logf("tests3: port was taken, retrying")
	}
	t.Logf("tests3: versitygw ready on %s (posix root %s) in %s", s.Endpoint, s.Root, time.Since(began).Round(time.Millisecond))
	return s, nil
}

// run starts versitygw on a free port and waits until it answers.
func (s *Server) run(bin string, posix []string) error {
	port, err := freeport.One()
	if err != nil {
		return err
	}
	s.Endpoint = "http://" + net.JoinHostPort(Host, strconv.Itoa(port))
	logf, err := os.Create(filepath.Join(s.dir, "versitygw.log"))
	if err != nil {
		return err
	}
	defer logf.Close() // the child has its own descriptor
	args := append([]string{
		"--port", net.JoinHostPort(Host, strconv.Itoa(port)),
		"--region", Region,
		"--health", healthPath,
		"--quiet",
	}, posix...)
	cmd := exec.Command(bin, args...)
	// The keys go in the environment, not on the command line; nothing of
	// the test's environment (VGW_* would configure it) leaks in.
	cmd.Env = []string{"ROOT_ACCESS_KEY_ID=" + s.AccessKey, "ROOT_SECRET_ACCESS_KEY=" + s.SecretKey, "TZ=UTC"}
	cmd.Dir, cmd.Stdout, cmd.Stderr = s.dir, logf, logf
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if s.proc, err = serverproc.Start(cmd); err != nil {
		return fmt.Errorf("starting versitygw: %w", err)
	}
	hc := &http.Client{Timeout: time.Second}
	return s.proc.WaitReady("versitygw", func() bool {
		resp, err := hc.Get(s.Endpoint + healthPath)
		if err != nil {
			return false
		}
		resp.Body.Close()
		return resp.StatusCode == http.StatusOK
	}, s.kill, s.log)
}

// Client returns an S3 client signed with the root account's keys.
func (s *Server) Client() *s3.Client {
	return s3.New(s3.Options{
		Region:       s.Region,
		BaseEndpoint: aws.String(s.Endpoint),
		UsePathStyle: true,
		Credentials: aws.CredentialsProviderFunc(func(context.Context) (aws.Credentials, error) {
			return aws.Credentials{AccessKeyID: s.AccessKey, SecretAccessKey: s.SecretKey}, nil
		}),
	})
}

// CreateBucket creates a bucket through the S3 API, failing the test on
// error.
func (s *Server) CreateBucket(name string) {
	s.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if _, err := s.Client().CreateBucket(ctx, &s3.CreateBucketInput{Bucket: &name}); err != nil {
		s.t.Fatalf("tests3: create bucket %s: %v", name, err)
	}
}

// Objects lists the object keys of bucket as files under Root, read from
// the file system, not through S3: directories (key prefixes) are walked,
// versitygw's own bookkeeping is not listed.
func (s *Server) Objects(bucket string) []string {
	s.t.Helper()
	var keys []string
	root := filepath.Join(s.Root, bucket)
	err := filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && strings.HasPrefix(d.Name(), ".") && p != root {
			return filepath.SkipDir // .sgwtmp and the like
		}
		if d.Type().IsRegular() {
			rel, _ := filepath.Rel(root, p)
			keys = append(keys, filepath.ToSlash(rel))
		}
		return nil
	})
	if err != nil {
		s.t.Fatalf("tests3: list %s: %v", root, err)
	}
	return keys
}

// Stop stops the server and deletes its data. It is called by t.Cleanup;
// calling it earlier, or again, is fine.
func (s *Server) Stop() {
	s.once.Do(func() {
		s.kill()
		if s.t.Failed() {
			s.t.Logf("tests3: versitygw log for %s:\n%s", s.Endpoint, s.log())
		}
		if err := os.RemoveAll(s.dir); err != nil {
			s.t.Errorf("tests3: %v", err)
		}
	})
}

// kill asks versitygw to stop and escalates to SIGKILL.
func (s *Server) kill() { s.proc.Stop(syscall.SIGTERM, 10*time.Second) }

// log returns the tail of the server log.
func (s *Server) log() string { return serverproc.LogTail(filepath.Join(s.dir, "versitygw.log")) }

// forceSidecar makes every server keep metadata in a sidecar directory
// (tests of that mode).
var forceSidecar bool

// hasUserXattrs tells whether dir's file system stores user extended
// attributes, where versitygw's posix backend keeps object metadata.
func hasUserXattrs(dir string) bool {
	return syscall.Setxattr(dir, "user.tests3-probe", []byte("1"), 0) == nil
}

func randomHex(n int) string {
	b := make([]byte, n)
	if _, err := rand.Read(b); err != nil {
		panic(err)
	}
	return hex.EncodeToString(b)
}
