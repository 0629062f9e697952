package testcluster_test

import (
	"context"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/example/cloud-provider-example/internal/testcluster"
	"github.com/example/cloud-provider-example/internal/testsize"
)

func TestMain(m *testing.M) { os.Exit(testcluster.Main(m)) }

// Tests asking for the shared control plane get the one the first of
// them started, and each its own namespace, named after the test.
func TestShared(t *testing.T) {
	var first *testcluster.Cluster
	seen := map[string]bool{}
	for _, name := range []string{"one", "Two/with spaces"} {
		t.Run(name, func(t *testing.T) {
			c := testcluster.Shared(t)
			if first == nil {
				first = c
			}
			if c != first {
				t.Fatal("a second control plane")
			}
			ns := c.Namespace(t)
			want := regexp.MustCompile(`^shared-` + regexp.QuoteMeta(strings.ToLower(strings.NewReplacer("/", "-", " ", "-").Replace(name))) + `-[a-z0-9]{5}$`)
			if !want.MatchString(ns) || seen[ns] {
				t.Fatalf("namespace %q: want one of its own matching %s", ns, want)
			}
			seen[ns] = true
			if _, err := c.Client.CoreV1().Namespaces().Get(t.Context(), ns, metav1.GetOptions{}); err != nil {
				t.Fatal(err)
			}
		})
	}
}

func TestCluster(t *testing.T) {
	start := time.Now()
	c := testcluster.Start(t, testcluster.WithUser("alice", "team-a:readers", "auditors"))
	t.Logf("started in %s", time.Since(start).Round(time.Millisecond))
	ctx := t.Context()

	t.Run("version", func(t *testing.T) {
		// hack/control-plane.sh's default, or what K8S_VERSION names.
		want := os.Getenv("K8S_VERSION")
		if want == "" {
			want = controlPlaneDefault(t)
		}
		if c.Version != want {
			t.Errorf("kube-apiserver %s, want %s", c.Version, want)
		}
	})

	t.Run("admin kubeconfig", func(t *testing.T) {
		client := clientFrom(t, c.AdminKubeconfig)
		// Read by the CCM's delegated authentication, as in a real cluster.
		if _, err := client.CoreV1().ConfigMaps("kube-system").Get(ctx, "extension-apiserver-authentication", metav1.GetOptions{}); err != nil {
			t.Fatal(err)
		}
	})

	t.Run("node and LoadBalancer service", func(t *testing.T) {
		node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "node-a"}}
		if _, err := c.Client.CoreV1().Nodes().Create(ctx, node, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		svc := &corev1.Service{
			ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "default"},
			Spec: corev1.ServiceSpec{
				Type:     corev1.ServiceTypeLoadBalancer,
				Selector: map[string]string{"app": "web"},
				Ports:    []corev1.ServicePort{{Name: "http", Port: 80, TargetPort: intstr.FromInt32(8080)}},
			},
		}
		got, err := c.Client.CoreV1().Services("default").Create(ctx, svc, metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		// The e2e relies on the apiserver allocating nodePorts and a ClusterIP.
		if np := got.Spec.Ports[0].NodePort; np < 30000 || np > 39999 {
			t.Errorf("nodePort = %d, want one allocated in 30000-39999 (--service-node-port-range)", np)
		}
		if got.Spec.ClusterIP == "" || got.Spec.ClusterIP == corev1.ClusterIPNone {
			t.Errorf("clusterIP = %q, want one allocated", got.Spec.ClusterIP)
		}
	})

	t.Run("service account RBAC", func(t *testing.T) {
		sa := clientFrom(t, c.ServiceAccountKubeconfig(t, "team-a", "reader"))
		listSecrets := func(ctx context.Context) error {
			_, err := sa.CoreV1().Secrets("team-a").List(ctx, metav1.ListOptions{})
			return err
		}
		if err := listSecrets(ctx); !apierrors.IsForbidden(err) {
			t.Fatalf("list secrets without RBAC: err = %v, want Forbidden", err)
		}
		bindSecretReader(t, c.Client, "team-a", "reader")
		// The RBAC authorizer reads bindings through an informer: poll.
		err := wait.PollUntilContextTimeout(ctx, 50*time.Millisecond, 10*time.Second, true,
			func(ctx context.Context) (bool, error) { return listSecrets(ctx) == nil, nil })
		if err != nil {
			t.Fatalf("list secrets after RoleBinding: %v", listSecrets(ctx))
		}
		if _, err := sa.CoreV1().Secrets("default").List(ctx, metav1.ListOptions{}); !apierrors.IsForbidden(err) {
			t.Errorf("list secrets in another namespace: err = %v, want Forbidden", err)
		}
	})

	t.Run("static token user and group RBAC", func(t *testing.T) {
		alice := clientFrom(t, c.UserKubeconfig(t, "alice"))
		who, err := alice.AuthenticationV1().SelfSubjectReviews().Create(ctx, &authenticationv1.SelfSubjectReview{}, metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		u := who.Status.UserInfo
		if u.Username != "alice" || !slices.Contains(u.Groups, "team-a:readers") || !slices.Contains(u.Groups, "auditors") {
			t.Errorf("authenticated as %+v, want alice in team-a:readers and auditors", u)
		}
		ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "team-b"}}
		if _, err := c.Client.CoreV1().Namespaces().Create(ctx, ns, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		listSecrets := func(ctx context.Context) error {
			_, err := alice.CoreV1().Secrets("team-b").List(ctx, metav1.ListOptions{})
			return err
		}
		if err := listSecrets(ctx); !apierrors.IsForbidden(err) {
			t.Fatalf("list secrets without RBAC: err = %v, want Forbidden", err)
		}
		bind(t, c.Client, "team-b", "group-secret-reader", rbacv1.Subject{Kind: rbacv1.GroupKind, APIGroup: rbacv1.GroupName, Name: "team-a:readers"})
		err = wait.PollUntilContextTimeout(ctx, 50*time.Millisecond, 10*time.Second, true,
			func(ctx context.Context) (bool, error) { return listSecrets(ctx) == nil, nil })
		if err != nil {
			t.Fatalf("list secrets after RoleBinding to the group: %v", listSecrets(ctx))
		}
		if _, err := c.WriteUserKubeconfig("bob"); err == nil {
			t.Error("kubeconfig for an undeclared user: no error")
		}
	})

	t.Run("close", func(t *testing.T) {
		c.Stop()
		c.Stop() // idempotent
		if _, err := c.Client.CoreV1().Namespaces().List(ctx, metav1.ListOptions{}); err == nil {
			t.Error("apiserver still answers after Stop")
		}
	})
}

