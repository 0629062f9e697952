package webhook

import (
	"net"
	"testing"
	"time"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/example/cloud-provider-example/internal/testcluster"
	"github.com/example/cloud-provider-example/internal/testkit"
)

// With a resync far beyond the test, only the watch can inject: into
// configurations created after the controller started, and again into one
// written back without its caBundle (a chart upgrade). The controller
// runs as a user granted what the shipped ClusterRole grants: its own
// configurations by resourceNames, list and watch included.
func testInjectOnChange(t *testing.T, c *testcluster.Cluster) {
	ctx := t.Context()
	const name, user = "example-ccm-watched", "webhook-watcher"
	client := restrictedClient(t, c, user, name)
	sm, err := NewSelfManaged(SelfManagedOptions{
		Client: client, Namespace: testNS, SecretName: "webhook-watched", ExtraIPs: []net.IP{net.ParseIP("127.0.0.1")},
		MutatingConfigs: []string{name}, ValidatingConfigs: []string{name}, Resync: time.Hour,
	})
	if err != nil {
		t.Fatal(err)
	}
	runDone := make(chan error, 1)
	go func() { runDone <- sm.Run(ctx) }()
	t.Cleanup(func() {
		if err := <-runDone; err != nil {
			t.Errorf("Run: %v", err)
		}
	})
	select {
	case <-sm.Ready():
	case <-time.After(30 * time.Second):
		t.Fatal("no certificate loaded")
	}

	// Nothing serves this address: the configurations select a namespace
	// without Services, so the API server never calls them.
	createConfigs(t, c.Client, name, "127.0.0.1:1", "webhook-watched-none")
	t.Cleanup(func() {
		api := c.Client.AdmissionregistrationV1()
		_ = api.MutatingWebhookConfigurations().Delete(t.Context(), name, metav1.DeleteOptions{})
		_ = api.ValidatingWebhookConfigurations().Delete(t.Context(), name, metav1.DeleteOptions{})
	})
	testkit.EventuallyEvery(t, 45*time.Second, 100*time.Millisecond, "caBundle injection into new configurations", func() error { return injected(t, c.Client, name, sm.CABundle()) })

	api := c.Client.AdmissionregistrationV1().ValidatingWebhookConfigurations()
	v, err := api.Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	v.Webhooks[0].ClientConfig.CABundle = nil
	if _, err := api.Update(ctx, v, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	testkit.EventuallyEvery(t, 45*time.Second, 100*time.Millisecond, "caBundle injection into a configuration written back without it", func() error {
		return injected(t, c.Client, name, sm.CABundle())
	})
}

// restrictedClient acts as user, granted the webhook configurations named
// name as the shipped ClusterRole grants the controller its own, and the
// Secrets of testNS.
func restrictedClient(t *testing.T, c *testcluster.Cluster, user, name string) kubernetes.Interface {
	t.Helper()
	ctx := t.Context()
	rbac := c.Client.RbacV1()
	subjects := []rbacv1.Subject{{Kind: rbacv1.UserKind, APIGroup: rbacv1.GroupName, Name: user}}
	if _, err := rbac.ClusterRoles().Create(ctx, &rbacv1.ClusterRole{
		ObjectMeta: metav1.ObjectMeta{Name: user},
		Rules: []rbacv1.PolicyRule{{
			APIGroups:     []string{admissionregistrationv1.GroupName},
			Resources:     []string{"mutatingwebhookconfigurations", "validatingwebhookconfigurations"},
			ResourceNames: []string{name}, Verbs: []string{"get", "list", "watch", "update"},
		}},
	}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := rbac.ClusterRoleBindings().Create(ctx, &rbacv1.ClusterRoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: user}, Subjects: subjects,
		RoleRef: rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: user},
	}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := rbac.Roles(testNS).Create(ctx, &rbacv1.Role{
		ObjectMeta: metav1.ObjectMeta{Name: user},
		Rules:      []rbacv1.PolicyRule{{APIGroups: []string{""}, Resources: []string{"secrets"}, Verbs: []string{"get", "create", "update"}}},
	}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := rbac.RoleBindings(testNS).Create(ctx, &rbacv1.RoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: user}, Subjects: subjects,
		RoleRef: rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: user},
	}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	cfg := rest.CopyConfig(c.Admin)
	cfg.Impersonate = rest.ImpersonationConfig{UserName: user}
	client := kubernetes.NewForConfigOrDie(cfg)
	// Bindings take effect when the API server's RBAC cache has them.
	testkit.EventuallyEvery(t, 45*time.Second, 100*time.Millisecond, user+"'s RBAC in force", func() error {
		_, err := client.AdmissionregistrationV1().MutatingWebhookConfigurations().List(ctx, metav1.ListOptions{FieldSelector: "metadata.name=" + name})
		return err
	})
	return client
}
