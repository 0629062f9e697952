package deploy_test

import (
	"context"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	admissionv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apiserver/pkg/admission/plugin/policy/validating"
	"k8s.io/apiserver/pkg/cel/openapi/resolver"
	"k8s.io/client-go/discovery/cached/memory"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/restmapper"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/example/cloud-provider-example/deploy"
	"github.com/example/cloud-provider-example/internal/testcluster"
	"github.com/example/cloud-provider-example/internal/testkit"
	"github.com/example/cloud-provider-example/objectref"
	"github.com/example/cloud-provider-example/reviewapi"
)

// People of the governance test, authenticated by the apiserver with
// static tokens: two reviewers (in the group the base binds) and two
// tenants who may only edit Services in their namespace.
const (
	rita, rob    = "rita", "rob"
	tina, tom    = "tina", "tom"
	tenants      = "tenants"
	tenantNS     = "shop"
	approvalPlan = "plan-0123456789ab"
)

// identity is a person's clients.
type identity struct {
	name string
	kube kubernetes.Interface
	dyn  dynamic.Interface
}

func identityOf(t *testing.T, name string, cfg *rest.Config) identity {
	t.Helper()
	kube, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return identity{name: name, kube: kube, dyn: dyn}
}

func user(t *testing.T, c *testcluster.Cluster, name string) identity {
	t.Helper()
	cfg, err := c.UserConfig(name)
	if err != nil {
		t.Fatal(err)
	}
	return identityOf(t, name, cfg)
}

