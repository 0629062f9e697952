package testcluster

import (
	"context"
	"fmt"
	"os"
	"regexp"
	"strings"
	"sync"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/example/cloud-provider-example/internal/procdir"
)

// shared is the control plane of one test binary (one package), started
// by the first test that asks for it and stopped by Main.
var shared struct {
	mu      sync.Mutex
	main    bool // Main runs the tests
	cluster *Cluster
	err     error // of the one start; every later Shared fails with it
}

// Main runs a package's tests and then stops the control plane they
// shared; a package whose tests call Shared has
//
//	func TestMain(m *testing.M) { os.Exit(testcluster.Main(m)) }
//
// After a failing run the cluster's files are kept (as Start keeps a
// failed test's) and the end of each process log is printed.
func Main(m *testing.M) int {
	shared.mu.Lock()
	shared.main = true
	shared.mu.Unlock()
	code := m.Run()
	shared.mu.Lock()
	defer shared.mu.Unlock()
	c := shared.cluster
	if c == nil {
		return code
	}
	if code != 0 {
		fmt.Fprintf(os.Stderr, "testcluster: a test failed; the shared control plane's files are kept in %s\n%s", c.Dir, c.LogTails(15))
		procdir.Keep(c.Dir)
		c.removeDir = false
	}
	if err := c.Close(); err != nil {
		fmt.Fprintf(os.Stderr, "testcluster: stop the shared control plane: %v\n", err)
	}
	return code
}

// Shared returns the control plane the package's tests share, starting it
// for the first one (its progress goes to that test's log). It is for
// tests that assert nothing of each other's objects: each works in a
// namespace of its own (Namespace) and names nothing cluster-wide that
// another test reads. A test that stops, restarts or reconfigures its
// control plane (API server flags, users, cluster-wide RBAC or admission
// it checks) calls Start instead. The package's TestMain calls Main.
func Shared(t testing.TB) *Cluster {
	t.Helper()
	shared.mu.Lock()
	defer shared.mu.Unlock()
	if !shared.main {
		t.Fatal("testcluster.Shared: the package's TestMain must run its tests with testcluster.Main, which stops the shared control plane")
	}
	if shared.cluster == nil && shared.err == nil {
		shared.cluster, shared.err = startShared(t)
	}
	if shared.err != nil {
		t.Fatalf("testcluster: the shared control plane: %v", shared.err)
	}
	return shared.cluster
}

func startShared(t testing.TB) (*Cluster, error) {
	log := &testLog{t: t}
	defer log.flush()
	// Run's context bounds the start only: the processes outlive the
	// test that started them.
	return Run(context.WithoutCancel(t.Context()), Options{Log: log})
}

// Namespace creates a namespace of its own for t, named after it (a
// generated suffix keeps names unique across tests and -count runs).
// It is left in place: no namespace controller runs to empty it, and
// the control plane goes with its last test.
func (c *Cluster) Namespace(t testing.TB) string {
	t.Helper()
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: namespacePrefix(t.Name())}}
	ns, err := c.Client.CoreV1().Namespaces().Create(t.Context(), ns, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("testcluster: namespace for %s: %v", t.Name(), err)
	}
	return ns.Name
}

var notLabel = regexp.MustCompile(`[^a-z0-9]+`)

// namespacePrefix is a DNS label prefix made of a test's name, short
// enough for the 5 characters GenerateName adds.
func namespacePrefix(test string) string {
	test = strings.TrimPrefix(test, "Test")
	p := strings.Trim(notLabel.ReplaceAllString(strings.ToLower(test), "-"), "-")
	if len(p) > 50 {
		p = strings.TrimRight(p[:50], "-")
	}
	if p == "" {
		p = "t"
	}
	return p + "-"
}