func TestRunWithoutTesting(t *testing.T) {
	testsize.SkipShort(t, "starts a second control plane")
	c, err := testcluster.Run(t.Context(), testcluster.Options{})
	if err != nil {
		t.Fatal(err)
	}
	dir := c.Dir
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := clientcmd.LoadFromFile(dir + "/admin.kubeconfig"); err == nil {
		t.Errorf("Close left the temp dir %s behind", dir)
	}
}

func bindSecretReader(t *testing.T, client kubernetes.Interface, ns, sa string) {
	t.Helper()
	bind(t, client, ns, "secret-reader", rbacv1.Subject{Kind: rbacv1.ServiceAccountKind, Namespace: ns, Name: sa})
}

// bind grants subject list on Secrets in ns, with a Role and RoleBinding
// called name.
func bind(t *testing.T, client kubernetes.Interface, ns, name string, subject rbacv1.Subject) {
	t.Helper()
	role := &rbacv1.Role{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns},
		Rules:      []rbacv1.PolicyRule{{APIGroups: []string{""}, Resources: []string{"secrets"}, Verbs: []string{"list"}}},
	}
	binding := &rbacv1.RoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: role.Name},
		Subjects:   []rbacv1.Subject{subject},
	}
	if _, err := client.RbacV1().Roles(ns).Create(t.Context(), role, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := client.RbacV1().RoleBindings(ns).Create(t.Context(), binding, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
}

func clientFrom(t *testing.T, kubeconfig string) kubernetes.Interface {
	t.Helper()
	cfg, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	client, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return client
}

// controlPlaneDefault is K8S_VERSION's default in hack/control-plane.sh.
func controlPlaneDefault(t *testing.T) string {
	t.Helper()
	script, err := os.ReadFile("../../hack/control-plane.sh")
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`(?m)^default_version=(v[0-9.]+)$`).FindSubmatch(script)
	if m == nil || !regexp.MustCompile(`(?m)^K8S_VERSION=\$\{K8S_VERSION:-\$default_version\}$`).Match(script) {
		t.Fatal("hack/control-plane.sh sets no K8S_VERSION default (default_version)")
	}
	return string(m[1])
}
