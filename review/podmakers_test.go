package review

import (
	"fmt"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/example/cloud-provider-example/cloudconfig"
	"github.com/example/cloud-provider-example/internal/testcluster"
	"github.com/example/cloud-provider-example/internal/testkit"
	"github.com/example/cloud-provider-example/objectref"
	"github.com/example/cloud-provider-example/records"
	"github.com/example/cloud-provider-example/reviewapi"
)

// TestPodMakersCannotApprove asks a real API server, under its RBAC (the
// review never guesses who may edit what): whoever may scale a
// Deployment, create a pod, write an EndpointSlice or make a CronJob in a
// pod pool's namespace may have made the pool's change and is not
// counted; so is whoever may edit the Service; a reviewer allowed none of
// it is, and so is one allowed all of it in another namespace. The API
// server is asked once a plan, not at every look.
func TestPodMakersCannotApprove(t *testing.T) {
	cluster := testcluster.Start(t)
	ns, elsewhere := cluster.Namespace(t), cluster.Namespace(t)
	kube := cluster.Client
	grant := func(user, namespace, group, resource, verb string) {
		name := user + "-" + resource
		_, err := kube.RbacV1().Roles(namespace).Create(t.Context(), &rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Name: name},
			Rules: []rbacv1.PolicyRule{{APIGroups: []string{group}, Resources: []string{resource}, Verbs: []string{verb}}}}, metav1.CreateOptions{})
		testkit.Must(t, err)
		_, err = kube.RbacV1().RoleBindings(namespace).Create(t.Context(), &rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Name: name},
			RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: name},
			Subjects: []rbacv1.Subject{{APIGroup: rbacv1.GroupName, Kind: rbacv1.UserKind, Name: user}}}, metav1.CreateOptions{})
		testkit.Must(t, err)
	}
	grant("dora", ns, "apps", "deployments", "patch") // kubectl scale
	grant("pete", ns, "", "pods", "create")
	grant("ed", ns, "discovery.k8s.io", "endpointslices", "update")
	grant("jo", ns, "batch", "cronjobs", "create")
	grant("sam", ns, "", "services", "update")
	for _, r := range []string{"pods", "services"} {
		grant("olga", elsewhere, "", r, "create")
	}

	f := newReviewFixture(t, "", false)
	svc := &v1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "web"}}
	s := f.PodPoolSubject(objectref.PodPool(ns, "web", 80, v1.ProtocolTCP), svc, "ws", records.KindChange)
	a := newApprovals("example-ccm", 1, cloudconfig.DefaultPolicyPropagation)
	a.client = kube
	approval := func(who string) *reviewapi.PlanApproval {
		return &reviewapi.PlanApproval{Meta: reviewapi.Meta{Name: "approve-" + who},
			Spec: reviewapi.PlanApprovalSpec{Approver: who, ApproverGroups: []string{"system:authenticated", "reviewers"}}}
	}
	refused := map[string]string{
		"dora": "any Deployment of namespace " + ns,
		"pete": "any Pod of namespace " + ns,
		"ed":   "any EndpointSlice of namespace " + ns,
		"jo":   "any CronJob of namespace " + ns,
		"sam":  "Service " + ns + "/web",
	}
	// RBAC's authorizer follows its informer: a new binding counts within
	// moments. Each is waited for (asking past the plan's answers), since
	// a plan keeps the first answer.
	for who, input := range refused {
		in := inputNamed(t, s.contrib.Unverified, input)
		testkit.Eventually(t, 30*time.Second, who+"'s binding", func() error {
			if ok, err := a.mayEdit(t.Context(), who, approval(who).Spec.ApproverGroups, in); !ok {
				return fmt.Errorf("%s may not edit %s yet (%v)", who, in, err)
			}
			return nil
		})
		why := a.mayHaveChanged(t.Context(), "plan-1", approval(who), s.contrib.Unverified)
		if !strings.Contains(why, fmt.Sprintf("%q may edit %s, whose editor cannot be verified", who, input)) {
			t.Errorf("%s's approval: %q", who, why)
		}
	}
	for _, who := range []string{"victor", "olga"} {
		if why := a.mayHaveChanged(t.Context(), "plan-1", approval(who), s.contrib.Unverified); why != "" {
			t.Errorf("%s's approval not counted: %s", who, why)
		}
	}

	// A waiting plan is looked at every few seconds: the API server is
	// asked once a plan, as its requests show.
	var asked atomic.Int64
	cfg := rest.CopyConfig(cluster.Admin)
	cfg.Wrap(func(rt http.RoundTripper) http.RoundTripper {
		return roundTripper(func(r *http.Request) (*http.Response, error) {
			if strings.HasSuffix(r.URL.Path, "/subjectaccessreviews") {
				asked.Add(1)
			}
			return rt.RoundTrip(r)
		})
	})
	a.client = kubernetes.NewForConfigOrDie(cfg)
	all := int64(len(s.contrib.Unverified) * len(editVerbs)) // victor may edit none
	for _, look := range []struct {
		plan string
		want int64
	}{{"plan-2", all}, {"plan-2", 0}, {"plan-2", 0}, {"plan-3", all}} {
		asked.Store(0)
		if why := a.mayHaveChanged(t.Context(), look.plan, approval("victor"), s.contrib.Unverified); why != "" {
			t.Fatalf("victor on %s: %s", look.plan, why)
		}
		if got := asked.Load(); got != look.want {
			t.Errorf("a look at %s asked %d SubjectAccessReviews, want %d", look.plan, got, look.want)
		}
	}
}

func inputNamed(t *testing.T, inputs []records.Input, name string) records.Input {
	t.Helper()
	for _, in := range inputs {
		if in.String() == name {
			return in
		}
	}
	t.Fatalf("no input %q among %v", name, inputs)
	return records.Input{}
}

type roundTripper func(*http.Request) (*http.Response, error)

func (f roundTripper) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }
