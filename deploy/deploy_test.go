package deploy_test

import (
	"context"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	admissionv1 "k8s.io/api/admissionregistration/v1"
	appsv1 "k8s.io/api/apps/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/yaml"

	"github.com/example/cloud-provider-example/ccm"
	"github.com/example/cloud-provider-example/cloudconfig"
	"github.com/example/cloud-provider-example/deploy"
	"github.com/example/cloud-provider-example/reviewapi"
)

// manifestFiles are the YAML files of the base and the components.
func manifestFiles(t *testing.T) []string {
	t.Helper()
	var files []string
	for _, pattern := range []string{"base/*.yaml", "components/*/*.yaml"} {
		f, err := filepath.Glob(pattern)
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, f...)
	}
	return files
}

// Every file decodes with client-go's scheme (and the CRD types), strictly;
// every object is cluster-scoped, in the controller's namespace, or in
// kube-system.yaml, and carries the app label.
func TestFilesDecode(t *testing.T) {
	for _, f := range manifestFiles(t) {
		if filepath.Base(f) == "kustomization.yaml" {
			continue
		}
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		objs, err := deploy.Decode(data)
		if err != nil {
			t.Errorf("%s: %v", f, err)
			continue
		}
		if len(objs) == 0 {
			t.Errorf("%s: no object", f)
		}
		for _, o := range objs {
			m := o.(metav1.Object)
			ns := m.GetNamespace()
			want := deploy.Namespace
			switch {
			case clusterScoped(o):
				want = ""
			case filepath.Base(f) == "kube-system.yaml":
				want = "kube-system"
			}
			if ns != want {
				t.Errorf("%s: %T %s: namespace %q, want %q", f, o, m.GetName(), ns, want)
			}
			if filepath.Dir(f) == filepath.Join("components", deploy.ReferenceGrants) {
				continue // upstream's, unchanged (TestReferenceGrantsComponent)
			}
			if m.GetLabels()["app.kubernetes.io/name"] != "example-cloud-controller-manager" {
				t.Errorf("%s: %s lacks label app.kubernetes.io/name", f, m.GetName())
			}
		}
	}
}

func TestDecodeIsStrict(t *testing.T) {
	_, err := deploy.Decode([]byte("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x}\ndat: {}\n"))
	if err == nil || !strings.Contains(err.Error(), "dat") {
		t.Errorf("unknown field: err = %v, want an error naming it", err)
	}
	crd := "apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nmetadata: {name: x}\nspec: {scop: Namespaced}\n"
	if _, err := deploy.Decode([]byte(crd)); err == nil || !strings.Contains(err.Error(), "scop") {
		t.Errorf("unknown CRD field: err = %v, want an error naming it", err)
	}
}

// Each kustomization lists exactly the files of its directory.
func TestKustomizationListsEveryFile(t *testing.T) {
	dirs, _ := filepath.Glob("components/*")
	for _, dir := range append([]string{"base"}, dirs...) {
		var k deploy.Kustomization
		data, err := os.ReadFile(filepath.Join(dir, "kustomization.yaml"))
		if err != nil {
			t.Fatal(err)
		}
		if err := yaml.Unmarshal(data, &k); err != nil {
			t.Fatalf("%s: %v", dir, err)
		}
		files, _ := filepath.Glob(filepath.Join(dir, "*"))
		var want []string
		for _, f := range files {
			if b := filepath.Base(f); b != "kustomization.yaml" {
				want = append(want, b)
			}
		}
		got := slices.Sorted(slices.Values(k.Resources))
		if !slices.Equal(got, want) {
			t.Errorf("%s: kustomization resources = %v, files = %v", dir, got, want)
		}
	}
}

// The service-author component is a Kustomize Component holding the policy
// the controller looks for, enforced.
func TestServiceAuthorComponent(t *testing.T) {
	objs, err := deploy.Component(deploy.ServiceAuthor)
	if err != nil {
		t.Fatal(err)
	}
	checkPolicyAndBinding(t, objs, reviewapi.AuthorAdmissionPolicy)
	if _, err := deploy.Component("nope"); err == nil || !strings.Contains(err.Error(), `"nope"`) {
		t.Errorf("unknown component: err = %v, want an error naming it", err)
	}
}