// The base, applied to a real apiserver, with real identities: reviewers
// approve (and ask for unlocks and releases) as themselves only, nobody
// changes an approval or a request, tenants and the controller cannot
// approve, reviewers read no Secret; with the
// service-author component, the annotation always names who changed what
// the controller renders.
func TestGovernance(t *testing.T) {
	c := testcluster.Start(t,
		testcluster.WithUser(rita, deploy.ReviewersGroup), testcluster.WithUser(rob, deploy.ReviewersGroup),
		testcluster.WithUser(tina, tenants), testcluster.WithUser(tom, tenants))
	ctx := t.Context()
	all, err := deploy.Objects() // the credentials Secret too
	if err != nil {
		t.Fatal(err)
	}
	if err := deploy.Apply(ctx, c.Client, all); err != nil {
		t.Fatal(err)
	}
	serviceEditors(t, c.Client)
	admin := identityOf(t, "admin", c.Admin)
	reviewer, other := user(t, c, rita), user(t, c, rob)
	tenant := user(t, c, tina)
	cfg, err := clientcmd.BuildConfigFromFlags("", c.ServiceAccountKubeconfig(t, deploy.Namespace, deploy.ServiceAccount))
	if err != nil {
		t.Fatal(err)
	}
	controller := identityOf(t, "controller", cfg)
	svc := tenantService(t, c.Client, "web")

	// RBAC and admission policies take effect through informers: wait
	// until a reviewer may create an approval and the policy refuses one
	// naming someone else (a dry run changes nothing).
	testkit.EventuallyEvery(t, time.Minute, 100*time.Millisecond, "the identity policy to deny", func() error {
		_, err := createApproval(ctx, reviewer, approvalSpec(svc, rob), true)
		if apierrors.IsForbidden(err) && strings.Contains(err.Error(), "spec.approver must be") {
			return nil
		}
		return fmt.Errorf("approval naming another: %v", err)
	})

	t.Run("reviewer approves as themself", func(t *testing.T) {
		a, err := reviewapi.CreatePlanApproval(ctx, reviewer.dyn, deploy.Namespace, approvalSpec(svc, rita))
		if err != nil {
			t.Fatal(err)
		}
		if a.Spec.Approver != rita {
			t.Errorf("approver %q", a.Spec.Approver)
		}
		u, err := reviewapi.CreateStateUnlock(ctx, reviewer.dyn, deploy.Namespace, reviewapi.StateUnlockSpec{
			Object: approvalSpec(svc, rita).Object, LockID: "lock-1", Requester: rita,
		})
		if err != nil || u.Spec.Requester != rita {
			t.Fatalf("unlock as themself: %v, %v", u, err)
		}
		r, err := reviewapi.CreateAddressRelease(ctx, reviewer.dyn, deploy.Namespace, releaseSpec(rita))
		if err != nil || r.Spec != releaseSpec(rita) {
			t.Fatalf("release as themself: %v, %v", r, err)
		}
	})

	t.Run("reviewer naming someone else is refused", func(t *testing.T) {
		_, err := reviewapi.CreatePlanApproval(ctx, reviewer.dyn, deploy.Namespace, approvalSpec(svc, rob))
		if !apierrors.IsForbidden(err) || !strings.Contains(err.Error(), "spec.approver must be the user creating the approval (rita), not rob") {
			t.Errorf("approval naming rob, by rita: err = %v, want Forbidden by the identity policy", err)
		}
		_, err = reviewapi.CreateStateUnlock(ctx, reviewer.dyn, deploy.Namespace, reviewapi.StateUnlockSpec{
			Object: approvalSpec(svc, rob).Object, LockID: "lock-1", Requester: rob,
		})
		if !apierrors.IsForbidden(err) || !strings.Contains(err.Error(), "spec.requester must be the user creating the unlock request (rita), not rob") {
			t.Errorf("unlock naming rob, by rita: err = %v, want Forbidden by the identity policy", err)
		}
		_, err = reviewapi.CreateAddressRelease(ctx, reviewer.dyn, deploy.Namespace, releaseSpec(rob))
		if !apierrors.IsForbidden(err) || !strings.Contains(err.Error(), "spec.requester must be the user creating the release request (rita), not rob") {
			t.Errorf("release naming rob, by rita: err = %v, want Forbidden by the identity policy", err)
		}
		_, err = reviewapi.CreateAddressRelease(ctx, admin.dyn, deploy.Namespace, releaseSpec(rita))
		if !apierrors.IsForbidden(err) {
			t.Errorf("release naming rita, by the admin: err = %v, want Forbidden", err)
		}
		// Not even an admin may approve in someone else's name.
		_, err = reviewapi.CreatePlanApproval(ctx, admin.dyn, deploy.Namespace, approvalSpec(svc, rita))
		if !apierrors.IsForbidden(err) {
			t.Errorf("approval naming rita, by the admin: err = %v, want Forbidden", err)
		}
	})

	t.Run("nobody changes an approval", func(t *testing.T) {
		a, err := reviewapi.CreatePlanApproval(ctx, other.dyn, deploy.Namespace, approvalSpec(svc, rob))
		if err != nil {
			t.Fatal(err)
		}
		unchangeable(t, reviewapi.PlanApprovals, a.Name, "approver", `{"spec":{"comment":"changed"}}`, admin, []identity{other, reviewer, tenant}, controller)
	})

	t.Run("nobody changes a release request", func(t *testing.T) {
		r, err := reviewapi.CreateAddressRelease(ctx, other.dyn, deploy.Namespace, releaseSpec(rob))
		if err != nil {
			t.Fatal(err)
		}
		unchangeable(t, reviewapi.AddressReleases, r.Name, "requester", `{"spec":{"address":{"name":"k8s-a-another"}}}`, admin, []identity{other, reviewer, tenant}, controller)
		got, err := admin.dyn.Resource(reviewapi.AddressReleases).Namespace(deploy.Namespace).Get(ctx, r.Name, metav1.GetOptions{})
		if !apierrors.IsNotFound(err) {
			t.Errorf("release request after the controller deleted it: %v, %v", got, err)
		}
	})

	t.Run("a release request names an address", func(t *testing.T) {
		for name, ref := range map[string]objectref.Ref{
			"a Service":       {Kind: objectref.KindService, Namespace: tenantNS, Name: svc.Name, UID: string(svc.UID)},
			"no namespace":    {Kind: objectref.KindAddress, Name: "k8s-a-0123456789abcdef0123456789"},
			"no address name": {Kind: objectref.KindAddress, Namespace: tenantNS},
		} {
			spec := releaseSpec(rita)
			spec.Address = ref
			if _, err := reviewapi.CreateAddressRelease(ctx, reviewer.dyn, deploy.Namespace, spec); !apierrors.IsInvalid(err) {
				t.Errorf("release naming %s: err = %v, want Invalid (the CRD's schema)", name, err)
			}
		}
	})

	t.Run("no approval without the reviewer role", func(t *testing.T) {
		// The tenant may change Services, so the test is not vacuous.
		if _, err := tenant.kube.CoreV1().Services(tenantNS).Get(ctx, svc.Name, metav1.GetOptions{}); err != nil {
			t.Fatalf("tenant cannot read Services: %v", err)
		}
		for _, who := range []identity{tenant, controller} {
			for _, ns := range []string{deploy.Namespace, tenantNS} {
				_, err := reviewapi.CreatePlanApproval(ctx, who.dyn, ns, approvalSpec(svc, who.name))
				if !apierrors.IsForbidden(err) {
					t.Errorf("%s creates an approval in %s: err = %v, want Forbidden", who.name, ns, err)
				}
				_, err = reviewapi.CreateStateUnlock(ctx, who.dyn, ns, reviewapi.StateUnlockSpec{
					Object: approvalSpec(svc, who.name).Object, LockID: "lock-1", Requester: who.name,
				})
				if !apierrors.IsForbidden(err) {
					t.Errorf("%s creates an unlock in %s: err = %v, want Forbidden", who.name, ns, err)
				}
				_, err = reviewapi.CreateAddressRelease(ctx, who.dyn, ns, releaseSpec(who.name))
				if !apierrors.IsForbidden(err) {
					t.Errorf("%s creates a release request in %s: err = %v, want Forbidden", who.name, ns, err)
				}
			}
		}
	})

	t.Run("reviewer reads no Secret", func(t *testing.T) {
		state := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "tfstate-default-x", Namespace: deploy.Namespace}}
		if _, err := controller.kube.CoreV1().Secrets(deploy.Namespace).Create(ctx, state, metav1.CreateOptions{}); err != nil {
			t.Fatalf("controller writes a state: %v", err)
		}
		for _, name := range []string{"example-cloud-credentials", state.Name} {
			if _, err := reviewer.kube.CoreV1().Secrets(deploy.Namespace).Get(ctx, name, metav1.GetOptions{}); !apierrors.IsForbidden(err) {
				t.Errorf("reviewer gets Secret %s: err = %v, want Forbidden", name, err)
			}
		}
		for _, ns := range []string{deploy.Namespace, metav1.NamespaceAll, "kube-system"} {
			if _, err := reviewer.kube.CoreV1().Secrets(ns).List(ctx, metav1.ListOptions{}); !apierrors.IsForbidden(err) {
				t.Errorf("reviewer lists Secrets in %q: err = %v, want Forbidden", ns, err)
			}
		}
		// What reviewing needs works.
		if _, err := reviewer.kube.CoreV1().ConfigMaps(deploy.Namespace).List(ctx, metav1.ListOptions{}); err != nil {
			t.Errorf("reviewer lists records: %v", err)
		}
		if _, err := reviewer.kube.CoreV1().Services(metav1.NamespaceAll).List(ctx, metav1.ListOptions{}); err != nil {
			t.Errorf("reviewer lists Services: %v", err)
		}
		if _, err := reviewapi.ListPlanApprovals(ctx, reviewer.dyn, deploy.Namespace); err != nil {
			t.Errorf("reviewer lists approvals: %v", err)
		}
		if _, err := reviewapi.ListAddressReleases(ctx, reviewer.dyn, deploy.Namespace); err != nil {
			t.Errorf("reviewer lists release requests: %v", err)
		}
	})

	t.Run("service-author component", func(t *testing.T) {
		testServiceAuthor(t, c, admin, controller)
	})

	// Each policy's expressions type-check against the types it matches
	// (Services, the CRDs' schemas, read from the apiserver), as
	// kube-controller-manager does to fill the policy's status.
	t.Run("policies type-check", func(t *testing.T) {
		disc := memory.NewMemCacheClient(c.Client.Discovery())
		checker := &validating.TypeChecker{
			SchemaResolver: &resolver.ClientDiscoveryResolver{Discovery: disc},
			RestMapper:     restmapper.NewDeferredDiscoveryRESTMapper(disc),
		}
		objs, err := deploy.Component(deploy.ServiceAuthor)
		if err != nil {
			t.Fatal(err)
		}
		base, err := deploy.RBACObjects()
		if err != nil {
			t.Fatal(err)
		}
		n := 0
		for _, o := range append(base, objs...) {
			p, ok := o.(*admissionv1.ValidatingAdmissionPolicy)
			if !ok {
				continue
			}
			n++
			for _, w := range checker.Check(p) {
				t.Errorf("%s: %s: %s", p.Name, w.FieldRef, w.Warning)
			}
		}
		if n != 2 {
			t.Errorf("checked %d policies, want 2", n)
		}
		// The checker resolved the matched types (it skips those it cannot,
		// such as apiVersions "*"): a wrong field is reported.
		for _, o := range append(base, objs...) {
			if p, ok := o.(*admissionv1.ValidatingAdmissionPolicy); ok {
				p = p.DeepCopy()
				p.Spec.Validations = append(p.Spec.Validations, admissionv1.Validation{Expression: "object.spec.nope == 'x'"})
				if len(checker.Check(p)) == 0 {
					t.Errorf("%s: the type checker does not see the types it matches", p.Name)
				}
			}
		}
	})
}

