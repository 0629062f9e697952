package main

import (
	"bytes"
	"context"
	"io"
	"maps"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/example/cloud-provider-example/internal/testcluster"
	"github.com/example/cloud-provider-example/records"
)

// testNow is the clock of every test: ages in the output are stable.
var testNow = time.Date(2025, 6, 1, 12, 0, 0, 0, time.UTC)

func TestMain(m *testing.M) {
	now = func() time.Time { return testNow }
	os.Exit(m.Run())
}

// TestCluster runs the commands that read the cluster against one real
// apiserver; each subtest has its own controller namespace (records) and
// Service namespace.
func TestCluster(t *testing.T) {
	c := testcluster.Start(t)
	e := &env{client: c.Client, kubeconfig: c.AdminKubeconfig}
	for _, tc := range []struct {
		name string
		fn   func(*testing.T, *scope)
	}{
		{"status", testStatus},
		{"plan", testPlan},
		{"history", testHistory},
		{"approve", testApprove},
		{"unlock", testUnlock},
		{"errors", testClusterErrors},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			tc.fn(t, e.scope(t, tc.name))
		})
	}
}

type env struct {
	client     kubernetes.Interface
	kubeconfig string
}

// scope is one subtest's namespaces.
type scope struct {
	*env
	t *testing.T
	// ccmNS holds the records (--namespace); svcNS the Services.
	ccmNS, svcNS string
	store        *records.Store
}

func (e *env) scope(t *testing.T, name string) *scope {
	s := &scope{env: e, t: t, ccmNS: name + "-system", svcNS: name + "-shop"}
	for _, ns := range []string{s.ccmNS, s.svcNS} {
		_, err := e.client.CoreV1().Namespaces().Create(t.Context(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
	}
	s.store = records.NewStore(e.client, s.ccmNS, 10)
	return s
}

// run runs examplectl in-process against the scope's cluster and
// namespace; stdin nil is an empty, non-terminal stdin.
func (s *scope) run(stdin io.Reader, args ...string) (stdout, stderr string, err error) {
	s.t.Helper()
	if stdin == nil {
		stdin = strings.NewReader("")
	}
	cmd := newRootCmd()
	var out, errOut bytes.Buffer
	cmd.SetIn(stdin)
	cmd.SetOut(&out)
	cmd.SetErr(&errOut)
	cmd.SetArgs(append(args, "--kubeconfig", s.kubeconfig, "--namespace", s.ccmNS))
	err = cmd.ExecuteContext(s.t.Context())
	return out.String(), errOut.String(), err
}

// mustRun is run that fails the test on an error.
func (s *scope) mustRun(stdin io.Reader, args ...string) string {
	s.t.Helper()
	out, errOut, err := s.run(stdin, args...)
	if err != nil {
		s.t.Fatalf("examplectl %s: %v\nstdout:\n%s\nstderr:\n%s", strings.Join(args, " "), err, out, errOut)
	}
	return out
}

// mustFail is run that fails the test unless the command fails with an
// error containing want.
func (s *scope) mustFail(want string, stdin io.Reader, args ...string) {
	s.t.Helper()
	out, _, err := s.run(stdin, args...)
	if err == nil {
		s.t.Fatalf("examplectl %s succeeded, want an error with %q; stdout:\n%s", strings.Join(args, " "), want, out)
	}
	if !strings.Contains(err.Error(), want) {
		s.t.Fatalf("examplectl %s: error %q, want it to contain %q", strings.Join(args, " "), err, want)
	}
}

// service creates a LoadBalancer Service in the scope's namespace.
func (s *scope) service(name string) *corev1.Service {
	s.t.Helper()
	svc := &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: s.svcNS},
		Spec: corev1.ServiceSpec{
			Type:  corev1.ServiceTypeLoadBalancer,
			Ports: []corev1.ServicePort{{Name: "http", Port: 80}},
		},
	}
	svc, err := s.client.CoreV1().Services(s.svcNS).Create(s.t.Context(), svc, metav1.CreateOptions{})
	if err != nil {
		s.t.Fatal(err)
	}
	return svc
}

// annotation is key on the Service now ("" if unset).
func (s *scope) annotation(name, key string) string {
	s.t.Helper()
	svc, err := s.client.CoreV1().Services(s.svcNS).Get(s.t.Context(), name, metav1.GetOptions{})
	if err != nil {
		s.t.Fatal(err)
	}
	return svc.Annotations[key]
}

// save writes a record with the store, as the controller does.
func (s *scope) save(rec *records.Record) {
	s.t.Helper()
	if err := saveRecord(s.t.Context(), s.store, rec); err != nil {
		s.t.Fatalf("save record %s: %v", rec.Workspace, err)
	}
}

// saveRecord writes rec as the record of its workspace (the store sets
// UpdatedAt).
func saveRecord(ctx context.Context, st *records.Store, rec *records.Record) error {
	_, err := st.Update(ctx, rec.Workspace, func(r *records.Record) error {
		*r = *rec
		r.Plans = slices.Clone(rec.Plans)
		r.Files = maps.Clone(rec.Files)
		return nil
	})
	return err
}

// golden compares got with testdata/name (go test -update rewrites it).
func golden(t *testing.T, name, got string) {
	t.Helper()
	path := "testdata/" + name
	if *update {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if got != string(want) {
		t.Errorf("output differs from %s (go test ./cmd/examplectl -update):\n%s", path, got)
	}
}

// fakeTerminal is typed input on a terminal.
type fakeTerminal struct{ io.Reader }

func (fakeTerminal) IsTerminal() bool { return true }

func typed(answer string) io.Reader { return fakeTerminal{strings.NewReader(answer)} }
