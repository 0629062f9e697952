package deploy_test

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	authorizationv1 "k8s.io/api/authorization/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/example/cloud-provider-example/deploy"
	"github.com/example/cloud-provider-example/internal/testcluster"
)

// access is one request: verb on group/resource[/subresource] in namespace
// ("" = cluster-wide or cluster-scoped), optionally a named object.
type access struct {
	verb, group, resource, sub, ns, name string
}

func (a access) String() string {
	r := a.resource
	if a.sub != "" {
		r += "/" + a.sub
	}
	if a.group != "" {
		r += "." + a.group
	}
	return fmt.Sprintf("%s %s ns=%q name=%q", a.verb, r, a.ns, a.name)
}

func verbs(group, resource, sub, ns string, vs ...string) []access {
	var out []access
	for _, v := range vs {
		out = append(out, access{verb: v, group: group, resource: resource, sub: sub, ns: ns})
	}
	return out
}

// named is verbs on one object.
func named(group, resource, ns, name string, vs ...string) []access {
	out := verbs(group, resource, "", ns, vs...)
	for i := range out {
		out[i].name = name
	}
	return out
}

// needed is what the CCM does (see deploy/README.md for the source of
// each), running in namespace ns; leases are the verbs it needs on the
// Leases there (the kubernetes state backend's locks, the shards').
func needed(ns string, leases []string) []access {
	lockLeases := verbs("coordination.k8s.io", "leases", "", ns, leases...)
	return concat(
		verbs("", "nodes", "", "", "get", "list", "watch", "update", "patch", "delete"),
		verbs("", "nodes", "status", "", "patch"),
		verbs("", "services", "", "", "get", "list", "watch"),
		verbs("", "services", "status", "", "patch"),
		verbs("", "events", "", "default", "create", "patch"),
		verbs("", "events", "", "kube-system", "create", "patch"),
		verbs("", "events", "", ns, "create", "patch"),
		// Leader election: the pre-created Lease, by name.
		named("coordination.k8s.io", "leases", "kube-system", "cloud-controller-manager", "get", "update"),
		// State locks, shards, states, records, approvals: in the controller's namespace.
		lockLeases,
		verbs("", "secrets", "", ns, "get", "list", "create", "update", "delete"),
		verbs("", "configmaps", "", ns, "get", "list", "create", "update", "delete"),
		verbs("review.example.com", "planapprovals", "", ns, "get", "list", "watch", "delete"),
		verbs("review.example.com", "stateunlocks", "", ns, "get", "list", "watch", "delete"),
		verbs("review.example.com", "addressreleases", "", ns, "get", "list", "watch", "delete"),
		named("admissionregistration.k8s.io", "validatingadmissionpolicies", "", "review.example.com-identity", "get"),
		named("admissionregistration.k8s.io", "validatingadmissionpolicybindings", "", "review.example.com-identity", "get"),
		named("admissionregistration.k8s.io", "validatingadmissionpolicies", "", "review.example.com-service-author", "get"),
		named("admissionregistration.k8s.io", "validatingadmissionpolicybindings", "", "review.example.com-service-author", "get"),
		named("admissionregistration.k8s.io", "mutatingwebhookconfigurations", "", "example-ccm-service-author", "get", "list", "watch", "update"),
		named("admissionregistration.k8s.io", "validatingwebhookconfigurations", "", "example-ccm-service-preview", "get", "list", "watch", "update"),
		verbs("authentication.k8s.io", "tokenreviews", "", "", "create"),
		verbs("authorization.k8s.io", "subjectaccessreviews", "", "", "create"),
		named("", "configmaps", "kube-system", "extension-apiserver-authentication", "get", "watch"),
		// Pod targets: the Services' slices and pods read, the readiness
		// gates passed in the pods' status.
		verbs("discovery.k8s.io", "endpointslices", "", "", "get", "list", "watch"),
		verbs("", "pods", "", "", "get", "list", "watch"),
		verbs("", "pods", "status", "", "patch"),
	)
}