func testServiceAuthor(t *testing.T, c *testcluster.Cluster, admin, controller identity) {
	ctx := t.Context()
	objs, err := deploy.Component(deploy.ServiceAuthor)
	if err != nil {
		t.Fatal(err)
	}
	if err := deploy.Apply(ctx, c.Client, objs); err != nil {
		t.Fatal(err)
	}
	tinaC, tomC := user(t, c, tina), user(t, c, tom)
	services := func(who identity) func(context.Context, *corev1.Service) (*corev1.Service, error) {
		return func(ctx context.Context, s *corev1.Service) (*corev1.Service, error) {
			return who.kube.CoreV1().Services(tenantNS).Update(ctx, s, metav1.UpdateOptions{})
		}
	}
	create := func(ctx context.Context, who identity, s *corev1.Service, dryRun bool) (*corev1.Service, error) {
		o := metav1.CreateOptions{}
		if dryRun {
			o.DryRun = []string{metav1.DryRunAll}
		}
		return who.kube.CoreV1().Services(tenantNS).Create(ctx, s, o)
	}
	testkit.EventuallyEvery(t, time.Minute, 100*time.Millisecond, "the service-author policy to deny", func() error {
		if _, err := create(ctx, tinaC, lbService("probe", ""), true); !apierrors.IsForbidden(err) {
			return fmt.Errorf("probe Service: %v", err)
		}
		return nil
	})
	refused := func(what string, err error, message string) {
		t.Helper()
		if !apierrors.IsForbidden(err) || !strings.Contains(err.Error(), message) {
			t.Errorf("%s: err = %v, want Forbidden with %q", what, err, message)
		}
	}
	accepted := func(what string, err error) {
		t.Helper()
		if err != nil {
			t.Errorf("%s: %v", what, err)
		}
	}
	mustAuthor := "metadata.annotations[review.example.com/author] must be"

	_, err = create(ctx, tinaC, lbService("web2", ""), false)
	refused("create without author", err, mustAuthor+" tina, the user changing this LoadBalancer Service")
	_, err = create(ctx, tinaC, lbService("web2", tom), false)
	refused("create naming tom, by tina", err, mustAuthor+" tina, the user changing this LoadBalancer Service, not tom")
	_, err = create(ctx, admin, lbService("web2", ""), false)
	refused("create without author, by the admin", err, mustAuthor)
	s, err := create(ctx, tinaC, lbService("web2", tina), false)
	accepted("create by tina as tina", err)
	if err != nil {
		return
	}
	_, err = create(ctx, tinaC, &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: "internal"},
		Spec:       corev1.ServiceSpec{Ports: []corev1.ServicePort{{Port: 80}}},
	}, false)
	accepted("ClusterIP Service without author", err)

	// change applies f to the current Service and updates it as who.
	change := func(who identity, f func(*corev1.Service)) error {
		cur, err := admin.kube.CoreV1().Services(tenantNS).Get(ctx, s.Name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		f(cur)
		_, err = services(who)(ctx, cur)
		return err
	}
	label := func(v string) func(*corev1.Service) {
		return func(s *corev1.Service) { s.Labels = map[string]string{"tier": v} }
	}
	author := func(name string) func(*corev1.Service) {
		return func(s *corev1.Service) { s.Annotations[reviewapi.AuthorAnnotation] = name }
	}
	both := func(fs ...func(*corev1.Service)) func(*corev1.Service) {
		return func(s *corev1.Service) {
			for _, f := range fs {
				f(s)
			}
		}
	}
	port := func(p int32) func(*corev1.Service) {
		return func(s *corev1.Service) { s.Spec.Ports[0].Port = p }
	}
	annotate := func(k, v string) func(*corev1.Service) {
		return func(s *corev1.Service) { s.Annotations[k] = v }
	}
	mayOnly := "metadata.annotations[review.example.com/author] may only be kept"

	accepted("label-only change by tom, author kept", change(tomC, label("a")))
	accepted("other annotation by tom, author kept", change(tomC, annotate("team.example.com/owner", "x")))
	refused("port change by tom, author kept", change(tomC, port(81)), mustAuthor+" tom")
	accepted("port change by tom as tom", change(tomC, both(port(81), author(tom))))
	refused("load balancer annotation by tina, author tom kept", change(tinaC, annotate("loadbalancer.example.com/idle-timeout", "30s")), mustAuthor+" tina")
	refused("source ranges by tina, author tom kept",
		change(tinaC, annotate("service.beta.kubernetes.io/load-balancer-source-ranges", "10.0.0.0/8")), mustAuthor+" tina")
	accepted("source ranges by tina as tina",
		change(tinaC, both(annotate("service.beta.kubernetes.io/load-balancer-source-ranges", "10.0.0.0/8"), author(tina))))
	refused("removing a load balancer annotation by tom, author tina kept", change(tomC, func(s *corev1.Service) {
		delete(s.Annotations, "service.beta.kubernetes.io/load-balancer-source-ranges")
	}), mustAuthor+" tom")
	refused("label-only change by tom naming rob", change(tomC, both(label("b"), author(rob))), mayOnly+" (tina) or set to tom")
	refused("label-only change by tom removing the author", change(tomC, both(label("b"), func(s *corev1.Service) {
		delete(s.Annotations, reviewapi.AuthorAnnotation)
	})), mayOnly)
	accepted("label-only change by tom naming himself", change(tomC, both(label("b"), author(tom))))
	refused("LoadBalancer to ClusterIP by tina, author tom kept", change(tinaC, func(s *corev1.Service) {
		s.Spec.Type = corev1.ServiceTypeClusterIP
		delete(s.Annotations, "service.beta.kubernetes.io/load-balancer-source-ranges") // LoadBalancer only
		for i := range s.Spec.Ports {
			s.Spec.Ports[i].NodePort = 0
		}
	}), mustAuthor+" tina")

	// The controller writes status (ingress, its finalizer) through the
	// subresource, which the policy does not match.
	patch := []byte(`{"metadata":{"finalizers":["service.kubernetes.io/load-balancer-cleanup"]},"status":{"loadBalancer":{"ingress":[{"ip":"203.0.113.7"}]}}}`)
	_, err = controller.kube.CoreV1().Services(tenantNS).Patch(ctx, s.Name, types.StrategicMergePatchType, patch, metav1.PatchOptions{}, "status")
	accepted("status patch by the controller", err)
}

