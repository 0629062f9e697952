package deploy_test

import (
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"

	admissionv1 "k8s.io/api/admissionregistration/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/example/cloud-provider-example/cloudconfig"
	"github.com/example/cloud-provider-example/deploy"
	"github.com/example/cloud-provider-example/objectref"
	"github.com/example/cloud-provider-example/reviewapi"
)

// Decisions over the rendered manifests, without an apiserver; rbac_test.go
// and governance_test.go check the same grants against a real one. Each
// holds for the base and for the chart's renderings (forEachRendering).

// No rule grants Secrets without naming them, except the controller's Role
// in its own namespace, and the ClusterRole of TLS Secrets: get only (by
// name, no list or watch), and bound only by RoleBindings, namespace by
// namespace, never cluster-wide.
func TestSecretsOnlyInControllerNamespace(t *testing.T) {
	forEachRendering(t, func(t *testing.T, rr rendering) {
		for _, o := range rr.objs {
			if b, ok := o.(*rbacv1.ClusterRoleBinding); ok && b.RoleRef.Name == tlsSecretsRole {
				t.Errorf("ClusterRoleBinding %q binds %s cluster-wide", b.Name, tlsSecretsRole)
			}
		}
		for _, o := range rr.objs {
			if cr, ok := o.(*rbacv1.ClusterRole); ok && cr.Name == tlsSecretsRole {
				if len(cr.Rules) != 1 || !slices.Equal(cr.Rules[0].Verbs, []string{"get"}) || !slices.Equal(cr.Rules[0].Resources, []string{"secrets"}) {
					t.Errorf("%s grants %+v, want get on secrets only", tlsSecretsRole, cr.Rules)
				}
				continue
			}
			var rules []rbacv1.PolicyRule
			ns := ""
			switch o := o.(type) {
			case *rbacv1.ClusterRole:
				rules = o.Rules
			case *rbacv1.Role:
				rules, ns = o.Rules, o.Namespace
			default:
				continue
			}
			for _, r := range rules {
				if !matches(r.APIGroups, "") || !matches(r.Resources, "secrets") {
					continue
				}
				if ns != rr.namespace && len(r.ResourceNames) == 0 {
					t.Errorf("%s %q (namespace %q) grants %v on every Secret", kindOf(o), o.(metav1.Object).GetName(), ns, r.Verbs)
				}
			}
		}
	})
}

// tlsSecretsRole is the ClusterRole of TLS Secrets (servicelb.TLSSecretsRole).
const tlsSecretsRole = "example-ccm:tls-secrets"

// In kube-system there is the leader-election Lease, a Role granting get and
// update on it by name, its binding, and the binding to the built-in
// delegated-authentication reader: nothing else.
func TestKubeSystemHoldsOnlyTheLease(t *testing.T) {
	forEachRendering(t, func(t *testing.T, r rendering) {
		var seen []string
		for _, o := range r.objs {
			m := o.(metav1.Object)
			if m.GetNamespace() != "kube-system" {
				continue
			}
			seen = append(seen, kindOf(o)+" "+m.GetName())
			switch o := o.(type) {
			case *coordinationv1.Lease:
				if o.Name != deploy.LeaderElectionLease || !reflect.DeepEqual(o.Spec, coordinationv1.LeaseSpec{}) {
					t.Errorf("Lease %q with spec %+v, want %q, empty", o.Name, o.Spec, deploy.LeaderElectionLease)
				}
			case *rbacv1.Role:
				want := []rbacv1.PolicyRule{{
					APIGroups: []string{"coordination.k8s.io"}, Resources: []string{"leases"},
					ResourceNames: []string{deploy.LeaderElectionLease}, Verbs: []string{"get", "update"},
				}}
				if !reflect.DeepEqual(o.Rules, want) {
					t.Errorf("Role %q rules = %+v, want only %+v", o.Name, o.Rules, want)
				}
			case *rbacv1.RoleBinding:
				switch o.RoleRef.Name {
				case "extension-apiserver-authentication-reader", "example-cloud-controller-manager:leader-election":
				default:
					t.Errorf("RoleBinding %q to %s %q in kube-system", o.Name, o.RoleRef.Kind, o.RoleRef.Name)
				}
			default:
				t.Errorf("%s %q in kube-system", kindOf(o), m.GetName())
			}
		}
		if len(seen) != 4 {
			t.Errorf("kube-system holds %v, want the Lease, its Role and RoleBinding, and the authentication reader binding", seen)
		}
	})
}