// The reference-grants component is Gateway API's ReferenceGrant CRD of the
// gateway-api module this controller reads ReferenceGrants with, byte for
// byte below its header.
func TestReferenceGrantsComponent(t *testing.T) {
	objs, err := deploy.Component(deploy.ReferenceGrants)
	if err != nil {
		t.Fatal(err)
	}
	if len(objs) != 1 {
		t.Fatalf("%d objects, want the CRD", len(objs))
	}
	out, err := exec.Command("go", "list", "-m", "-f", "{{.Dir}}", "sigs.k8s.io/gateway-api").Output()
	if err != nil {
		t.Fatalf("go list the gateway-api module: %v", err)
	}
	upstream, err := os.ReadFile(filepath.Join(strings.TrimSpace(string(out)), "config/crd/standard/gateway.networking.k8s.io_referencegrants.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	ours, err := os.ReadFile(filepath.Join("components", deploy.ReferenceGrants, "crd-referencegrants.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var body []string
	for _, line := range strings.SplitAfter(string(ours), "\n") {
		if len(body) > 0 || !strings.HasPrefix(line, "#") {
			body = append(body, line)
		}
	}
	if strings.Join(body, "") != string(upstream) {
		t.Error("components/reference-grants/crd-referencegrants.yaml is not the module's CRD: copy it again (its header says from where)")
	}
}

// objects returns the base's objects by type.
func objects(t *testing.T) (dep *appsv1.Deployment, cm *corev1.ConfigMap, sec *corev1.Secret, all []runtime.Object) {
	t.Helper()
	all, err := deploy.Objects()
	if err != nil {
		t.Fatal(err)
	}
	for _, o := range all {
		switch o := o.(type) {
		case *appsv1.Deployment:
			dep = o
		case *corev1.ConfigMap:
			cm = o
		case *corev1.Secret:
			sec = o
		}
	}
	if dep == nil || cm == nil || sec == nil {
		t.Fatal("base lacks the Deployment, ConfigMap or Secret")
	}
	return dep, cm, sec, all
}

// The cloud config parses, keeps everything in the controller's namespace,
// and every path in it is provided by the pod: a mount of the Deployment
// (with the Secret's keys) or the image (/opt/example, /usr/local/bin, see
// deploy/Dockerfile).
func TestCloudConfig(t *testing.T) {
	dep, cm, sec, _ := objects(t)
	data, ok := cm.Data["cloud-config.yaml"]
	if !ok {
		t.Fatal("ConfigMap lacks cloud-config.yaml")
	}
	cfg, err := cloudconfig.Load([]byte(data))
	if err != nil {
		t.Fatal(err)
	}
	if cfg.State.Type != "kubernetes" || cfg.State.Kubernetes.Namespace != deploy.Namespace || !cfg.State.Kubernetes.InClusterConfig {
		t.Errorf("state = %+v, want kubernetes in %s, in-cluster", cfg.State, deploy.Namespace)
	}
	if cfg.Review.Namespace != deploy.Namespace {
		t.Errorf("review.namespace = %q, want %q", cfg.Review.Namespace, deploy.Namespace)
	}
	c := dep.Spec.Template.Spec.Containers[0]
	mountOf := func(p string) *corev1.VolumeMount {
		for i, m := range c.VolumeMounts {
			if p == m.MountPath || strings.HasPrefix(p, m.MountPath+"/") {
				return &c.VolumeMounts[i]
			}
		}
		return nil
	}
	for _, tok := range []string{cfg.API.TokenFile, cfg.Metadata.TokenFile} {
		m := mountOf(tok)
		if m == nil || m.Name != "credentials" {
			t.Errorf("token file %s is not on the credentials mount", tok)
			continue
		}
		if _, ok := sec.StringData[filepath.Base(tok)]; !ok {
			t.Errorf("Secret %s lacks key %s (token file %s)", sec.Name, filepath.Base(tok), tok)
		}
	}
	if m := mountOf(cfg.Terraform.WorkDir); m == nil || m.ReadOnly {
		t.Errorf("terraform.workDir %s is not on a writable mount", cfg.Terraform.WorkDir)
	}
	for _, p := range []string{cfg.Terraform.Binary, cfg.Terraform.CLIConfig, cfg.Terraform.LockFile} {
		if !strings.HasPrefix(p, "/opt/example/") && !strings.HasPrefix(p, "/usr/local/bin/") {
			t.Errorf("%s is neither baked into the image nor mounted", p)
		}
	}
	if !slices.Contains(c.Args, "--cluster-name="+cfg.ClusterID) {
		t.Errorf("--cluster-name differs from clusterID %q: %v", cfg.ClusterID, c.Args)
	}
}

func TestDeployment(t *testing.T) {
	dep, cm, sec, all := objects(t)
	spec := dep.Spec.Template.Spec
	c := spec.Containers[0]
	for _, arg := range []string{
		"--cloud-provider=example",
		"--cloud-config=/etc/example/cloud-config.yaml",
		"--leader-elect=true",
		// The pre-created Lease, the only one the controller may use.
		"--leader-elect-resource-namespace=" + deploy.LeaderElectionNamespace,
		"--leader-elect-resource-name=" + deploy.LeaderElectionLease,
		"--use-service-account-credentials=false",
		"--secure-port=10258",
	} {
		if !slices.Contains(c.Args, arg) {
			t.Errorf("args lack %s", arg)
		}
	}
	if !slices.ContainsFunc(c.Env, func(e corev1.EnvVar) bool {
		return e.Name == "POD_NAMESPACE" && e.ValueFrom != nil && e.ValueFrom.FieldRef != nil &&
			e.ValueFrom.FieldRef.FieldPath == "metadata.namespace"
	}) {
		t.Error("no POD_NAMESPACE from the downward API")
	}
	if *dep.Spec.Replicas != 2 || spec.PriorityClassName != "system-cluster-critical" {
		t.Errorf("replicas %d, priorityClassName %q", *dep.Spec.Replicas, spec.PriorityClassName)
	}
	for _, key := range []string{"node.cloudprovider.kubernetes.io/uninitialized", "node-role.kubernetes.io/control-plane"} {
		if !slices.ContainsFunc(spec.Tolerations, func(tol corev1.Toleration) bool {
			return tol.Key == key && tol.Effect == corev1.TaintEffectNoSchedule
		}) {
			t.Errorf("no NoSchedule toleration for %s", key)
		}
	}
	sc := c.SecurityContext
	if sc == nil || !*sc.ReadOnlyRootFilesystem || *sc.AllowPrivilegeEscalation || spec.SecurityContext == nil || !*spec.SecurityContext.RunAsNonRoot {
		t.Error("want non-root, read-only root fs, no privilege escalation")
	}
	if p := c.LivenessProbe; p == nil || p.HTTPGet == nil || p.HTTPGet.Path != "/healthz" || p.HTTPGet.Port.IntValue() != 10258 || p.HTTPGet.Scheme != corev1.URISchemeHTTPS {
		t.Errorf("liveness probe = %+v, want HTTPS /healthz on 10258", p)
	}
	if c.Resources.Requests.Memory().IsZero() || c.Resources.Limits.Memory().IsZero() {
		t.Error("no memory request or limit")
	}
	for _, v := range spec.Volumes {
		if v.ConfigMap != nil && v.ConfigMap.Name != cm.Name {
			t.Errorf("volume %s: ConfigMap %s is not in the base", v.Name, v.ConfigMap.Name)
		}
		if v.Secret != nil && v.Secret.SecretName != sec.Name {
			t.Errorf("volume %s: Secret %s is not in the base", v.Name, v.Secret.SecretName)
		}
	}
	if sa := one[*corev1.ServiceAccount](t, all, deploy.ServiceAccount); spec.ServiceAccountName != sa.Name {
		t.Errorf("serviceAccountName %q is not the base's ServiceAccount", spec.ServiceAccountName)
	}
	if lease := one[*coordinationv1.Lease](t, all, deploy.LeaderElectionLease); lease.Namespace != deploy.LeaderElectionNamespace {
		t.Errorf("leader-election Lease = %v, want %s/%s pre-created", lease, deploy.LeaderElectionNamespace, deploy.LeaderElectionLease)
	}
}

// RBACOf keeps everything but the Deployment and what a cluster edits
// (cloud config, credentials) or only needs with pods (PDB); no rule uses a
// wildcard; the controller's bindings are for its ServiceAccount, the
// reviewers' include their group and no ServiceAccount.
func TestRBACObjects(t *testing.T) {
	forEachRendering(t, func(t *testing.T, r rendering) {
		objs := deploy.RBACOf(r.objs)
		kinds := map[string]int{}
		controller := rbacv1.Subject{Kind: "ServiceAccount", Name: deploy.ServiceAccount, Namespace: r.namespace}
		reviewers := rbacv1.Subject{Kind: "Group", APIGroup: rbacv1.GroupName, Name: deploy.ReviewersGroup}
		for _, o := range objs {
			kinds[kindOf(o)]++
			var rules []rbacv1.PolicyRule
			var subjects []rbacv1.Subject
			name := o.(metav1.Object).GetName()
			switch o := o.(type) {
			case *rbacv1.ClusterRole:
				rules = o.Rules
			case *rbacv1.Role:
				rules = o.Rules
			case *rbacv1.ClusterRoleBinding:
				subjects = o.Subjects
			case *rbacv1.RoleBinding:
				subjects = o.Subjects
			}
			for _, r := range rules {
				for _, s := range slices.Concat(r.APIGroups, r.Resources, r.Verbs) {
					if s == "*" {
						t.Errorf("%s: wildcard in rule %+v", name, r)
					}
				}
			}
			switch {
			case subjects == nil:
			case strings.HasPrefix(name, "example-ccm:reviewer"):
				if !slices.Contains(subjects, reviewers) || slices.ContainsFunc(subjects, func(s rbacv1.Subject) bool { return s.Kind == "ServiceAccount" }) {
					t.Errorf("%s: subjects %+v, want %+v and no ServiceAccount", name, subjects, reviewers)
				}
			case !slices.Equal(subjects, []rbacv1.Subject{controller}):
				t.Errorf("%s: subjects %+v, want %+v", name, subjects, controller)
			}
		}
		want := map[string]int{
			"Namespace": 1, "ServiceAccount": 1, "Lease": 1,
			"ClusterRole": 3, "Role": 3, "ClusterRoleBinding": 3, "RoleBinding": 4, // the third ClusterRole: example-ccm:tls-secrets, bound by nobody
			"CustomResourceDefinition": 3, "ValidatingAdmissionPolicy": 2, "ValidatingAdmissionPolicyBinding": 2,
		}
		for k, n := range want {
			if kinds[k] != n {
				t.Errorf("%d %s, want %d", kinds[k], k, n)
			}
		}
		for k := range kinds {
			if _, ok := want[k]; !ok {
				t.Errorf("unexpected %s", k)
			}
		}
		// Namespaced objects come after the Namespace: Apply goes in order.
		if _, ok := objs[0].(*corev1.Namespace); !ok {
			t.Errorf("first object is %T, want the Namespace", objs[0])
		}
		checkPolicyAndBinding(t, objs, reviewapi.AdmissionPolicy)
		checkPolicyAndBinding(t, objs, reviewapi.AuthorAdmissionPolicy)
	})
}

// The admission webhooks: a Service in front of every replica's webhook
// port, and the two configurations the controller injects its CA into,
// named and routed as the controller serves them (ccm.AuthorPath,
// ccm.PreviewPath), fail-open and side-effect free, without a caBundle (it
// is injected), and enabled in the cloud config.
func TestWebhooks(t *testing.T) {
	forEachRendering(t, webhooks)
}

// loadBalancerOnly is the match condition of both webhooks (as the e2e's
// installWebhooks).
const loadBalancerOnly = "object.spec.type == 'LoadBalancer' || (oldObject != null && oldObject.spec.type == 'LoadBalancer')"

func webhooks(t *testing.T, r rendering) {
	cfg := cloudConfig(t, r.objs)
	if !cfg.Webhook.Enabled || cfg.Webhook.Certificates.Mode != cloudconfig.CertificatesSelfManaged {
		t.Errorf("cloud config webhook %+v, want enabled, self-managed", cfg.Webhook)
	}
	dep, c := container(t, r.objs)
	svc := one[*corev1.Service](t, r.objs, cfg.Webhook.Certificates.ServiceName)
	_, port, err := net.SplitHostPort(cfg.Webhook.Address)
	if err != nil {
		t.Fatal(err)
	}
	if svc.Namespace != r.namespace || len(svc.Spec.Ports) != 1 || svc.Spec.Ports[0].Port != 443 || svc.Spec.Ports[0].TargetPort.String() != port {
		t.Errorf("Service %s/%s ports %+v, want 443 to %s in %s", svc.Namespace, svc.Name, svc.Spec.Ports, port, r.namespace)
	}
	if !reflect.DeepEqual(svc.Spec.Selector, dep.Spec.Template.Labels) {
		t.Errorf("Service selector %v, pod labels %v", svc.Spec.Selector, dep.Spec.Template.Labels)
	}
	if !slices.ContainsFunc(c.Ports, func(p corev1.ContainerPort) bool {
		return p.Name == "webhook" && strconv.Itoa(int(p.ContainerPort)) == port
	}) {
		t.Errorf("container ports %+v lack webhook %s", c.Ports, port)
	}

	check := func(kind, name string, cc admissionv1.WebhookClientConfig, path string, rules []admissionv1.RuleWithOperations,
		match []admissionv1.MatchCondition, fp *admissionv1.FailurePolicyType, se *admissionv1.SideEffectClass, timeout *int32, versions []string) {
		t.Helper()
		want := &admissionv1.ServiceReference{Namespace: r.namespace, Name: svc.Name, Path: &path, Port: ptr.To[int32](443)}
		if !reflect.DeepEqual(cc.Service, want) || cc.URL != nil || len(cc.CABundle) != 0 {
			t.Errorf("%s %s: clientConfig %+v, want service %+v, no caBundle", kind, name, cc, want)
		}
		wantRules := []admissionv1.RuleWithOperations{{
			Operations: []admissionv1.OperationType{admissionv1.Create, admissionv1.Update},
			Rule:       admissionv1.Rule{APIGroups: []string{""}, APIVersions: []string{"v1"}, Resources: []string{"services"}},
		}}
		if !reflect.DeepEqual(rules, wantRules) {
			t.Errorf("%s %s: rules %+v", kind, name, rules)
		}
		if len(match) != 1 || match[0].Expression != loadBalancerOnly {
			t.Errorf("%s %s: matchConditions %+v, want %q", kind, name, match, loadBalancerOnly)
		}
		if fp == nil || *fp != admissionv1.Ignore || se == nil || *se != admissionv1.SideEffectClassNone {
			t.Errorf("%s %s: failurePolicy %v, sideEffects %v, want Ignore (fail-open), None (dry runs)", kind, name, fp, se)
		}
		if timeout == nil || time.Duration(*timeout)*time.Second <= cfg.Webhook.PreviewBudget.Duration {
			t.Errorf("%s %s: timeoutSeconds %v, want above previewBudget %s", kind, name, timeout, cfg.Webhook.PreviewBudget.Duration)
		}
		if !slices.Equal(versions, []string{"v1"}) {
			t.Errorf("%s %s: admissionReviewVersions %v", kind, name, versions)
		}
	}
	m := one[*admissionv1.MutatingWebhookConfiguration](t, r.objs, cloudconfig.MutatingWebhookName)
	if len(m.Webhooks) != 1 || m.Webhooks[0].Name != "service-author.example.com" {
		t.Fatalf("%s: webhooks %+v, want service-author.example.com", m.Name, m.Webhooks)
	}
	w := m.Webhooks[0]
	check("MutatingWebhookConfiguration", m.Name, w.ClientConfig, ccm.AuthorPath, w.Rules, w.MatchConditions, w.FailurePolicy, w.SideEffects, w.TimeoutSeconds, w.AdmissionReviewVersions)
	if w.ReinvocationPolicy == nil || *w.ReinvocationPolicy != admissionv1.IfNeededReinvocationPolicy {
		t.Errorf("%s: reinvocationPolicy %v, want IfNeeded", m.Name, w.ReinvocationPolicy)
	}
	v := one[*admissionv1.ValidatingWebhookConfiguration](t, r.objs, cloudconfig.ValidatingWebhookName)
	if len(v.Webhooks) != 1 || v.Webhooks[0].Name != "service-preview.example.com" {
		t.Fatalf("%s: webhooks %+v, want service-preview.example.com", v.Name, v.Webhooks)
	}
	vw := v.Webhooks[0]
	check("ValidatingWebhookConfiguration", v.Name, vw.ClientConfig, ccm.PreviewPath, vw.Rules, vw.MatchConditions, vw.FailurePolicy, vw.SideEffects, vw.TimeoutSeconds, vw.AdmissionReviewVersions)
}

// updateObject reads the object name, changes it with set and writes it
// back, as another writer would.
func updateObject[T any](t *testing.T, client interface {
	Get(ctx context.Context, name string, opts metav1.GetOptions) (T, error)
	Update(ctx context.Context, obj T, opts metav1.UpdateOptions) (T, error)
}, name string, set func(T)) {
	t.Helper()
	obj, err := client.Get(t.Context(), name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	set(obj)
	if _, err := client.Update(t.Context(), obj, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
}

// Re-applying the webhook configurations keeps the CA bundle the
// controller (or cert-manager) injected: the manifests carry none.
func TestApplyKeepsInjectedCABundle(t *testing.T) {
	_, _, _, all := objects(t)
	var hooks []runtime.Object
	for _, o := range all {
		switch o.(type) {
		case *admissionv1.MutatingWebhookConfiguration, *admissionv1.ValidatingWebhookConfiguration:
			hooks = append(hooks, o)
		}
	}
	client := fake.NewClientset()
	if err := deploy.Apply(t.Context(), client, hooks); err != nil {
		t.Fatal(err)
	}
	api := client.AdmissionregistrationV1()
	ca := []byte("injected CA")
	updateObject(t, api.MutatingWebhookConfigurations(), cloudconfig.MutatingWebhookName,
		func(m *admissionv1.MutatingWebhookConfiguration) { m.Webhooks[0].ClientConfig.CABundle = ca })
	updateObject(t, api.ValidatingWebhookConfigurations(), cloudconfig.ValidatingWebhookName,
		func(v *admissionv1.ValidatingWebhookConfiguration) { v.Webhooks[0].ClientConfig.CABundle = ca })

	if err := deploy.Apply(t.Context(), client, hooks); err != nil {
		t.Fatal(err)
	}
	m, _ := api.MutatingWebhookConfigurations().Get(t.Context(), cloudconfig.MutatingWebhookName, metav1.GetOptions{})
	v, _ := api.ValidatingWebhookConfigurations().Get(t.Context(), cloudconfig.ValidatingWebhookName, metav1.GetOptions{})
	if string(m.Webhooks[0].ClientConfig.CABundle) != string(ca) || string(v.Webhooks[0].ClientConfig.CABundle) != string(ca) {
		t.Errorf("caBundles after re-applying: %q and %q, want %q kept", m.Webhooks[0].ClientConfig.CABundle, v.Webhooks[0].ClientConfig.CABundle, ca)
	}
}
