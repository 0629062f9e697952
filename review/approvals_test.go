package review

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	admissionv1 "k8s.io/api/admissionregistration/v1"
	authorizationv1 "k8s.io/api/authorization/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	utilcache "k8s.io/apimachinery/pkg/util/cache"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"
	"k8s.io/client-go/tools/cache"
	testingclock "k8s.io/utils/clock/testing"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/example/cloud-provider-example/cloudconfig"
	"github.com/example/cloud-provider-example/engine"
	"github.com/example/cloud-provider-example/objectref"
	"github.com/example/cloud-provider-example/records"
	"github.com/example/cloud-provider-example/review/reviewtest"
	"github.com/example/cloud-provider-example/reviewapi"
)

// fakeApprovals is approvals over a fake API server holding the identity
// policy (when installed) and a cache holding objs.
func fakeApprovals(t *testing.T, required int, installed bool, objs ...*unstructured.Unstructured) *approvals {
	t.Helper()
	var kube []runtime.Object
	if installed {
		kube = append(kube, reviewtest.Policies(t, reviewapi.AdmissionPolicy)...)
	}
	a := newApprovals("example-ccm", required, cloudconfig.DefaultPolicyPropagation)
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

// approvalObj is a PlanApproval; groups, when given, are its approver's.
func approvalObj(name string, ref objectref.Ref, planID, approver string, created time.Time, groups ...string) *unstructured.Unstructured {
	return reviewObj(reviewapi.KindPlanApproval, name, &reviewapi.PlanApprovalSpec{Object: ref, PlanID: planID, Approver: approver, ApproverGroups: groups}, created)
}

func TestApprovalDecisions(t *testing.T) {
	planned := time.Now().Add(-time.Minute)
	later := planned.Add(10 * time.Second)
	plan := &engine.Plan{ID: "plan-aaaaaaaaaaaa", Created: planned}
	other := web
	other.UID = "uid-0" // an earlier Service of the same name
	cases := []struct {
		name      string
		required  int
		installed bool
		contrib   records.Contributors
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
		{name: "the author", required: 1, installed: true, contrib: records.Contributors{Authors: []string{"alice"}},
			objs: []*unstructured.Unstructured{approvalObj("a", web, plan.ID, "alice", later)}, ignored: []string{"made a change this plan contains"}},
		{name: "one author of several", required: 1, installed: true, contrib: records.Contributors{Authors: []string{"carol", "alice"}},
			objs:     []*unstructured.Unstructured{approvalObj("a", web, plan.ID, "alice", later), approvalObj("b", web, plan.ID, "bob", later)},
			approved: true, approvers: []string{"bob"}, ignored: []string{`"alice" made a change`}},
		// A Secret's editor is never known: who may edit it may not approve.
		{name: "may edit the Secret", required: 1, installed: true, contrib: records.Contributors{Unverified: []records.Input{tlsSecret}},
			objs:     []*unstructured.Unstructured{approvalObj("a", web, plan.ID, "mallory", later, "team-shop"), approvalObj("b", web, plan.ID, "bob", later, "reviewers")},
			approved: true, approvers: []string{"bob"}, ignored: []string{`"mallory" may edit Secret shop/tls, whose editor cannot be verified`}},
		{name: "may edit through a group", required: 1, installed: true, contrib: records.Contributors{Unverified: []records.Input{tlsSecret}},
			objs:    []*unstructured.Unstructured{approvalObj("a", web, plan.ID, "erin", later, "system:authenticated", "secret-admins")},
			ignored: []string{`"erin" may edit Secret shop/tls`}},
		{name: "groups not given", required: 1, installed: true, contrib: records.Contributors{Unverified: []records.Input{tlsSecret}},
			objs:    []*unstructured.Unstructured{approvalObj("a", web, plan.ID, "bob", later)},
			ignored: []string{"does not carry its approver's groups"}},
		{name: "the API server cannot tell", required: 1, installed: true, contrib: records.Contributors{Unverified: []records.Input{{Resource: records.ResourceSecrets, Namespace: "shop", Name: "broken"}}},
			objs:    []*unstructured.Unstructured{approvalObj("a", web, plan.ID, "bob", later, "reviewers")},
			ignored: []string{"cannot check whether they may edit Secret shop/broken"}},
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
			allowSecretEditors(a)
			got, _ := a.decide(context.Background(), web, plan, func() (records.Contributors, error) { return c.contrib, nil })
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

var tlsSecret = records.Input{Resource: records.ResourceSecrets, Namespace: "shop", Name: "tls"}

// The API server is asked whether an approver may edit a plan's input
// once per plan, not at every look: a denial (the approval counts) is
// kept 30 s, in case an RBAC binding reaches the API server late, an
// allowance (it does not) 10 minutes; a plan made again with the same id
// asks again.
func TestEditAnswersKeptPerPlan(t *testing.T) {
	planned := time.Now().Add(-time.Minute)
	plan := &engine.Plan{ID: "plan-aaaaaaaaaaaa", Created: planned}
	again := &engine.Plan{ID: plan.ID, Created: planned.Add(5 * time.Second)} // the same change, planned anew
	later := planned.Add(10 * time.Second)
	contrib := func() (records.Contributors, error) {
		return records.Contributors{Unverified: []records.Input{tlsSecret}}, nil
	}
	for _, tc := range []struct {
		who      string
		approved bool
		asked    int // SubjectAccessReviews of a look that asks
		kept     time.Duration
	}{
		{"bob", true, len(editVerbs), editDeniedTTL},
		{"mallory", false, 1, editAllowedTTL}, // update is allowed: the first verb answers
	} {
		t.Run(tc.who, func(t *testing.T) {
			a := fakeApprovals(t, 1, true, approvalObj("a", web, plan.ID, tc.who, later, "reviewers"))
			allowSecretEditors(a)
			clock := testingclock.NewFakeClock(time.Now())
			a.edits = utilcache.NewLRUExpireCacheWithClock(editsSize, clock)
			asked := 0
			a.client.(*fake.Clientset).PrependReactor("create", "subjectaccessreviews", func(k8stesting.Action) (bool, runtime.Object, error) {
				asked++
				return false, nil, nil // answered by allowSecretEditors
			})
			look := func(what string, p *engine.Plan, want int) {
				t.Helper()
				asked = 0
				got, _ := a.decide(t.Context(), web, p, contrib)
				if got.Approved != tc.approved || asked != want {
					t.Errorf("%s: approved %v after %d SubjectAccessReviews; want %v after %d", what, got.Approved, asked, tc.approved, want)
				}
			}
			look("the first look", plan, tc.asked)
			look("the next look", plan, 0)
			clock.Step(tc.kept - time.Second)
			look("a look just within the answer's time", plan, 0)
			clock.Step(2 * time.Second)
			look("a look past it", plan, tc.asked)
			look("the same change planned anew", again, tc.asked)
		})
	}
}

// allowSecretEditors answers SubjectAccessReviews as an API server would
// where mallory, and group secret-admins, may edit Secret shop/tls, and
// Secret shop/broken cannot be decided.
func allowSecretEditors(a *approvals) {
	a.client.(*fake.Clientset).PrependReactor("create", "subjectaccessreviews", func(action k8stesting.Action) (bool, runtime.Object, error) {
		r := action.(k8stesting.CreateAction).GetObject().(*authorizationv1.SubjectAccessReview)
		at := r.Spec.ResourceAttributes
		if at.Name == "broken" {
			return true, nil, errors.New("authorizer unavailable")
		}
		r.Status.Allowed = at.Resource == "secrets" && at.Namespace == "shop" && at.Name == "tls" && at.Verb == "update" &&
			(r.Spec.User == "mallory" || slices.Contains(r.Spec.Groups, "secret-admins"))
		return true, r, nil
	})
}

// Only the policy deploy/ ships verifies identities: one of its name that
// lacks a validation (an older version without the approverGroups check,
// or a hand-made one) does not, and no approval counts.
func TestInstalledPolicyMustBeTheShippedOne(t *testing.T) {
	plan := &engine.Plan{ID: "plan-aaaaaaaaaaaa", Created: time.Now().Add(-time.Minute)}
	a := fakeApprovals(t, 1, false, approvalObj("a", web, plan.ID, "bob", time.Now(), "reviewers"))
	shipped := reviewtest.Policies(t, reviewapi.AdmissionPolicy)
	older := shipped[0].(*admissionv1.ValidatingAdmissionPolicy).DeepCopy()
	var kept []admissionv1.Validation
	for _, v := range older.Spec.Validations {
		if !strings.Contains(v.Expression, "approverGroups") {
			kept = append(kept, v)
		}
	}
	older.Spec.Validations = kept
	a.client = fake.NewClientset(older, shipped[1])
	allowSecretEditors(a)
	c := records.Contributors{Unverified: []records.Input{tlsSecret}}
	got, _ := a.decide(t.Context(), web, plan, func() (records.Contributors, error) { return c, nil })
	if got.Approved || len(got.Ignored) != 1 || !strings.Contains(got.Ignored[0], "is not the one this controller ships: it lacks the validation") {
		t.Fatalf("under a policy without the groups check: %+v", got)
	}

	// The shipped one: bob may not edit the Secret, his approval counts.
	a = fakeApprovals(t, 1, true, approvalObj("a", web, plan.ID, "bob", time.Now(), "reviewers"))
	allowSecretEditors(a)
	if got, _ := a.decide(t.Context(), web, plan, func() (records.Contributors, error) { return c, nil }); !got.Approved {
		t.Fatalf("bob's approval under the shipped policy: %+v", got)
	}
	// Who made the change unknown: nobody's approval counts.
	got, _ = a.decide(t.Context(), web, plan, func() (records.Contributors, error) { return records.Contributors{}, errors.New("etcd down") })
	if got.Approved || len(got.Ignored) != 1 || !strings.Contains(got.Ignored[0], "cannot be read: etcd down") {
		t.Fatalf("with the record unreadable: %+v", got)
	}
}

// An approval made before the identity policy was last installed or
// changed was never checked by it: it does not count.
func TestApprovalsOlderThanThePolicyDoNotCount(t *testing.T) {
	plan := &engine.Plan{ID: "plan-aaaaaaaaaaaa", Created: time.Now().Add(-time.Hour)}
	a := fakeApprovals(t, 1, false,
		approvalObj("before", web, plan.ID, "mallory", time.Now().Add(-30*time.Minute), "reviewers"),
		approvalObj("after", web, plan.ID, "bob", time.Now().Add(-5*time.Minute), "reviewers"))
	shipped := reviewtest.Policies(t, reviewapi.AdmissionPolicy)
	pol := shipped[0].(*admissionv1.ValidatingAdmissionPolicy).DeepCopy()
	pol.CreationTimestamp = metav1.NewTime(time.Now().Add(-2 * time.Hour))
	restored := metav1.NewTime(time.Now().Add(-10 * time.Minute)) // weakened, then restored
	pol.ManagedFields = []metav1.ManagedFieldsEntry{{Manager: "kubectl", Operation: metav1.ManagedFieldsOperationUpdate, Time: &restored}}
	a.client = fake.NewClientset(pol, shipped[1])
	got, _ := a.decide(t.Context(), web, plan, func() (records.Contributors, error) { return records.Contributors{}, nil })
	if !got.Approved || !slices.Equal(got.Approvers, []string{"bob"}) || len(got.Ignored) != 1 ||
		!strings.Contains(got.Ignored[0], `PlanApproval before by "mallory" was made before the admission policy that verifies approvers was last installed or changed`) {
		t.Fatalf("%+v; want bob's counted, mallory's (older than the policy) ignored", got)
	}
}

// An approval made within policyPropagation of the identity policy's last
// write may have reached an API server that did not enforce it yet: it
// does not count; with no propagation time it would.
func TestApprovalsWithinPolicyPropagationDoNotCount(t *testing.T) {
	plan := &engine.Plan{ID: "plan-aaaaaaaaaaaa", Created: time.Now().Add(-time.Hour)}
	shipped := reviewtest.Policies(t, reviewapi.AdmissionPolicy)
	pol := shipped[0].(*admissionv1.ValidatingAdmissionPolicy).DeepCopy()
	pol.CreationTimestamp = metav1.NewTime(time.Now().Add(-30 * time.Second))
	for _, propagation := range []time.Duration{cloudconfig.DefaultPolicyPropagation, 0} {
		a := fakeApprovals(t, 1, false, approvalObj("early", web, plan.ID, "mallory", time.Now().Add(-10*time.Second), "reviewers"))
		a.propagation = propagation
		a.client = fake.NewClientset(pol, shipped[1])
		got, _ := a.decide(t.Context(), web, plan, func() (records.Contributors, error) { return records.Contributors{}, nil })
		switch {
		case propagation > 0 && (got.Approved || len(got.Ignored) != 1 ||
			!strings.Contains(got.Ignored[0], "within review.approvals.policyPropagation (1m0s) after, before every API server enforced it")):
			t.Errorf("an approval 20 s after the policy was installed: %+v; want it ignored", got)
		case propagation == 0 && !got.Approved:
			t.Errorf("with policyPropagation 0: %+v; want the approval counted", got)
		}
	}
}

// A binding that only warns or audits does not make approvals verified.
func TestPolicyBindingMustDeny(t *testing.T) {
	a := newApprovals("example-ccm", 1, cloudconfig.DefaultPolicyPropagation)
	shipped := reviewtest.Policies(t, reviewapi.AdmissionPolicy)
	warn := shipped[1].(*admissionv1.ValidatingAdmissionPolicyBinding).DeepCopy()
	warn.Spec.ValidationActions = []admissionv1.ValidationAction{admissionv1.Warn}
	a.client = fake.NewClientset(shipped[0], warn)
	if _, err := a.inForce(context.Background(), reviewapi.AdmissionPolicy); err == nil {
		t.Fatal("a Warn-only binding was taken as verification")
	}
}

// A Gateway's plan counts every input: whoever may edit the TLS Secret an
// HTTPS listener serves, or a Service its rules forward to, may have made
// the change (put their own certificate on the Gateway, moved where it
// sends requests) and is ignored, as is a route's editor; a reviewer who
// may edit none of them approves.
func TestGatewayInputEditorsCannotApprove(t *testing.T) {
	gw := &gatewayv1.Gateway{ObjectMeta: metav1.ObjectMeta{Namespace: "infra", Name: "gw", UID: "uid-gw"}}
	ref := objectref.Gateway("infra", "gw", "uid-gw")
	s := new(Board).GatewaySubject(gw, GatewayInputs{
		Routes:   []objectref.Ref{{Kind: objectref.KindHTTPRoute, Namespace: "team-a", Name: "shop"}},
		Secrets:  []types.NamespacedName{{Namespace: "infra", Name: "gw-cert"}},
		Services: []types.NamespacedName{{Namespace: "team-a", Name: "api"}},
	}, records.KindChange)
	plan := &engine.Plan{ID: "plan-aaaaaaaaaaaa", Created: time.Now().Add(-time.Minute)}
	later := time.Now()
	// Who may edit what, as the API server would answer.
	editors := map[string]string{"secrets infra/gw-cert": "mallory", "services team-a/api": "sam", "httproutes team-a/shop": "alice"}
	for _, tc := range []struct{ approver, ignored string }{
		{"mallory", `"mallory" may edit Secret infra/gw-cert`},
		{"sam", `"sam" may edit Service team-a/api`},
		{"alice", `"alice" may edit HTTPRoute team-a/shop`},
		{"rita", ""},
	} {
		a := fakeApprovals(t, 1, true, approvalObj("a", ref, plan.ID, tc.approver, later, "reviewers"))
		a.client.(*fake.Clientset).PrependReactor("create", "subjectaccessreviews", func(action k8stesting.Action) (bool, runtime.Object, error) {
			r := action.(k8stesting.CreateAction).GetObject().(*authorizationv1.SubjectAccessReview)
			at := r.Spec.ResourceAttributes
			r.Status.Allowed = at.Verb == "patch" && editors[at.Resource+" "+at.Namespace+"/"+at.Name] == r.Spec.User
			return true, r, nil
		})
		got, _ := a.decide(t.Context(), ref, plan, func() (records.Contributors, error) { return s.contrib, nil })
		switch {
		case tc.ignored == "" && (!got.Approved || len(got.Ignored) != 0):
			t.Errorf("%s, who may edit no input: %+v; want the approval counted", tc.approver, got)
		case tc.ignored != "" && (got.Approved || len(got.Ignored) != 1 || !strings.Contains(got.Ignored[0], tc.ignored)):
			t.Errorf("%s: %+v; want the approval ignored: %s", tc.approver, got, tc.ignored)
		}
	}
}