// The reviewers get exactly what reviewing and approving need: read
// Services and records, create and read approvals, unlock and release
// requests,
// list the shard Leases (which replica owns what), read the controller's
// events (the review page's trail). No Secret, no change to an approval
// once made.
func TestReviewerGrants(t *testing.T) {
	forEachRendering(t, func(t *testing.T, r rendering) {
		got := grantsOf(t, r.objs, rbacv1.Subject{Kind: rbacv1.GroupKind, APIGroup: rbacv1.GroupName, Name: deploy.ReviewersGroup})
		var want []grant
		add := func(ns, group, resource string, verbs ...string) {
			for _, v := range verbs {
				want = append(want, grant{ns: ns, group: group, resource: resource, verb: v})
			}
		}
		add(anyNamespace, "", "services", "get", "list", "watch")
		add(anyNamespace, "", "events", "get", "list", "watch")
		add(r.namespace, "", "configmaps", "get", "list", "watch")
		add(r.namespace, reviewapi.Group, reviewapi.ResourcePlanApprovals, "create", "get", "list", "watch")
		add(r.namespace, reviewapi.Group, reviewapi.ResourceStateUnlocks, "create", "get", "list", "watch")
		add(r.namespace, reviewapi.Group, reviewapi.ResourceAddressReleases, "create", "get", "list", "watch")
		add(r.namespace, "coordination.k8s.io", "leases", "list")
		slices.SortFunc(want, grant.compare)
		if !slices.Equal(got, want) {
			t.Errorf("reviewer grants:\n got %v\nwant %v", got, want)
		}
		for _, g := range got {
			if g.resource == "secrets" || g.resource == "*" {
				t.Errorf("reviewers may %s", g)
			}
			if g.group == reviewapi.Group && slices.Contains([]string{"update", "patch", "delete", "deletecollection", "*"}, g.verb) {
				t.Errorf("reviewers may %s", g)
			}
		}
	})
}

// The controller reads and deletes approvals (and unlock and release
// requests); it can never make one.
func TestControllerCannotApprove(t *testing.T) {
	forEachRendering(t, func(t *testing.T, r rendering) {
		got := grantsOf(t, r.objs, rbacv1.Subject{Kind: rbacv1.ServiceAccountKind, Namespace: r.namespace, Name: deploy.ServiceAccount})
		var review []string
		for _, g := range got {
			if g.group == reviewapi.Group || g.group == "*" {
				review = append(review, g.resource+" "+g.verb)
			}
		}
		slices.Sort(review)
		want := []string{
			"addressreleases delete", "addressreleases get", "addressreleases list", "addressreleases watch",
			"planapprovals delete", "planapprovals get", "planapprovals list", "planapprovals watch",
			"stateunlocks delete", "stateunlocks get", "stateunlocks list", "stateunlocks watch",
		}
		if !slices.Equal(review, want) {
			t.Errorf("controller on %s: %v, want %v", reviewapi.Group, review, want)
		}
		// The admission policies, by name, read-only: it cannot switch them
		// off. Its own two webhook configurations, by name: get, list and watch
		// (a metadata.name field selector), and update (to inject its CA).
		for _, g := range got {
			if g.group != "admissionregistration.k8s.io" {
				continue
			}
			webhook := g.name == cloudconfig.MutatingWebhookName && g.resource == "mutatingwebhookconfigurations" ||
				g.name == cloudconfig.ValidatingWebhookName && g.resource == "validatingwebhookconfigurations"
			if g.name == "" || !(g.verb == "get" || webhook && slices.Contains([]string{"list", "watch", "update"}, g.verb)) {
				t.Errorf("controller may %s", g)
			}
		}
	})
}

