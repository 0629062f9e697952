package main

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"io"
	"maps"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/wait"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/yaml"

	"github.com/example/cloud-provider-example/internal/testcluster"
	"github.com/example/cloud-provider-example/objectref"
	"github.com/example/cloud-provider-example/records"
	"github.com/example/cloud-provider-example/reviewapi"
)

// testNow is the clock of every test: ages in the output are stable.
var testNow = time.Date(2025, 6, 1, 12, 0, 0, 0, time.UTC)

func TestMain(m *testing.M) {
	now = func() time.Time { return testNow }
	os.Exit(m.Run())
}

// TestCluster runs the commands that read the cluster against one real
// apiserver with the review.example.com API and its identity check
// installed from deploy/base; each subtest has its own controller namespace
// (records, approvals) and Service namespace, and runs examplectl as a
// ServiceAccount with a reviewer's rights only.
func TestCluster(t *testing.T) {
	c := testcluster.Start(t)
	dyn, err := dynamic.NewForConfig(c.Admin)
	if err != nil {
		t.Fatal(err)
	}
	installReviewAPI(t, dyn)
	e := &env{cluster: c, client: c.Client, dynamic: dyn, kubeconfig: c.AdminKubeconfig}
	for _, tc := range []struct {
		name string
		fn   func(*testing.T, *scope)
	}{
		{"status", testStatus},
		{"plan", testPlan},
		{"history", testHistory},
		{"approve", testApprove},
		{"unlock", testUnlock},
		{"release", testRelease},
		{"errors", testClusterErrors},
		{"hostile", testHostile},
		{"review", testReview},
		{"page-actions", testPageActions},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			tc.fn(t, e.scope(t, tc.name))
		})
	}
}

type env struct {
	cluster *testcluster.Cluster
	// client and dynamic are the admin's; kubeconfig too.
	client     kubernetes.Interface
	dynamic    dynamic.Interface
	kubeconfig string
}

// scope is one subtest's namespaces and reviewer.
type scope struct {
	*env
	t *testing.T
	// ccmNS holds the records (--namespace); svcNS the Services.
	ccmNS, svcNS string
	store        *records.Store
	// reviewer is the kubeconfig examplectl runs with; user its username.
	reviewer, user string
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
	s.reviewer, s.user = s.serviceAccount("reviewer", true)
	return s
}

// serviceAccount makes a ServiceAccount in the controller's namespace and
// returns its kubeconfig and username. With reviewer, it gets exactly the
// rights docs/examplectl.md lists: get and list ConfigMaps, create
// PlanApprovals, StateUnlocks and AddressReleases and list events there,
// get Services; no Secrets.
func (s *scope) serviceAccount(name string, reviewer bool) (kubeconfig, user string) {
	t, ctx := s.t, s.t.Context()
	kubeconfig = s.cluster.ServiceAccountKubeconfig(t, s.ccmNS, name)
	user = "system:serviceaccount:" + s.ccmNS + ":" + name
	if !reviewer {
		return kubeconfig, user
	}
	grant := func(ns string, rules ...rbacv1.PolicyRule) {
		role := &rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns}, Rules: rules}
		if _, err := s.client.RbacV1().Roles(ns).Create(ctx, role, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		binding := &rbacv1.RoleBinding{
			ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns},
			RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: name},
			Subjects:   []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Namespace: s.ccmNS, Name: name}},
		}
		if _, err := s.client.RbacV1().RoleBindings(ns).Create(ctx, binding, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	grant(s.ccmNS,
		rbacv1.PolicyRule{APIGroups: []string{""}, Resources: []string{"configmaps"}, Verbs: []string{"get", "list"}},
		rbacv1.PolicyRule{APIGroups: []string{reviewapi.Group}, Resources: []string{reviewapi.ResourcePlanApprovals, reviewapi.ResourceStateUnlocks, reviewapi.ResourceAddressReleases}, Verbs: []string{"create"}},
		rbacv1.PolicyRule{APIGroups: []string{coordinationv1.GroupName}, Resources: []string{"leases"}, Verbs: []string{"list"}},
		rbacv1.PolicyRule{APIGroups: []string{""}, Resources: []string{"events"}, Verbs: []string{"list"}})
	grant(s.svcNS, rbacv1.PolicyRule{APIGroups: []string{""}, Resources: []string{"services"}, Verbs: []string{"get"}})

	// The RBAC authorizer sees new bindings through an informer: wait.
	err := s.untilAs(kubeconfig, func(ctx context.Context, client kubernetes.Interface) bool {
		_, err1 := client.CoreV1().ConfigMaps(s.ccmNS).List(ctx, metav1.ListOptions{})
		_, err2 := client.CoreV1().Services(s.svcNS).Get(ctx, "none", metav1.GetOptions{})
		return err1 == nil && apierrors.IsNotFound(err2)
	})
	if err != nil {
		t.Fatalf("RBAC of %s never took effect: %v", user, err)
	}
	return kubeconfig, user
}

