package review

import (
	"context"
	"strings"
	"testing"
	"time"

	admissionv1 "k8s.io/api/admissionregistration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/client-go/tools/cache"

	"github.com/example/cloud-provider-example/objectref"
	"github.com/example/cloud-provider-example/reviewapi"
	"github.com/example/cloud-provider-example/runner"
)

// fakeApprovals is approvals over a fake API server holding the identity
// policy (when installed) and a cache holding objs.
func fakeApprovals(t *testing.T, required int, installed bool, objs ...*unstructured.Unstructured) *approvals {
	t.Helper()
	var kube []runtime.Object
	if installed {
		kube = append(kube,
			&admissionv1.ValidatingAdmissionPolicy{ObjectMeta: metav1.ObjectMeta{Name: reviewapi.AdmissionPolicy}},
			&admissionv1.ValidatingAdmissionPolicyBinding{ObjectMeta: metav1.ObjectMeta{Name: reviewapi.AdmissionPolicy},
				Spec: admissionv1.ValidatingAdmissionPolicyBindingSpec{PolicyName: reviewapi.AdmissionPolicy, ValidationActions: []admissionv1.ValidationAction{admissionv1.Deny}}})
	}
	a := newApprovals("example-ccm", required)
	a.client = fake.NewClientset(kube...)
	idx := cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{})
	for _, o := range objs {
		if err := idx.Add(o); err != nil {
			t.Fatal(err)
		}
	}
	a.plans = cache.NewGenericLister(idx, reviewapi.PlanApprovals.GroupResource())
	return a
}

var web = objectref.Ref{Kind: objectref.KindService, Namespace: "shop", Name: "web", UID: "uid-1"}

func approvalObj(name string, ref objectref.Ref, planID, approver string, created time.Time) *unstructured.Unstructured {
	spec, _ := runtime.DefaultUnstructuredConverter.ToUnstructured(&reviewapi.PlanApprovalSpec{Object: ref, PlanID: planID, Approver: approver})
	u := &unstructured.Unstructured{Object: map[string]any{"spec": spec}}
	u.SetAPIVersion(reviewapi.GroupVersion.String())
	u.SetKind(reviewapi.KindPlanApproval)
	u.SetNamespace("example-ccm")
	u.SetName(name)
	u.SetUID(types.UID("u-" + name))
	u.SetCreationTimestamp(metav1.NewTime(created))
	return u
}

func TestApprovalDecisions(t *testing.T) {
	planned := time.Now().Add(-time.Minute)
	later := planned.Add(10 * time.Second)
	plan := &runner.Plan{ID: "plan-aaaaaaaaaaaa", Created: planned}
	other := web
	other.UID = "uid-0" // an earlier Service of the same name
	cases := []struct {
		name      string
		required  int
		installed bool
		author    string
		objs      []*unstructured.Unstructured
		approved  bool
		approvers []string
		ignored   []string
	}{
		{name: "none", required: 1, installed: true},
		{name: "one reviewer", required: 1, installed: true,
			objs: []*unstructured.Unstructured{approvalObj("a", web, plan.ID, "alice", later)}, approved: true, approvers: []string{"alice"}},
		{name: "policy missing", required: 1, installed: false,
			objs: []*unstructured.Unstructured{approvalObj("a", web, plan.ID, "alice", later)}, ignored: []string{"not honoured"}},
		{name: "two needed, one person twice", required: 2, installed: true,
			objs:      []*unstructured.Unstructured{approvalObj("a", web, plan.ID, "alice", later), approvalObj("b", web, plan.ID, "alice", later.Add(time.Second))},
			approvers: []string{"alice"}},
		{name: "two people", required: 2, installed: true,
			objs:     []*unstructured.Unstructured{approvalObj("a", web, plan.ID, "alice", later), approvalObj("b", web, plan.ID, "bob", later)},
			approved: true, approvers: []string{"alice", "bob"}},
		{name: "the author", required: 1, installed: true, author: "alice",
			objs: []*unstructured.Unstructured{approvalObj("a", web, plan.ID, "alice", later)}, ignored: []string{"made the change"}},
		{name: "another plan", required: 1, installed: true,
			objs: []*unstructured.Unstructured{approvalObj("a", web, "plan-bbbbbbbbbbbb", "alice", later)}, ignored: []string{"the plan awaiting approval is plan-aaaaaaaaaaaa"}},
		{name: "made before the plan", required: 1, installed: true,
			objs: []*unstructured.Unstructured{approvalObj("a", web, plan.ID, "alice", planned.Add(-time.Hour))}, ignored: []string{"was made before"}},
		{name: "an earlier Service", required: 1, installed: true,
			objs: []*unstructured.Unstructured{approvalObj("a", other, plan.ID, "alice", later)}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			a := fakeApprovals(t, c.required, c.installed, c.objs...)
			got, _ := a.decide(context.Background(), web, plan, c.author)
			if got.Approved != c.approved || strings.Join(got.Approvers, ",") != strings.Join(c.approvers, ",") {
				t.Fatalf("got %+v", got)
			}
			if len(got.Ignored) != len(c.ignored) {
				t.Fatalf("ignored %q, want %d like %q", got.Ignored, len(c.ignored), c.ignored)
			}
			for i, want := range c.ignored {
				if !strings.Contains(got.Ignored[i], want) {
					t.Errorf("ignored[%d] = %q, want it to say %q", i, got.Ignored[i], want)
				}
			}
		})
	}
}

// A binding that only warns or audits does not make approvals verified.
func TestPolicyBindingMustDeny(t *testing.T) {
	a := newApprovals("example-ccm", 1)
	a.client = fake.NewClientset(
		&admissionv1.ValidatingAdmissionPolicy{ObjectMeta: metav1.ObjectMeta{Name: reviewapi.AdmissionPolicy}},
		&admissionv1.ValidatingAdmissionPolicyBinding{ObjectMeta: metav1.ObjectMeta{Name: reviewapi.AdmissionPolicy},
			Spec: admissionv1.ValidatingAdmissionPolicyBindingSpec{PolicyName: reviewapi.AdmissionPolicy, ValidationActions: []admissionv1.ValidationAction{admissionv1.Warn}}})
	if err := a.verified(context.Background(), reviewapi.AdmissionPolicy); err == nil {
		t.Fatal("a Warn-only binding was taken as verification")
	}
}
