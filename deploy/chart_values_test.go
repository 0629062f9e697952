package deploy_test

import (
	"reflect"
	"slices"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/example/cloud-provider-example/cloudconfig"
	"github.com/example/cloud-provider-example/deploy"
)

const deploymentName = "example-cloud-controller-manager"

// container is the controller's container.
func container(t *testing.T, objs []runtime.Object) (*appsv1.Deployment, *corev1.Container) {
	t.Helper()
	dep := one[*appsv1.Deployment](t, objs, deploymentName)
	return dep, &dep.Spec.Template.Spec.Containers[0]
}

// cloudConfig parses the rendered cloud config as the controller does.
func cloudConfig(t *testing.T, objs []runtime.Object) *cloudconfig.Config {
	t.Helper()
	cm := one[*corev1.ConfigMap](t, objs, "example-cloud-config")
	cfg, err := cloudconfig.Load([]byte(cm.Data["cloud-config.yaml"]))
	if err != nil {
		t.Fatalf("%v\n%s", err, cm.Data["cloud-config.yaml"])
	}
	return cfg
}

// fileOnSecretMount: path is a file of the Secret secret, mounted in the
// container, with that key.
func fileOnSecretMount(t *testing.T, dep *appsv1.Deployment, c *corev1.Container, path, secret string) {
	t.Helper()
	for _, m := range c.VolumeMounts {
		if !strings.HasPrefix(path, m.MountPath+"/") {
			continue
		}
		for _, v := range dep.Spec.Template.Spec.Volumes {
			if v.Name == m.Name && v.Secret != nil && v.Secret.SecretName == secret && m.ReadOnly {
				return
			}
		}
	}
	t.Errorf("%s is not on a read-only mount of Secret %q", path, secret)
}