// untilAs polls, as the user of kubeconfig, until the API server answers
// as ok wants: the RBAC authorizer sees changed Roles and RoleBindings
// through an informer, a moment after the change.
func (s *scope) untilAs(kubeconfig string, ok func(context.Context, kubernetes.Interface) bool) error {
	cfg, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		s.t.Fatal(err)
	}
	client := kubernetes.NewForConfigOrDie(cfg)
	return wait.PollUntilContextTimeout(s.t.Context(), 50*time.Millisecond, 10*time.Second, true, func(ctx context.Context) (bool, error) {
		return ok(ctx, client), nil
	})
}

// reviewerWithoutLeases is a reviewer whose Role lacks list on Leases (the
// docs' table before sharding): its kubeconfig, once the API server
// refuses it Leases.
func (s *scope) reviewerWithoutLeases(name string) string {
	t, ctx := s.t, s.t.Context()
	kubeconfig, _ := s.serviceAccount(name, true)
	role, err := s.client.RbacV1().Roles(s.ccmNS).Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	role.Rules = slices.DeleteFunc(role.Rules, func(r rbacv1.PolicyRule) bool { return slices.Contains(r.Resources, "leases") })
	if _, err := s.client.RbacV1().Roles(s.ccmNS).Update(ctx, role, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	err = s.untilAs(kubeconfig, func(ctx context.Context, client kubernetes.Interface) bool {
		_, err := client.CoordinationV1().Leases(s.ccmNS).List(ctx, metav1.ListOptions{})
		return apierrors.IsForbidden(err)
	})
	if err != nil {
		t.Fatalf("%s may still list Leases: %v", name, err)
	}
	return kubeconfig
}

// installReviewAPI creates the CRDs and the identity admission policy of
// deploy/base, and waits until the API server enforces the policy.
func installReviewAPI(t *testing.T, dyn dynamic.Interface) {
	ctx := t.Context()
	resources := map[string]schema.GroupVersionResource{
		"CustomResourceDefinition":         {Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"},
		"ValidatingAdmissionPolicy":        {Group: "admissionregistration.k8s.io", Version: "v1", Resource: "validatingadmissionpolicies"},
		"ValidatingAdmissionPolicyBinding": {Group: "admissionregistration.k8s.io", Version: "v1", Resource: "validatingadmissionpolicybindings"},
	}
	for _, file := range []string{"crd-planapprovals.yaml", "crd-stateunlocks.yaml", "crd-addressreleases.yaml", "admission-identity.yaml"} {
		data, err := os.ReadFile("../../deploy/base/" + file)
		if err != nil {
			t.Fatal(err)
		}
		r := utilyaml.NewYAMLReader(bufio.NewReader(bytes.NewReader(data)))
		for {
			doc, err := r.Read()
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				t.Fatalf("%s: %v", file, err)
			}
			u := &unstructured.Unstructured{}
			if err := yaml.Unmarshal(doc, &u.Object); err != nil {
				t.Fatalf("%s: %v", file, err)
			}
			if len(u.Object) == 0 {
				continue
			}
			gvr, ok := resources[u.GetKind()]
			if !ok {
				t.Fatalf("%s: unexpected kind %s", file, u.GetKind())
			}
			if _, err := dyn.Resource(gvr).Create(ctx, u, metav1.CreateOptions{}); err != nil {
				t.Fatalf("%s: create %s %s: %v", file, u.GetKind(), u.GetName(), err)
			}
		}
	}
	// Served, and checked: an approval naming someone else than its
	// creator is refused.
	forged := reviewapi.PlanApprovalSpec{
		Object: objectref.Ref{Kind: objectref.KindRouteSet, Name: objectref.ClusterName},
		PlanID: "plan-000000000000", Approver: "someone-else",
	}
	err := wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
		a, err := reviewapi.CreatePlanApproval(ctx, dyn, "default", forged)
		switch {
		case err == nil:
			// Not enforced yet.
			return false, dyn.Resource(reviewapi.PlanApprovals).Namespace("default").Delete(ctx, a.Name, metav1.DeleteOptions{})
		case apierrors.IsNotFound(err):
			return false, nil // not served yet
		case apierrors.IsForbidden(err) && strings.Contains(err.Error(), "spec.approver must be the user creating the approval"):
			return true, nil
		}
		return false, err
	})
	if err != nil {
		t.Fatalf("the identity admission policy never took effect: %v", err)
	}
}