// denied shows the grants stop where the CCM's needs stop.
func denied(ns string, leases []string) []access {
	var lockLeases []access
	for _, v := range []string{"get", "list", "create", "update", "delete", "watch", "patch"} {
		if !slices.Contains(leases, v) {
			lockLeases = append(lockLeases, verbs("coordination.k8s.io", "leases", "", ns, v)...)
		}
	}
	var baseNamespace []access
	if ns != deploy.Namespace { // the base's namespace is just another one
		baseNamespace = verbs("", "secrets", "", deploy.Namespace, "get", "list", "create")
	}
	return concat(
		lockLeases,
		baseNamespace,
		// kube-system: nothing but the Lease, by name.
		verbs("", "secrets", "", "kube-system", "get", "list", "create", "update", "delete"),
		named("", "secrets", "kube-system", "some-secret", "get"),
		verbs("", "configmaps", "", "kube-system", "get", "list", "create", "update"),
		named("", "configmaps", "kube-system", "kube-proxy", "get"),
		verbs("coordination.k8s.io", "leases", "", "kube-system", "get", "create", "update", "delete", "list"),
		named("coordination.k8s.io", "leases", "kube-system", "kube-controller-manager", "get", "update"),
		named("coordination.k8s.io", "leases", "kube-system", "cloud-controller-manager", "delete", "patch"),
		// Other namespaces.
		verbs("", "secrets", "", "default", "get", "list", "delete"),
		verbs("", "secrets", "", "", "list"), // all namespaces
		verbs("", "configmaps", "", "default", "get", "update"),
		verbs("coordination.k8s.io", "leases", "", "default", "create", "update"),
		// The controller never approves, nor changes an approval.
		verbs("review.example.com", "planapprovals", "", ns, "create", "update", "patch"),
		verbs("review.example.com", "stateunlocks", "", ns, "create", "update", "patch"),
		verbs("review.example.com", "addressreleases", "", ns, "create", "update", "patch"),
		verbs("review.example.com", "planapprovals", "", "default", "get", "list"),
		// Nor switches the policies off, nor reads other ones.
		named("admissionregistration.k8s.io", "validatingadmissionpolicies", "", "review.example.com-identity", "update", "patch", "delete"),
		named("admissionregistration.k8s.io", "validatingadmissionpolicybindings", "", "review.example.com-identity", "update", "delete"),
		named("admissionregistration.k8s.io", "validatingadmissionpolicies", "", "other", "get"),
		verbs("admissionregistration.k8s.io", "validatingadmissionpolicies", "", "", "list", "create"),
		verbs("apiextensions.k8s.io", "customresourcedefinitions", "", "", "update", "delete"),
		// Nor any other webhook, nor its own ones' deletion.
		named("admissionregistration.k8s.io", "mutatingwebhookconfigurations", "", "other", "get", "update", "list", "watch"),
		named("admissionregistration.k8s.io", "validatingwebhookconfigurations", "", "other", "update"),
		named("admissionregistration.k8s.io", "validatingwebhookconfigurations", "", "example-ccm-service-preview", "delete", "patch"),
		verbs("admissionregistration.k8s.io", "mutatingwebhookconfigurations", "", "", "list", "watch", "create"),
		verbs("admissionregistration.k8s.io", "validatingwebhookconfigurations", "", "", "list", "watch"),
		verbs("", "services", "", "default", "create", "update", "patch", "delete"),
		verbs("", "nodes", "", "", "create"),
		verbs("", "pods", "", "", "create", "update", "patch", "delete"),
		verbs("", "pods", "status", "", "update"),
		verbs("discovery.k8s.io", "endpointslices", "", "", "create", "update", "delete"),
		verbs("", "serviceaccounts", "token", ns, "create"),
		verbs("", "serviceaccounts", "", ns, "create"),
		verbs("rbac.authorization.k8s.io", "clusterrolebindings", "", "", "create"),
		verbs("rbac.authorization.k8s.io", "roles", "", ns, "escalate", "bind", "update"),
		verbs("", "users", "", "", "impersonate"),
		verbs("apps", "deployments", "", ns, "update"),
	)
}

func concat(lists ...[]access) []access {
	var out []access
	for _, l := range lists {
		out = append(out, l...)
	}
	return out
}

// The RBAC of the base, applied to a real apiserver, allows exactly what the
// CCM needs when checked as its ServiceAccount; the rest of the base passes
// server-side validation. Then the same for the chart rendered into another
// namespace with the pg backend (after the base: it takes over the
// cluster-scoped roles and bindings).
func TestAgainstAPIServer(t *testing.T) {
	c := testcluster.Start(t)
	t.Run("base", func(t *testing.T) {
		// Sharding and the kubernetes backend: shards counted, locks taken.
		checkAgainstAPIServer(t, c, rendering{namespace: deploy.Namespace, objs: allObjects(t)}, []string{"get", "list", "create", "update", "delete"})
	})
	t.Run("chart-elsewhere", func(t *testing.T) {
		r := rendering{name: "chart-elsewhere", namespace: "ccm-prod", helm: true, values: chartValuesElsewhere}
		r.objs = renderingObjects(t, r)
		checkAgainstAPIServer(t, c, r, nil) // pg, one active replica: no Leases
	})
	t.Run("TLS Secrets of one namespace", func(t *testing.T) {
		checkTLSSecrets(t, c)
	})
}