// Non-default values, each rendered and decoded, then checked where they
// land.
func TestChartValues(t *testing.T) {
	for _, c := range []struct {
		name   string
		values map[string]any
		check  func(t *testing.T, objs []runtime.Object)
	}{
		{"image, replicas, resources, flags", map[string]any{
			"image":     map[string]any{"repository": "registry.corp/ccm", "tag": "v9.1", "pullPolicy": "Always"},
			"replicas":  3,
			"resources": map[string]any{"requests": map[string]any{"cpu": "1", "memory": "512Mi"}, "limits": map[string]any{"memory": "2Gi"}},
			"controller": map[string]any{"configureCloudRoutes": false, "clusterCIDR": "", "concurrentServiceSyncs": 16,
				"kubeAPIQPS": 7.5, "verbosity": 4, "extraArgs": []any{"--node-monitor-period=10s"}},
			"cloudConfig":    map[string]any{"clusterID": "prod"},
			"podAnnotations": map[string]any{"example.com/team": "platform"},
			"nodeSelector":   map[string]any{"kubernetes.io/os": "linux"},
		}, func(t *testing.T, objs []runtime.Object) {
			dep, c := container(t, objs)
			if c.Image != "registry.corp/ccm:v9.1" || c.ImagePullPolicy != corev1.PullAlways {
				t.Errorf("image %q, pull policy %q", c.Image, c.ImagePullPolicy)
			}
			if *dep.Spec.Replicas != 3 {
				t.Errorf("replicas %d", *dep.Spec.Replicas)
			}
			if !c.Resources.Requests.Cpu().Equal(resource.MustParse("1")) || !c.Resources.Limits.Memory().Equal(resource.MustParse("2Gi")) {
				t.Errorf("resources %+v", c.Resources)
			}
			for _, arg := range []string{"--configure-cloud-routes=false", "--cluster-name=prod", "--concurrent-service-syncs=16",
				"--kube-api-qps=7.5", "--kube-api-burst=100", "--v=4"} {
				if !slices.Contains(c.Args, arg) {
					t.Errorf("args lack %s: %v", arg, c.Args)
				}
			}
			if c.Args[len(c.Args)-1] != "--node-monitor-period=10s" {
				t.Errorf("extra args not appended: %v", c.Args)
			}
			if slices.ContainsFunc(c.Args, func(a string) bool { return strings.HasPrefix(a, "--cluster-cidr") }) {
				t.Errorf("empty clusterCIDR still passed: %v", c.Args)
			}
			p := dep.Spec.Template
			if p.Annotations["example.com/team"] != "platform" || p.Spec.NodeSelector["kubernetes.io/os"] != "linux" {
				t.Errorf("pod annotations %v, node selector %v", p.Annotations, p.Spec.NodeSelector)
			}
			if cfg := cloudConfig(t, objs); cfg.ClusterID != "prod" {
				t.Errorf("clusterID %q", cfg.ClusterID)
			}
			one[*policyv1.PodDisruptionBudget](t, objs, deploymentName)
		}},

		{"namespace", map[string]any{"namespace": map[string]any{"name": "ccm-prod"}}, func(t *testing.T, objs []runtime.Object) {
			ns := one[*corev1.Namespace](t, objs, "ccm-prod")
			if ns.Labels["pod-security.kubernetes.io/enforce"] != "privileged" {
				t.Errorf("namespace labels %v", ns.Labels)
			}
			for _, o := range objs {
				m, _ := meta.Accessor(o)
				if n := m.GetNamespace(); n != "" && n != "ccm-prod" && n != "kube-system" {
					t.Errorf("%s %s in %q", kindOf(o), m.GetName(), n)
				}
			}
			for _, b := range find[*rbacv1.RoleBinding](objs) {
				for _, s := range b.Subjects {
					if s.Kind == rbacv1.ServiceAccountKind && s.Namespace != "ccm-prod" {
						t.Errorf("RoleBinding %s/%s: subject %+v", b.Namespace, b.Name, s)
					}
				}
			}
			cfg := cloudConfig(t, objs)
			if cfg.State.Kubernetes.Namespace != "ccm-prod" || cfg.Review.Namespace != "ccm-prod" {
				t.Errorf("state %+v, review namespace %q", cfg.State.Kubernetes, cfg.Review.Namespace)
			}
		}},

		{"namespace not created", map[string]any{"namespace": map[string]any{"create": false}}, func(t *testing.T, objs []runtime.Object) {
			none[*corev1.Namespace](t, objs)
		}},

		{"pg backend", map[string]any{
			"state": map[string]any{"type": "pg", "credentialsSecret": "ccm-pg", "pg": map[string]any{"schemaName": "ccm"}, "keyTemplate": "{{.Cluster}}-{{.Name}}"},
		}, func(t *testing.T, objs []runtime.Object) {
			cfg := cloudConfig(t, objs)
			if cfg.State.Type != "pg" || cfg.State.PG.SchemaName != "ccm" || cfg.State.KeyTemplate != "{{.Cluster}}-{{.Name}}" || cfg.State.Kubernetes != nil {
				t.Errorf("state %+v, pg %+v", cfg.State, cfg.State.PG)
			}
			dep, c := container(t, objs)
			fileOnSecretMount(t, dep, c, cfg.State.PG.ConnStrFile, "ccm-pg")
			// No kubernetes backend, no lock Leases: the Role has none.
			for _, r := range one[*rbacv1.Role](t, objs, "example-cloud-controller-manager").Rules {
				if slices.Contains(r.Resources, "leases") {
					t.Errorf("Role grants leases without the kubernetes backend: %+v", r)
				}
			}
		}},

		{"http backend", map[string]any{
			"state": map[string]any{"type": "http", "credentialsSecret": "ccm-http", "http": map[string]any{"address": "https://tf.corp/state"}},
		}, func(t *testing.T, objs []runtime.Object) {
			cfg := cloudConfig(t, objs)
			h := cfg.State.HTTP
			if h == nil || h.Address != "https://tf.corp/state" || h.SkipCertVerification {
				t.Fatalf("http %+v", h)
			}
			dep, c := container(t, objs)
			fileOnSecretMount(t, dep, c, h.UsernameFile, "ccm-http")
			fileOnSecretMount(t, dep, c, h.PasswordFile, "ccm-http")
		}},

		{"s3 backend", map[string]any{
			"state": map[string]any{"type": "s3", "credentialsSecret": "ccm-aws", "s3": map[string]any{"bucket": "states", "region": "eu-1", "usePathStyle": true}},
		}, func(t *testing.T, objs []runtime.Object) {
			cfg := cloudConfig(t, objs)
			want := &struct{ Bucket, Region, KeyPrefix string }{"states", "eu-1", ""}
			if s := cfg.State.S3; s == nil || s.Bucket != want.Bucket || s.Region != want.Region || s.KeyPrefix != "" || !s.UsePathStyle {
				t.Errorf("s3 %+v", cfg.State.S3)
			}
			_, c := container(t, objs)
			if len(c.EnvFrom) != 1 || c.EnvFrom[0].SecretRef == nil || c.EnvFrom[0].SecretRef.Name != "ccm-aws" {
				t.Errorf("envFrom %+v, want Secret ccm-aws", c.EnvFrom)
			}
		}},

		{"existing cloud config and credentials", map[string]any{
			"cloudConfig": map[string]any{"existingConfigMap": "my-config"},
			"credentials": map[string]any{"existingSecret": "my-creds"},
		}, func(t *testing.T, objs []runtime.Object) {
			none[*corev1.ConfigMap](t, objs)
			none[*corev1.Secret](t, objs)
			dep, _ := container(t, objs)
			var names []string
			for _, v := range dep.Spec.Template.Spec.Volumes {
				switch {
				case v.ConfigMap != nil:
					names = append(names, v.ConfigMap.Name)
				case v.Secret != nil:
					names = append(names, v.Secret.SecretName)
				}
			}
			if !reflect.DeepEqual(names, []string{"my-config", "my-creds"}) {
				t.Errorf("volumes from %v, want my-config, my-creds", names)
			}
		}},

		{"cloud config fields", map[string]any{
			"cloudConfig": map[string]any{
				"api":          map[string]any{"endpoint": "https://api.corp", "tokenFile": "/elsewhere"},
				"terraform":    map[string]any{"applyPolicy": "manual"},
				"loadBalancer": map[string]any{"defaultType": "lb-large"},
				"review":       map[string]any{"approvals": map[string]any{"required": 2}, "namespace": "elsewhere"},
			},
		}, func(t *testing.T, objs []runtime.Object) {
			cfg := cloudConfig(t, objs)
			if cfg.API.Endpoint != "https://api.corp" || cfg.Terraform.ApplyPolicy != "manual" || cfg.LoadBalancer.DefaultType != "lb-large" || cfg.Review.Approvals.Required != 2 {
				t.Errorf("config %+v", cfg)
			}
			// Merged with the defaults, and what the chart owns stays its own.
			if cfg.Terraform.WorkDir != "/var/lib/example-ccm/terraform" || cfg.Review.Keep != 10 {
				t.Errorf("defaults lost: workDir %q, keep %d", cfg.Terraform.WorkDir, cfg.Review.Keep)
			}
			if cfg.API.TokenFile != "/etc/example/credentials/token" || cfg.Review.Namespace != deploy.Namespace {
				t.Errorf("tokenFile %q, review namespace %q: the chart's own", cfg.API.TokenFile, cfg.Review.Namespace)
			}
		}},

		{"no RBAC, existing ServiceAccount", map[string]any{
			"rbac":           map[string]any{"create": false},
			"serviceAccount": map[string]any{"create": false, "name": "ccm"},
		}, func(t *testing.T, objs []runtime.Object) {
			none[*rbacv1.ClusterRole](t, objs)
			none[*rbacv1.ClusterRoleBinding](t, objs)
			none[*rbacv1.Role](t, objs)
			none[*rbacv1.RoleBinding](t, objs)
			none[*corev1.ServiceAccount](t, objs)
			if dep, _ := container(t, objs); dep.Spec.Template.Spec.ServiceAccountName != "ccm" {
				t.Errorf("serviceAccountName %q", dep.Spec.Template.Spec.ServiceAccountName)
			}
			one[*coordinationv1.Lease](t, objs, deploy.LeaderElectionLease) // the controller cannot create it
		}},

		{"ServiceAccount name", map[string]any{"serviceAccount": map[string]any{"name": "ccm", "annotations": map[string]any{"a": "b"}}},
			func(t *testing.T, objs []runtime.Object) {
				if sa := one[*corev1.ServiceAccount](t, objs, "ccm"); sa.Annotations["a"] != "b" {
					t.Errorf("annotations %v", sa.Annotations)
				}
				want := rbacv1.Subject{Kind: rbacv1.ServiceAccountKind, Name: "ccm", Namespace: deploy.Namespace}
				for _, b := range find[*rbacv1.ClusterRoleBinding](objs) {
					if b.Name != "example-ccm:reviewer" && !slices.Equal(b.Subjects, []rbacv1.Subject{want}) {
						t.Errorf("ClusterRoleBinding %s: subjects %+v", b.Name, b.Subjects)
					}
				}
			}},

		{"one replica without leader election", map[string]any{"replicas": 1, "leaderElection": map[string]any{"enabled": false}},
			func(t *testing.T, objs []runtime.Object) {
				none[*coordinationv1.Lease](t, objs)
				none[*policyv1.PodDisruptionBudget](t, objs)
				for _, r := range find[*rbacv1.Role](objs) {
					if r.Name == "example-cloud-controller-manager:leader-election" {
						t.Errorf("leader-election Role rendered")
					}
				}
				_, c := container(t, objs)
				if !slices.Contains(c.Args, "--leader-elect=false") ||
					slices.ContainsFunc(c.Args, func(a string) bool { return strings.HasPrefix(a, "--leader-elect-resource") }) {
					t.Errorf("args %v", c.Args)
				}
			}},

		{"leader election elsewhere", map[string]any{"leaderElection": map[string]any{"namespace": "ccm-system", "leaseName": "ccm"}},
			func(t *testing.T, objs []runtime.Object) {
				lease := one[*coordinationv1.Lease](t, objs, "ccm")
				role := one[*rbacv1.Role](t, objs, "example-cloud-controller-manager:leader-election")
				if lease.Namespace != "ccm-system" || role.Namespace != "ccm-system" || !slices.Equal(role.Rules[0].ResourceNames, []string{"ccm"}) {
					t.Errorf("Lease in %q, Role in %q with %+v", lease.Namespace, role.Namespace, role.Rules)
				}
				_, c := container(t, objs)
				if !slices.Contains(c.Args, "--leader-elect-resource-namespace=ccm-system") || !slices.Contains(c.Args, "--leader-elect-resource-name=ccm") {
					t.Errorf("args %v", c.Args)
				}
			}},

		{"reviewers", map[string]any{"reviewers": map[string]any{"groups": []any{"platform-oncall"}, "users": []any{"alice@example.com"}}},
			func(t *testing.T, objs []runtime.Object) {
				want := []rbacv1.Subject{
					{APIGroup: rbacv1.GroupName, Kind: rbacv1.GroupKind, Name: "platform-oncall"},
					{APIGroup: rbacv1.GroupName, Kind: rbacv1.UserKind, Name: "alice@example.com"},
				}
				crb := one[*rbacv1.ClusterRoleBinding](t, objs, "example-ccm:reviewer")
				rb := one[*rbacv1.RoleBinding](t, objs, "example-ccm:reviewer")
				if !slices.Equal(crb.Subjects, want) || !slices.Equal(rb.Subjects, want) {
					t.Errorf("subjects %+v and %+v, want %+v", crb.Subjects, rb.Subjects, want)
				}
			}},

		{"TLS Secrets of two namespaces", map[string]any{"tlsSecrets": map[string]any{"namespaces": []any{"shop", "web"}}},
			func(t *testing.T, objs []runtime.Object) {
				role := one[*rbacv1.ClusterRole](t, objs, "example-ccm:tls-secrets")
				if len(role.Rules) != 1 || !slices.Equal(role.Rules[0].Verbs, []string{"get"}) || !slices.Equal(role.Rules[0].Resources, []string{"secrets"}) {
					t.Errorf("rules %+v, want get secrets only", role.Rules)
				}
				var in []string
				for _, b := range find[*rbacv1.RoleBinding](objs) {
					if b.Name != "example-ccm:tls-secrets" {
						continue
					}
					in = append(in, b.Namespace)
					if b.RoleRef.Name != "example-ccm:tls-secrets" || len(b.Subjects) != 1 || b.Subjects[0].Name != "cloud-controller-manager" {
						t.Errorf("binding in %s: %+v %+v", b.Namespace, b.RoleRef, b.Subjects)
					}
				}
				if !slices.Equal(in, []string{"shop", "web"}) {
					t.Errorf("bindings in %v, want shop and web", in)
				}
			}},

		{"no reviewers", map[string]any{"reviewers": map[string]any{"groups": []any{}}},
			func(t *testing.T, objs []runtime.Object) {
				// The roles stay (bind them yourself); no binding without subjects.
				one[*rbacv1.Role](t, objs, "example-ccm:reviewer")
				for _, b := range find[*rbacv1.RoleBinding](objs) {
					if b.Name == "example-ccm:reviewer" {
						t.Error("reviewer RoleBinding without subjects")
					}
				}
			}},
	} {
		t.Run(c.name, func(t *testing.T) {
			c.check(t, renderChart(t, c.values))
		})
	}
}