// approvals are the PlanApprovals in the scope's controller namespace.
func (s *scope) approvals() []*reviewapi.PlanApproval {
	s.t.Helper()
	return listIn(s, reviewapi.ListPlanApprovals)
}

// unlocks are the StateUnlocks in the scope's controller namespace.
func (s *scope) unlocks() []*reviewapi.StateUnlock {
	s.t.Helper()
	return listIn(s, reviewapi.ListStateUnlocks)
}

// releases are the AddressReleases in the scope's controller namespace.
func (s *scope) releases() []*reviewapi.AddressRelease {
	s.t.Helper()
	return listIn(s, reviewapi.ListAddressReleases)
}

// listIn lists the objects of one review kind in the scope's controller
// namespace.
func listIn[T any](s *scope, list func(context.Context, dynamic.Interface, string) ([]T, error)) []T {
	s.t.Helper()
	l, err := list(s.t.Context(), s.dynamic, s.ccmNS)
	if err != nil {
		s.t.Fatal(err)
	}
	return l
}

// run runs examplectl in-process against the scope's cluster and
// namespace, as its reviewer; stdin nil is an empty, non-terminal stdin.
func (s *scope) run(stdin io.Reader, args ...string) (stdout, stderr string, err error) {
	s.t.Helper()
	return s.runAs(s.reviewer, stdin, args...)
}

// runAs is run with another kubeconfig.
func (s *scope) runAs(kubeconfig string, stdin io.Reader, args ...string) (stdout, stderr string, err error) {
	s.t.Helper()
	if stdin == nil {
		stdin = strings.NewReader("")
	}
	cmd := newRootCmd()
	var out, errOut bytes.Buffer
	cmd.SetIn(stdin)
	cmd.SetOut(&out)
	cmd.SetErr(&errOut)
	cmd.SetArgs(append(args, "--kubeconfig", kubeconfig, "--namespace", s.ccmNS))
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

// asksFirst checks that examplectl args asks before it creates anything:
// without a terminal it refuses (wantRefusal) after showing what the
// golden file holds; on a terminal, any answer but yes changes nothing:
// made counts what it would create.
func (s *scope) asksFirst(goldenFile, wantRefusal string, made func() int, args ...string) {
	s.t.Helper()
	out, _, err := s.run(nil, args...)
	if err == nil || !strings.Contains(err.Error(), wantRefusal+" without confirmation: stdin is not a terminal (pass --yes)") {
		s.t.Fatalf("examplectl %s without a terminal: %v", strings.Join(args, " "), err)
	}
	golden(s.t, goldenFile, out)
	for _, answer := range []string{"n\n", "\n", ""} {
		s.mustFail("not confirmed: nothing changed", typed(answer), args...)
	}
	if n := made(); n != 0 {
		s.t.Fatalf("examplectl %s, not confirmed, created %d objects", strings.Join(args, " "), n)
	}
}

// yesSkipsTheQuestion runs examplectl args with --yes: nothing is asked,
// and it says it created what created begins.
func (s *scope) yesSkipsTheQuestion(created string, args ...string) {
	s.t.Helper()
	if out := s.mustRun(nil, append(args, "--yes")...); strings.Contains(out, "[y/N]") || !strings.Contains(out, created) {
		s.t.Errorf("examplectl %s --yes:\n%s", strings.Join(args, " "), out)
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
