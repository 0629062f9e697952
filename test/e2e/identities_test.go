package e2e

import (
	"fmt"
	"testing"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	authorizationv1 "k8s.io/api/authorization/v1"
	v1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/example/cloud-provider-example/internal/testkit"
	"github.com/example/cloud-provider-example/objectref"
	"github.com/example/cloud-provider-example/reviewapi"
)

// reviewerRole names the reviewer roles deploy/ ships (a ClusterRole for
// reading Services, a Role in the controller's namespace).
const reviewerRole = "example-ccm:reviewer"

// user is a person the test apiserver authenticates for real: a
// ServiceAccount with a token from the TokenRequest API (no impersonation).
type user struct {
	name string // as the API server knows it
	kube kubernetes.Interface
	dyn  dynamic.Interface
	cfg  *rest.Config
	// kubeconfig is its kubeconfig file (for examplectl).
	kubeconfig string
}

// newUser creates ServiceAccount ns/name and clients that use its token.
func (e *env) newUser(t testing.TB, ns, name string) *user {
	t.Helper()
	path := e.cluster.ServiceAccountKubeconfig(t, ns, name)
	cfg, err := clientcmd.BuildConfigFromFlags("", path)
	testkit.Must(t, err)
	kube, err := kubernetes.NewForConfig(cfg)
	testkit.Must(t, err)
	dyn, err := dynamic.NewForConfig(cfg)
	testkit.Must(t, err)
	return &user{name: fmt.Sprintf("system:serviceaccount:%s:%s", ns, name), kube: kube, dyn: dyn, cfg: cfg, kubeconfig: path}
}

func subject(ns, name string) rbacv1.Subject {
	return rbacv1.Subject{Kind: rbacv1.ServiceAccountKind, Namespace: ns, Name: name}
}

// reviewer is a user bound to exactly the shipped reviewer roles.
func (e *env) reviewer(t testing.TB, name string) *user {
	t.Helper()
	u := e.newUser(t, "reviewers", name)
	e.bindReviewer(t, "reviewers", name)
	e.waitAllowed(t, u, "create", reviewapi.Group, "planapprovals", namespace)
	return u
}

// waitAllowed waits until the API server lets u do verb on resource in
// ns: RBAC bindings take effect when the API server's cache has seen them,
// not when their create returns (on a loaded machine, tens of seconds).
func (e *env) waitAllowed(t testing.TB, u *user, verb, group, resource, ns string) {
	t.Helper()
	testkit.EventuallyEvery(t, 90*time.Second, 50*time.Millisecond, u.name+" may "+verb+" "+resource, func() error {
		r, err := u.kube.AuthorizationV1().SelfSubjectAccessReviews().Create(testkit.Context(t), &authorizationv1.SelfSubjectAccessReview{
			Spec: authorizationv1.SelfSubjectAccessReviewSpec{ResourceAttributes: &authorizationv1.ResourceAttributes{
				Namespace: ns, Verb: verb, Group: group, Resource: resource,
			}},
		}, metav1.CreateOptions{})
		if err != nil {
			return err
		}
		if !r.Status.Allowed {
			return fmt.Errorf("not yet allowed (%s)", r.Status.Reason)
		}
		return nil
	})
}

// bindReviewer binds ServiceAccount ns/name to the shipped reviewer roles.
func (e *env) bindReviewer(t testing.TB, ns, name string) {
	t.Helper()
	_, err := e.kube.RbacV1().ClusterRoleBindings().Create(testkit.Context(t), &rbacv1.ClusterRoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: "reviewer-" + ns + "-" + name},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: reviewerRole},
		Subjects:   []rbacv1.Subject{subject(ns, name)},
	}, metav1.CreateOptions{})
	testkit.Must(t, err)
	_, err = e.kube.RbacV1().RoleBindings(namespace).Create(testkit.Context(t), &rbacv1.RoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: "reviewer-" + ns + "-" + name},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: reviewerRole},
		Subjects:   []rbacv1.Subject{subject(ns, name)},
	}, metav1.CreateOptions{})
	testkit.Must(t, err)
}

// tenant is a user who may only edit Services (and read events) in ns.
func (e *env) tenant(t testing.TB, ns, name string) *user {
	t.Helper()
	u := e.newUser(t, ns, name)
	e.bindRole(t, ns, "service-editor-"+name, subject(ns, name),
		rbacv1.PolicyRule{APIGroups: []string{""}, Resources: []string{"services"}, Verbs: []string{"get", "list", "watch", "create", "update", "patch", "delete"}},
		rbacv1.PolicyRule{APIGroups: []string{""}, Resources: []string{"events"}, Verbs: []string{"get", "list", "watch"}})
	e.waitAllowed(t, u, "update", "", "services", ns)
	return u
}

// bindRole creates Role role in ns with rules, bound to who.
func (e *env) bindRole(t testing.TB, ns, role string, who rbacv1.Subject, rules ...rbacv1.PolicyRule) {
	t.Helper()
	_, err := e.kube.RbacV1().Roles(ns).Create(testkit.Context(t), &rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Name: role}, Rules: rules}, metav1.CreateOptions{})
	testkit.Must(t, err)
	_, err = e.kube.RbacV1().RoleBindings(ns).Create(testkit.Context(t), &rbacv1.RoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: role},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: role},
		Subjects:   []rbacv1.Subject{who},
	}, metav1.CreateOptions{})
	testkit.Must(t, err)
}

// approveAs creates a PlanApproval as u, naming approver, with u's groups
// as the API server authenticates them (what examplectl approve sends).
func (e *env) approveAs(t testing.TB, u *user, svc *v1.Service, planID, approver string) error {
	t.Helper()
	return e.approveObjectAs(t, u, serviceRef(svc), planID, approver)
}

// approveObjectAs is approveAs for any object (a group, the route set).
func (e *env) approveObjectAs(t testing.TB, u *user, ref objectref.Ref, planID, approver string) error {
	t.Helper()
	me, err := u.kube.AuthenticationV1().SelfSubjectReviews().Create(testkit.Context(t), &authenticationv1.SelfSubjectReview{}, metav1.CreateOptions{})
	testkit.Must(t, err)
	_, err = reviewapi.CreatePlanApproval(testkit.Context(t), u.dyn, namespace, reviewapi.PlanApprovalSpec{
		Object: ref, PlanID: planID, Approver: approver, ApproverGroups: me.Status.UserInfo.Groups,
	})
	return err
}

func serviceRef(svc *v1.Service) objectref.Ref {
	return objectref.Ref{Kind: objectref.KindService, Namespace: svc.Namespace, Name: svc.Name, UID: string(svc.UID)}
}

func (e *env) namespace(t testing.TB, name string) {
	t.Helper()
	_, err := e.kube.CoreV1().Namespaces().Create(testkit.Context(t), &v1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}, metav1.CreateOptions{})
	if err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatal(err)
	}
}

// adminDyn is a dynamic client as the cluster's admin.
func (e *env) adminDyn(t testing.TB) dynamic.Interface {
	d, err := dynamic.NewForConfig(e.cluster.Admin)
	testkit.Must(t, err)
	return d
}
