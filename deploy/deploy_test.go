package deploy_test

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/example/cloud-provider-example/ccm"
	"github.com/example/cloud-provider-example/deploy"
)

// Every file decodes with client-go's scheme, strictly, and every object is
// in kube-system (or cluster-scoped).
func TestFilesDecode(t *testing.T) {
	files, err := filepath.Glob("base/*.yaml")
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
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
			switch o.(type) {
			case *rbacv1.ClusterRole, *rbacv1.ClusterRoleBinding:
				if ns != "" {
					t.Errorf("%s: cluster-scoped %s has namespace %q", f, m.GetName(), ns)
				}
			default:
				if ns != "kube-system" {
					t.Errorf("%s: %T %s: namespace %q, want kube-system", f, o, m.GetName(), ns)
				}
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
}

func TestKustomizationListsEveryFile(t *testing.T) {
	k, err := deploy.ReadKustomization()
	if err != nil {
		t.Fatal(err)
	}
	files, _ := filepath.Glob("base/*")
	var want []string
	for _, f := range files {
		if b := filepath.Base(f); b != "kustomization.yaml" {
			want = append(want, b)
		}
	}
	got := slices.Sorted(slices.Values(k.Resources))
	if !slices.Equal(got, want) {
		t.Errorf("kustomization resources = %v, files = %v", got, want)
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

// The cloud config parses and every path in it is provided by the pod: a
// mount of the Deployment (with the Secret's keys) or the image (/opt/example,
// /usr/local/bin, see deploy/Dockerfile).
func TestCloudConfig(t *testing.T) {
	dep, cm, sec, _ := objects(t)
	data, ok := cm.Data["cloud-config.yaml"]
	if !ok {
		t.Fatal("ConfigMap lacks cloud-config.yaml")
	}
	cfg, err := ccm.LoadConfig([]byte(data))
	if err != nil {
		t.Fatal(err)
	}
	if cfg.State.Type != "kubernetes" || cfg.State.Kubernetes.Namespace != "kube-system" || !cfg.State.Kubernetes.InClusterConfig {
		t.Errorf("state = %+v, want kubernetes in kube-system, in-cluster", cfg.State)
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
		"--use-service-account-credentials=false",
		"--secure-port=10258",
	} {
		if !slices.Contains(c.Args, arg) {
			t.Errorf("args lack %s", arg)
		}
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
	var sa *corev1.ServiceAccount
	for _, o := range all {
		if o, ok := o.(*corev1.ServiceAccount); ok {
			sa = o
		}
	}
	if sa == nil || spec.ServiceAccountName != sa.Name {
		t.Errorf("serviceAccountName %q is not the base's ServiceAccount", spec.ServiceAccountName)
	}
}

// RBAC objects are the ServiceAccount, roles and bindings only; no rule uses
// a wildcard and every binding is for the CCM's ServiceAccount.
func TestRBACObjects(t *testing.T) {
	objs, err := deploy.RBACObjects()
	if err != nil {
		t.Fatal(err)
	}
	kinds := map[string]int{}
	for _, o := range objs {
		var rules []rbacv1.PolicyRule
		var subjects []rbacv1.Subject
		switch o := o.(type) {
		case *corev1.ServiceAccount:
			kinds["ServiceAccount"]++
		case *rbacv1.ClusterRole:
			kinds["ClusterRole"]++
			rules = o.Rules
		case *rbacv1.Role:
			kinds["Role"]++
			rules = o.Rules
		case *rbacv1.ClusterRoleBinding:
			kinds["ClusterRoleBinding"]++
			subjects = o.Subjects
		case *rbacv1.RoleBinding:
			kinds["RoleBinding"]++
			subjects = o.Subjects
		default:
			t.Errorf("unexpected %T", o)
		}
		for _, r := range rules {
			for _, s := range slices.Concat(r.APIGroups, r.Resources, r.Verbs) {
				if s == "*" {
					t.Errorf("%s: wildcard in rule %+v", o.(metav1.Object).GetName(), r)
				}
			}
		}
		for _, s := range subjects {
			if s != (rbacv1.Subject{Kind: "ServiceAccount", Name: "cloud-controller-manager", Namespace: "kube-system"}) {
				t.Errorf("%s: subject %+v", o.(metav1.Object).GetName(), s)
			}
		}
	}
	want := map[string]int{"ServiceAccount": 1, "ClusterRole": 1, "Role": 1, "ClusterRoleBinding": 2, "RoleBinding": 2}
	for k, n := range want {
		if kinds[k] != n {
			t.Errorf("%d %s, want %d", kinds[k], k, n)
		}
	}
}