// lbService is a LoadBalancer Service, with the author annotation unless
// author is empty.
func lbService(name, author string) *corev1.Service {
	s := &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: name, Annotations: map[string]string{}},
		Spec: corev1.ServiceSpec{
			Type:     corev1.ServiceTypeLoadBalancer,
			Selector: map[string]string{"app": name},
			Ports:    []corev1.ServicePort{{Name: "http", Port: 80}},
		},
	}
	if author != "" {
		s.Annotations[reviewapi.AuthorAnnotation] = author
	}
	return s
}

// serviceEditors creates the tenants' namespace, where they may only edit
// Services.
func serviceEditors(t *testing.T, client kubernetes.Interface) {
	t.Helper()
	ctx := t.Context()
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: tenantNS}}
	role := &rbacv1.Role{
		ObjectMeta: metav1.ObjectMeta{Name: "service-editor", Namespace: tenantNS},
		Rules: []rbacv1.PolicyRule{{
			APIGroups: []string{""}, Resources: []string{"services"},
			Verbs: []string{"get", "list", "watch", "create", "update", "patch", "delete"},
		}},
	}
	binding := &rbacv1.RoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: "service-editor", Namespace: tenantNS},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: role.Name},
		Subjects:   []rbacv1.Subject{{Kind: rbacv1.GroupKind, APIGroup: rbacv1.GroupName, Name: tenants}},
	}
	if _, err := client.CoreV1().Namespaces().Create(ctx, ns, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := client.RbacV1().Roles(tenantNS).Create(ctx, role, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := client.RbacV1().RoleBindings(tenantNS).Create(ctx, binding, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
}

// tenantService is a LoadBalancer Service to approve plans of.
func tenantService(t *testing.T, client kubernetes.Interface, name string) *corev1.Service {
	t.Helper()
	s, err := client.CoreV1().Services(tenantNS).Create(t.Context(), lbService(name, ""), metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func approvalSpec(s *corev1.Service, approver string) reviewapi.PlanApprovalSpec {
	return reviewapi.PlanApprovalSpec{
		Object: objectref.Ref{Kind: objectref.KindService, Namespace: s.Namespace, Name: s.Name, UID: string(s.UID)},
		PlanID: approvalPlan, Approver: approver,
	}
}

// releaseSpec asks, as requester, for the release of an address of the
// tenants' namespace.
func releaseSpec(requester string) reviewapi.AddressReleaseSpec {
	return reviewapi.AddressReleaseSpec{
		Address: objectref.Address(tenantNS, "k8s-a-0123456789abcdef0123456789"), Requester: requester,
	}
}

// createApproval creates an approval as who, optionally as a dry run.
func createApproval(ctx context.Context, who identity, spec reviewapi.PlanApprovalSpec, dryRun bool) (*unstructured.Unstructured, error) {
	u := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": reviewapi.GroupVersion.String(), "kind": reviewapi.KindPlanApproval,
		"metadata": map[string]any{"generateName": "probe-", "namespace": deploy.Namespace},
		"spec": map[string]any{
			"object": map[string]any{"kind": spec.Object.Kind, "namespace": spec.Object.Namespace, "name": spec.Object.Name, "uid": spec.Object.UID},
			"planID": spec.PlanID, "approver": spec.Approver,
		},
	}}
	o := metav1.CreateOptions{}
	if dryRun {
		o.DryRun = []string{metav1.DryRunAll}
	}
	return who.dyn.Resource(reviewapi.PlanApprovals).Namespace(deploy.Namespace).Create(ctx, u, o)
}

// unchangeable checks that nobody changes review object name of gvr,
// whose person field (spec.<field>) is who made it: an update setting it
// to the caller, and a merge patch, are refused for the admin, each of
// people (reviewers, tenants) and the controller; people cannot delete
// it, the controller, once it has used it, can.
func unchangeable(t *testing.T, gvr schema.GroupVersionResource, name, field, patch string, admin identity, people []identity, controller identity) {
	t.Helper()
	ctx := t.Context()
	for _, who := range append([]identity{admin, controller}, people...) {
		res := who.dyn.Resource(gvr).Namespace(deploy.Namespace)
		u, err := admin.dyn.Resource(gvr).Namespace(deploy.Namespace).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		before := u.DeepCopy()
		testkit.Must(t, unstructured.SetNestedField(u.Object, who.name, "spec", field))
		if _, err := res.Update(ctx, u, metav1.UpdateOptions{}); err == nil {
			t.Errorf("%s changed spec.%s of %s %s", who.name, field, gvr.Resource, name)
		}
		if _, err := res.Patch(ctx, name, types.MergePatchType, []byte(patch), metav1.PatchOptions{}); err == nil {
			t.Errorf("%s changed %s %s with %s", who.name, gvr.Resource, name, patch)
		}
		if after, err := admin.dyn.Resource(gvr).Namespace(deploy.Namespace).Get(ctx, name, metav1.GetOptions{}); err != nil ||
			!reflect.DeepEqual(after.Object["spec"], before.Object["spec"]) {
			t.Errorf("%s %s now %v, %v; want its spec unchanged", gvr.Resource, name, after, err)
		}
	}
	for _, who := range people {
		if err := who.dyn.Resource(gvr).Namespace(deploy.Namespace).Delete(ctx, name, metav1.DeleteOptions{}); !apierrors.IsForbidden(err) {
			t.Errorf("%s deleted %s %s: err = %v, want Forbidden", who.name, gvr.Resource, name, err)
		}
	}
	if err := controller.dyn.Resource(gvr).Namespace(deploy.Namespace).Delete(ctx, name, metav1.DeleteOptions{}); err != nil {
		t.Errorf("the controller deletes %s %s it used: %v", gvr.Resource, name, err)
	}
}