// checkTLSSecrets: with tlsSecrets.namespaces [shop] the controller may get
// a Secret of shop by name, and nothing more of Secrets, there or
// elsewhere.
func checkTLSSecrets(t *testing.T, c *testcluster.Cluster) {
	ctx := t.Context()
	r := rendering{name: "chart-tls", namespace: deploy.Namespace, helm: true, values: map[string]any{
		"tlsSecrets": map[string]any{"namespaces": []any{"shop"}},
	}}
	r.objs = renderingObjects(t, r)
	if _, err := c.Client.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "shop"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := deploy.Apply(ctx, c.Client, deploy.RBACOf(r.objs)); err != nil {
		t.Fatal(err)
	}
	sa := saClient(t, c.ServiceAccountKubeconfig(t, r.namespace, deploy.ServiceAccount))
	get := named("", "secrets", "shop", "web-tls", "get")[0]
	if err := wait.PollUntilContextTimeout(ctx, 50*time.Millisecond, 30*time.Second, true,
		func(ctx context.Context) (bool, error) { return allowed(ctx, sa, get) }); err != nil {
		t.Fatalf("RBAC never allowed %s", get)
	}
	for _, a := range concat(
		verbs("", "secrets", "", "shop", "list", "watch", "create", "update", "delete"),
		named("", "secrets", "default", "web-tls", "get"),
		verbs("", "secrets", "", "", "get", "list"),
	) {
		if ok, err := allowed(ctx, sa, a); err != nil || ok {
			t.Errorf("allowed, but not needed: %s (%v)", a, err)
		}
	}
}

func checkAgainstAPIServer(t *testing.T, c *testcluster.Cluster, r rendering, leases []string) {
	ctx := t.Context()
	rbac := deploy.RBACOf(r.objs)
	for range 2 { // the second pass updates
		if err := deploy.Apply(ctx, c.Client, rbac); err != nil {
			t.Fatal(err)
		}
	}
	sa := saClient(t, c.ServiceAccountKubeconfig(t, r.namespace, deploy.ServiceAccount))
	need, deny := needed(r.namespace, leases), denied(r.namespace, leases)

	// The RBAC authorizer sees new bindings through an informer: wait for
	// them (the namespace's RoleBinding is the last one applied).
	for _, a := range []access{need[0], need[len(need)-1]} {
		err := wait.PollUntilContextTimeout(ctx, 50*time.Millisecond, 30*time.Second, true,
			func(ctx context.Context) (bool, error) { return allowed(ctx, sa, a) })
		if err != nil {
			t.Fatalf("RBAC never allowed %s", a)
		}
	}
	for _, a := range need {
		if ok, err := allowed(ctx, sa, a); err != nil || !ok {
			t.Errorf("denied, but the CCM needs: %s (%v)", a, err)
		}
	}
	for _, a := range deny {
		if ok, err := allowed(ctx, sa, a); err != nil || ok {
			t.Errorf("allowed, but not needed: %s (%v)", a, err)
		}
	}

	t.Run("everything passes server-side validation", func(t *testing.T) {
		if err := deploy.Apply(ctx, c.Client, r.objs); err != nil {
			t.Fatal(err)
		}
	})
}

// allowed asks the apiserver, as the client's own identity.
func allowed(ctx context.Context, client kubernetes.Interface, a access) (bool, error) {
	r := &authorizationv1.SelfSubjectAccessReview{Spec: authorizationv1.SelfSubjectAccessReviewSpec{
		ResourceAttributes: &authorizationv1.ResourceAttributes{
			Verb: a.verb, Group: a.group, Resource: a.resource, Subresource: a.sub, Namespace: a.ns, Name: a.name,
		},
	}}
	r, err := client.AuthorizationV1().SelfSubjectAccessReviews().Create(ctx, r, metav1.CreateOptions{})
	if err != nil {
		return false, err
	}
	return r.Status.Allowed, nil
}

func saClient(t *testing.T, kubeconfig string) kubernetes.Interface {
	t.Helper()
	cfg, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	cfg.QPS, cfg.Burst = 200, 200 // ~60 reviews; client-go's default 5 QPS would take 10 s
	client, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return client
}