// The CRDs serve what reviewapi reads and writes.
func TestCRDsMatchReviewAPI(t *testing.T) {
	forEachRendering(t, func(t *testing.T, r rendering) {
		objs := deploy.RBACOf(r.objs)
		want := map[string]string{
			reviewapi.ResourcePlanApprovals:   reviewapi.KindPlanApproval,
			reviewapi.ResourceStateUnlocks:    reviewapi.KindStateUnlock,
			reviewapi.ResourceAddressReleases: reviewapi.KindAddressRelease,
		}
		for _, o := range objs {
			crd, ok := o.(*apiextensionsv1.CustomResourceDefinition)
			if !ok {
				continue
			}
			kind, ok := want[crd.Spec.Names.Plural]
			if !ok || crd.Spec.Group != reviewapi.Group || crd.Spec.Names.Kind != kind || crd.Spec.Scope != apiextensionsv1.NamespaceScoped {
				t.Errorf("CRD %s: group %q, plural %q, kind %q, scope %q", crd.Name, crd.Spec.Group, crd.Spec.Names.Plural, crd.Spec.Names.Kind, crd.Spec.Scope)
			}
			if len(crd.Spec.Versions) != 1 || crd.Spec.Versions[0].Name != reviewapi.Version || !crd.Spec.Versions[0].Served || !crd.Spec.Versions[0].Storage {
				t.Errorf("CRD %s: versions %+v, want %s served and stored", crd.Name, crd.Spec.Versions, reviewapi.Version)
			}
			// Every kind the controller plans can be approved and
			// unlocked: a kind left out is refused by the API server. Only
			// an address can be released.
			if kind == reviewapi.KindAddressRelease {
				if kinds := objectKinds(t, crd, "address"); !slices.Equal(kinds, []string{objectref.KindAddress}) {
					t.Errorf("CRD %s: spec.address.kind takes %v, want only %s", crd.Name, kinds, objectref.KindAddress)
				}
			} else {
				kinds := objectKinds(t, crd, "object")
				slices.Sort(kinds)
				if !slices.Equal(kinds, objectref.Planned()) {
					t.Errorf("CRD %s: spec.object.kind takes %v, want the planned kinds %v", crd.Name, kinds, objectref.Planned())
				}
			}
			delete(want, crd.Spec.Names.Plural)
		}
		if len(want) != 0 {
			t.Errorf("no CRD for %v", want)
		}
	})
}

// objectKinds is the enum of crd's spec.<ref>.kind.
func objectKinds(t *testing.T, crd *apiextensionsv1.CustomResourceDefinition, ref string) []string {
	t.Helper()
	s := crd.Spec.Versions[0].Schema.OpenAPIV3Schema
	for _, field := range []string{"spec", ref, "kind"} {
		next, ok := s.Properties[field]
		if !ok {
			t.Fatalf("CRD %s: no field %s in its schema", crd.Name, field)
		}
		s = &next
	}
	var kinds []string
	for _, v := range s.Enum {
		var k string
		if err := json.Unmarshal(v.Raw, &k); err != nil {
			t.Fatalf("CRD %s: kind enum value %s: %v", crd.Name, v.Raw, err)
		}
		kinds = append(kinds, k)
	}
	return kinds
}

// checkPolicyAndBinding: the policy name exists, fails closed, and its
// binding of the same name denies, everywhere (the controller checks both).
func checkPolicyAndBinding(t *testing.T, objs []runtime.Object, name string) {
	t.Helper()
	var policy *admissionv1.ValidatingAdmissionPolicy
	var binding *admissionv1.ValidatingAdmissionPolicyBinding
	for _, o := range objs {
		switch o := o.(type) {
		case *admissionv1.ValidatingAdmissionPolicy:
			if o.Name == name {
				policy = o
			}
		case *admissionv1.ValidatingAdmissionPolicyBinding:
			if o.Name == name {
				binding = o
			}
		}
	}
	if policy == nil || binding == nil {
		t.Fatalf("policy %q or its binding missing", name)
	}
	if policy.Spec.FailurePolicy == nil || *policy.Spec.FailurePolicy != admissionv1.Fail {
		t.Errorf("policy %q: failurePolicy %v, want Fail", name, policy.Spec.FailurePolicy)
	}
	want := []admissionv1.ValidationAction{admissionv1.Deny}
	if binding.Spec.PolicyName != name || !slices.Equal(binding.Spec.ValidationActions, want) || binding.Spec.MatchResources != nil || binding.Spec.ParamRef != nil {
		t.Errorf("binding %q: %+v, want policy %q, Deny, everywhere", name, binding.Spec, name)
	}
}

