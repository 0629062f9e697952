package testcluster

import (
	"bytes"
	"os"
	"sync"
	"testing"

	"github.com/example/cloud-provider-example/internal/procdir"
)

// Option configures Start.
type Option func(*Options)

// WithDir keeps the cluster's files (data, logs, kubeconfigs) in dir.
func WithDir(dir string) Option { return func(o *Options) { o.Dir = dir } }

// WithAPIServerArgs appends kube-apiserver flags.
func WithAPIServerArgs(args ...string) Option {
	return func(o *Options) { o.APIServerArgs = append(o.APIServerArgs, args...) }
}

// WithWorkloads runs kube-controller-manager, kube-scheduler and kwok
// too (Options.Workloads).
func WithWorkloads() Option { return func(o *Options) { o.Workloads = true } }

// WithPodReadyAnnotation makes pods Ready only once annotation is "true"
// (Options.PodReadyAnnotation).
func WithPodReadyAnnotation(annotation string) Option {
	return func(o *Options) { o.PodReadyAnnotation = annotation }
}

// WithUser adds a user authenticated by a static token, member of groups
// (see User, UserKubeconfig).
func WithUser(name string, groups ...string) Option {
	return func(o *Options) { o.Users = append(o.Users, User{Name: name, Groups: groups}) }
}

// Start runs a control plane for t (see Run) and stops it in t.Cleanup.
// Progress, including a first-time build of the binaries, goes to the test
// log. Its directory is removed after a passing test and kept (with the
// end of each process log printed) after a failing one.
func Start(t testing.TB, opts ...Option) *Cluster {
	t.Helper()
	log := &testLog{t: t}
	o := Options{Log: log}
	for _, opt := range opts {
		opt(&o)
	}
	madeDir := o.Dir == ""
	if madeDir {
		dir, err := makeTempDir()
		if err != nil {
			t.Fatal(err)
		}
		o.Dir = dir
	}
	c, err := Run(t.Context(), o)
	log.flush()
	if err != nil {
		if madeDir {
			os.RemoveAll(o.Dir)
		}
		t.Fatalf("testcluster: %v", err)
	}
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("testcluster: test failed; files kept in %s\n%s", c.Dir, c.LogTails(15))
			if madeDir {
				procdir.Keep(c.Dir)
				madeDir = false
			}
		}
		if err := c.Close(); err != nil {
			t.Logf("testcluster: stop: %v", err)
		}
		if madeDir {
			os.RemoveAll(c.Dir)
		}
	})
	return c
}

// ServiceAccountKubeconfig is WriteServiceAccountKubeconfig for tests.
func (c *Cluster) ServiceAccountKubeconfig(t testing.TB, namespace, name string) string {
	t.Helper()
	path, err := c.WriteServiceAccountKubeconfig(t.Context(), namespace, name)
	if err != nil {
		t.Fatal(err)
	}
	return path
}

// UserKubeconfig is WriteUserKubeconfig for tests.
func (c *Cluster) UserKubeconfig(t testing.TB, name string) string {
	t.Helper()
	path, err := c.WriteUserKubeconfig(name)
	if err != nil {
		t.Fatal(err)
	}
	return path
}

// Stop stops the processes early (Start's cleanup would anyway); errors
// are kept for Close.
func (c *Cluster) Stop() { _ = c.Close() }

// testLog turns written lines into t.Logf calls.
type testLog struct {
	t   testing.TB
	mu  sync.Mutex
	buf []byte
}

func (l *testLog) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.buf = append(l.buf, p...)
	for {
		i := bytes.IndexByte(l.buf, '\n')
		if i < 0 {
			return len(p), nil
		}
		l.t.Logf("%s", l.buf[:i])
		l.buf = l.buf[i+1:]
	}
}

func (l *testLog) flush() {
	l.mu.Lock()
	defer l.mu.Unlock()
	if len(l.buf) > 0 {
		l.t.Logf("%s", l.buf)
		l.buf = nil
	}
}