// anyNamespace marks a cluster-wide grant.
const anyNamespace = "*"

// grant is one verb on one resource in one namespace (anyNamespace for a
// ClusterRoleBinding), optionally by name.
type grant struct{ ns, group, resource, verb, name string }

func (g grant) String() string {
	s := fmt.Sprintf("%s %s.%s in %s", g.verb, g.resource, g.group, g.ns)
	if g.name != "" {
		s += " name " + g.name
	}
	return s
}

func (g grant) compare(o grant) int { return strings.Compare(g.String(), o.String()) }

// grantsOf expands the base's bindings of subject into grants, sorted.
// Roles outside the manifests (built-in ones) are not expanded.
func grantsOf(t *testing.T, objs []runtime.Object, subject rbacv1.Subject) []grant {
	t.Helper()
	clusterRoles := map[string][]rbacv1.PolicyRule{}
	roles := map[string][]rbacv1.PolicyRule{} // namespace/name
	for _, o := range objs {
		switch o := o.(type) {
		case *rbacv1.ClusterRole:
			clusterRoles[o.Name] = o.Rules
		case *rbacv1.Role:
			roles[o.Namespace+"/"+o.Name] = o.Rules
		}
	}
	var out []grant
	expand := func(ns string, rules []rbacv1.PolicyRule) {
		for _, r := range rules {
			names := r.ResourceNames
			if len(names) == 0 {
				names = []string{""}
			}
			for _, g := range r.APIGroups {
				for _, res := range r.Resources {
					for _, v := range r.Verbs {
						for _, n := range names {
							out = append(out, grant{ns: ns, group: g, resource: res, verb: v, name: n})
						}
					}
				}
			}
		}
	}
	for _, o := range objs {
		switch o := o.(type) {
		case *rbacv1.ClusterRoleBinding:
			if slices.Contains(o.Subjects, subject) {
				expand(anyNamespace, clusterRoles[o.RoleRef.Name])
			}
		case *rbacv1.RoleBinding:
			if !slices.Contains(o.Subjects, subject) {
				continue
			}
			if o.RoleRef.Kind == "ClusterRole" {
				expand(o.Namespace, clusterRoles[o.RoleRef.Name])
			} else {
				expand(o.Namespace, roles[o.Namespace+"/"+o.RoleRef.Name])
			}
		}
	}
	slices.SortFunc(out, grant.compare)
	return slices.Compact(out)
}

// matches tells whether a rule's list covers s (or is a wildcard).
func matches(list []string, s string) bool {
	return slices.Contains(list, s) || slices.Contains(list, "*")
}

// kindOf is an object's Go type name, which is its kind, or an
// unstructured object's kind (cert-manager's).
func kindOf(o runtime.Object) string {
	if u, ok := o.(*unstructured.Unstructured); ok {
		return u.GetKind()
	}
	return reflect.TypeOf(o).Elem().Name()
}

func clusterScoped(o runtime.Object) bool {
	switch o.(type) {
	case *corev1.Namespace, *rbacv1.ClusterRole, *rbacv1.ClusterRoleBinding, *apiextensionsv1.CustomResourceDefinition,
		*admissionv1.ValidatingAdmissionPolicy, *admissionv1.ValidatingAdmissionPolicyBinding,
		*admissionv1.MutatingWebhookConfiguration, *admissionv1.ValidatingWebhookConfiguration:
		return true
	}
	return false
}
