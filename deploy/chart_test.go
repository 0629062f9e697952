package deploy_test

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	admissionv1 "k8s.io/api/admissionregistration/v1"
	appsv1 "k8s.io/api/apps/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/yaml"

	"github.com/example/cloud-provider-example/cloudconfig"
	"github.com/example/cloud-provider-example/deploy"
	"github.com/example/cloud-provider-example/internal/need"
)

// helmBin is the helm binary of hack/helm.sh, which make test passes as
// EXAMPLE_HELM.
func helmBin(t *testing.T) string {
	t.Helper()
	helm := os.Getenv("EXAMPLE_HELM")
	if helm == "" {
		need.Missing(t, "EXAMPLE_HELM is unset: the chart is rendered with hack/helm.sh's helm")
	}
	return helm
}

// renderChart renders deploy/chart with values over its defaults.
func renderChart(t *testing.T, values map[string]any) []runtime.Object {
	t.Helper()
	objs, err := deploy.ChartObjects(t.Context(), helmBin(t), values)
	if err != nil {
		t.Fatal(err)
	}
	return objs
}

// helm lint --strict (warnings fail too) with the defaults and with a
// non-default backend.
func TestChartLint(t *testing.T) {
	helm := helmBin(t)
	for _, args := range [][]string{
		nil,
		{"--set", "state.type=pg,state.credentialsSecret=ccm-pg,serviceAuthor.enabled=true"},
		{"--set", "webhook.certificates.mode=cert-manager"},
		{"--set", "webhook.enabled=false"},
	} {
		cmd := exec.Command(helm, append([]string{"lint", "--strict", "chart"}, args...)...)
		cmd.Env = append(os.Environ(), "HELM_CONFIG_HOME="+t.TempDir(), "HELM_CACHE_HOME="+t.TempDir(), "HELM_DATA_HOME="+t.TempDir())
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Errorf("helm lint %v: %v\n%s", args, err, out)
		}
	}
}

// The chart with its default values is deploy/base, object for object, and
// with serviceAuthor.enabled the base plus components/service-author: what
// keeps the two from drifting. Two latitudes only: the cloud config's text
// (the chart writes it with toYaml, without the base's comments) is compared
// as parsed YAML, and the annotation helm.sh/resource-policy, which only
// Helm reads, is ignored where keptOnUninstall says.
func TestChartDefaultsAreTheBase(t *testing.T) {
	base, err := deploy.Objects()
	if err != nil {
		t.Fatal(err)
	}
	compareObjects(t, renderChart(t, nil), base)

	author, err := deploy.Component(deploy.ServiceAuthor)
	if err != nil {
		t.Fatal(err)
	}
	compareObjects(t, renderChart(t, map[string]any{"serviceAuthor": map[string]any{"enabled": true}}), append(base, author...))
}

// keptOnUninstall are the objects helm uninstall leaves (annotation
// helm.sh/resource-policy: keep): the namespace holds the Terraform states of
// load balancers that still exist, the CRDs every approval and request.
var keptOnUninstall = []string{
	"Namespace /example-ccm",
	"CustomResourceDefinition /planapprovals.review.example.com",
	"CustomResourceDefinition /stateunlocks.review.example.com",
	"CustomResourceDefinition /addressreleases.review.example.com",
}

func compareObjects(t *testing.T, got, want []runtime.Object) {
	t.Helper()
	g, w := index(t, got), index(t, want)
	for _, id := range keptOnUninstall {
		o, ok := g[id]
		if !ok {
			t.Errorf("chart lacks %s", id)
			continue
		}
		m, _ := meta.Accessor(o)
		a := m.GetAnnotations()
		if a["helm.sh/resource-policy"] != "keep" {
			t.Errorf("%s: annotations %v, want helm.sh/resource-policy: keep", id, a)
		}
		delete(a, "helm.sh/resource-policy")
		if len(a) == 0 {
			a = nil
		}
		m.SetAnnotations(a)
	}
	for id, wo := range w {
		goObj, ok := g[id]
		if !ok {
			t.Errorf("chart lacks %s", id)
			continue
		}
		if !apiequality.Semantic.DeepEqual(goObj, wo) {
			t.Errorf("%s differs (-base +chart):\n%s", id, cmp.Diff(wo, goObj))
		}
	}
	for id := range g {
		if _, ok := w[id]; !ok {
			t.Errorf("chart renders %s, the base has none", id)
		}
	}
}

// index keys objects by kind, namespace and name, with each ConfigMap's
// cloud-config.yaml replaced by its parsed form as canonical JSON.
func index(t *testing.T, objs []runtime.Object) map[string]runtime.Object {
	t.Helper()
	out := map[string]runtime.Object{}
	for _, o := range objs {
		o = o.DeepCopyObject()
		if cm, ok := o.(*corev1.ConfigMap); ok {
			if text, ok := cm.Data["cloud-config.yaml"]; ok {
				var v any
				if err := yaml.Unmarshal([]byte(text), &v); err != nil {
					t.Fatalf("ConfigMap %s: cloud-config.yaml: %v", cm.Name, err)
				}
				canon, _ := json.MarshalIndent(v, "", "  ") // map keys sorted, a line each for diffs
				cm.Data["cloud-config.yaml"] = string(canon)
			}
		}
		m, err := meta.Accessor(o)
		if err != nil {
			t.Fatal(err)
		}
		id := fmt.Sprintf("%s %s/%s", kindOf(o), m.GetNamespace(), m.GetName())
		if _, dup := out[id]; dup {
			t.Errorf("%s twice", id)
		}
		out[id] = o
	}
	return out
}

// The renderings the RBAC invariants (manifests_test.go, rbac_test.go) are
// checked on.
type rendering struct {
	name string
	// namespace is the controller's.
	namespace string
	// objs holds every object, with the service-author policy.
	objs []runtime.Object
	// helm marks the chart's renderings (skipped without EXAMPLE_HELM).
	helm bool
	// values of the chart.
	values map[string]any
}

// chartValuesElsewhere moves the chart to another namespace, on another
// state backend, with more reviewers and without sharding (one active
// replica): the invariants must follow.
var chartValuesElsewhere = map[string]any{
	"namespace":     map[string]any{"name": "ccm-prod"},
	"sharding":      map[string]any{"enabled": false},
	"state":         map[string]any{"type": "pg", "credentialsSecret": "ccm-pg", "pg": map[string]any{"schemaName": "ccm"}},
	"reviewers":     map[string]any{"users": []any{"alice@example.com"}},
	"serviceAuthor": map[string]any{"enabled": true},
}

var renderingsOnce = struct {
	sync.Mutex
	done map[string][]runtime.Object
}{done: map[string][]runtime.Object{}}

// forEachRendering runs f on deploy/base with its components, the chart
// with its defaults and the chart with chartValuesElsewhere, each a subtest.
func forEachRendering(t *testing.T, f func(t *testing.T, r rendering)) {
	t.Helper()
	for _, r := range []rendering{
		{name: "base", namespace: deploy.Namespace},
		{name: "chart", namespace: deploy.Namespace, helm: true, values: map[string]any{"serviceAuthor": map[string]any{"enabled": true}}},
		{name: "chart-elsewhere", namespace: "ccm-prod", helm: true, values: chartValuesElsewhere},
	} {
		t.Run(r.name, func(t *testing.T) {
			r.objs = renderingObjects(t, r)
			f(t, r)
		})
	}
}

// renderingObjects renders each rendering once per test process.
func renderingObjects(t *testing.T, r rendering) []runtime.Object {
	t.Helper()
	if !r.helm {
		return allObjects(t)
	}
	helmBin(t)
	renderingsOnce.Lock()
	defer renderingsOnce.Unlock()
	objs, ok := renderingsOnce.done[r.name]
	if !ok {
		objs = renderChart(t, r.values)
		renderingsOnce.done[r.name] = objs
	}
	out := make([]runtime.Object, len(objs))
	for i, o := range objs {
		out[i] = o.DeepCopyObject()
	}
	return out
}

// allObjects is the base plus every component.
func allObjects(t *testing.T) []runtime.Object {
	t.Helper()
	objs, err := deploy.WithComponents(deploy.ServiceAuthor)
	if err != nil {
		t.Fatal(err)
	}
	return objs
}

// find returns the objects of type T.
func find[T runtime.Object](objs []runtime.Object) []T {
	var out []T
	for _, o := range objs {
		if o, ok := o.(T); ok {
			out = append(out, o)
		}
	}
	return out
}

// one returns the only object of type T, named name.
func one[T runtime.Object](t *testing.T, objs []runtime.Object, name string) T {
	t.Helper()
	var found []T
	for _, o := range find[T](objs) {
		if m, _ := meta.Accessor(o); m.GetName() == name {
			found = append(found, o)
		}
	}
	if len(found) != 1 {
		var zero T
		t.Fatalf("%d %s %q, want one", len(found), reflect.TypeOf(zero).Elem().Name(), name)
	}
	return found[0]
}

// none fails if any object is of type T.
func none[T runtime.Object](t *testing.T, objs []runtime.Object) {
	t.Helper()
	for _, o := range find[T](objs) {
		m, _ := meta.Accessor(o)
		t.Errorf("unexpected %s %s/%s", kindOf(o), m.GetNamespace(), m.GetName())
	}
}

// TestChartRefuses: values the chart refuses, with a message naming the
// value.
func TestChartRefuses(t *testing.T) {
	helm := helmBin(t)
	for _, c := range []struct {
		name   string
		values map[string]any
		want   string
	}{
		{"local backend", map[string]any{"state": map[string]any{"type": "local"}}, "state.type: local keeps states"},
		{"pg without credentials", map[string]any{"state": map[string]any{"type": "pg"}}, "state.credentialsSecret: required for the pg backend"},
		{"unknown backend", map[string]any{"state": map[string]any{"type": "consul"}}, "/state/type"},
		{"two replicas without leader election", map[string]any{"leaderElection": map[string]any{"enabled": false}}, "needs leaderElection.enabled"},
		{"release in the created namespace", map[string]any{"namespace": map[string]any{"name": "default"}}, "install the release into another namespace"},
		{"state in the cloud config", map[string]any{"cloudConfig": map[string]any{"state": map[string]any{"type": "local"}}}, "cloudConfig.state"},
		{"no cluster ID", map[string]any{"cloudConfig": map[string]any{"clusterID": ""}}, "clusterID"},
		{"misspelt value", map[string]any{"replica": 3}, "replica"},
		{"TLS Secrets namespace not a name", map[string]any{"tlsSecrets": map[string]any{"namespaces": []any{"Shop/x"}}}, "tlsSecrets"},
		{"misspelt nested value", map[string]any{"image": map[string]any{"tags": "v2"}}, "tags"},
		{"flag without dashes", map[string]any{"controller": map[string]any{"extraArgs": []any{"v=4"}}}, "extraArgs"},
		{"unknown certificate mode", map[string]any{"webhook": map[string]any{"certificates": map[string]any{"mode": "vault"}}}, "/webhook/certificates/mode"},
		{"webhook timeout above 30s", map[string]any{"webhook": map[string]any{"timeoutSeconds": 60}}, "/webhook/timeoutSeconds"},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := deploy.RenderChart(t.Context(), helm, c.values)
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("err = %v, want one containing %q", err, c.want)
			}
		})
	}
}

// The chart installs on the API servers of the supported range, those
// docs/kubernetes-versions.md says are tested (1.34 to 1.37), and refuses
// the others.
func TestKubeVersion(t *testing.T) {
	helm := helmBin(t)
	for version, ok := range map[string]bool{
		"v1.33.13": false, "v1.34.0": true, "v1.36.4": true, "v1.37.2": true, "v1.38.0": false,
		"v1.35.0-eks-1234": true,
	} {
		_, err := deploy.RenderChart(t.Context(), helm, nil, "--kube-version", version)
		switch {
		case ok && err != nil:
			t.Errorf("Kubernetes %s: %v", version, err)
		case !ok && (err == nil || !strings.Contains(err.Error(), "kubeVersion")):
			t.Errorf("Kubernetes %s: err = %v, want the chart's kubeVersion refusing it", version, err)
		}
	}
}

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
				"--kube-api-qps=7.5", "--kube-api-burst=200", "--v=4"} {
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

		// OpenTofu encryption through cloudConfig: the passphrase's
		// Secret defaults to the controller's namespace, whose Secrets
		// the Role lets it read; the key itself is in no rendered object.
		{"opentofu state encryption", map[string]any{"cloudConfig": map[string]any{"clusterID": "prod",
			"terraform": map[string]any{"distribution": "tofu", "binary": "/usr/local/bin/tofu", "workDir": "/var/lib/example-ccm/terraform",
				"cliConfig": "/opt/example/terraform.rc", "lockFile": "/opt/example/terraform-provider.lock.hcl",
				"encryption": map[string]any{"passphraseSecret": map[string]any{"name": "ccm-state-key", "key": "passphrase"}}}}},
			func(t *testing.T, objs []runtime.Object) {
				cfg := cloudConfig(t, objs)
				enc := cfg.Terraform.Encryption
				if enc == nil || enc.PassphraseSecret == nil || enc.PassphraseSecret.Namespace != deploy.Namespace || enc.PassphraseSecret.Name != "ccm-state-key" {
					t.Fatalf("encryption %+v", enc)
				}
				readable := false
				for _, r := range one[*rbacv1.Role](t, objs, "example-cloud-controller-manager").Rules {
					readable = readable || slices.Contains(r.Resources, "secrets") && slices.Contains(r.Verbs, "get")
				}
				if !readable {
					t.Error("the Role does not let the controller read its namespace's Secrets: the passphrase cannot be read")
				}
			}},

		{"namespace not created", map[string]any{"namespace": map[string]any{"create": false}}, func(t *testing.T, objs []runtime.Object) {
			none[*corev1.Namespace](t, objs)
		}},

		{"pg backend", map[string]any{
			"state":    map[string]any{"type": "pg", "credentialsSecret": "ccm-pg", "pg": map[string]any{"schemaName": "ccm"}, "keyTemplate": "{{.Cluster}}-{{.Name}}"},
			"sharding": map[string]any{"enabled": false},
		}, func(t *testing.T, objs []runtime.Object) {
			cfg := cloudConfig(t, objs)
			if cfg.State.Type != "pg" || cfg.State.PG.SchemaName != "ccm" || cfg.State.KeyTemplate != "{{.Cluster}}-{{.Name}}" || cfg.State.Kubernetes != nil {
				t.Errorf("state %+v, pg %+v", cfg.State, cfg.State.PG)
			}
			dep, c := container(t, objs)
			fileOnSecretMount(t, dep, c, cfg.State.PG.ConnStrFile, "ccm-pg")
			// No kubernetes backend, no sharding: the Role has no Leases.
			for _, r := range one[*rbacv1.Role](t, objs, "example-cloud-controller-manager").Rules {
				if slices.Contains(r.Resources, "leases") {
					t.Errorf("Role grants leases without the kubernetes backend: %+v", r)
				}
			}
		}},

		// Pod targets, of Services of target type ip as of Gateways: slices
		// read; pods read, and only their status patched (the readiness
		// gates).
		{"pod targets without the Gateway API", map[string]any{}, func(t *testing.T, objs []runtime.Object) {
			var readsSlices, gates bool
			for _, r := range one[*rbacv1.ClusterRole](t, objs, "example-cloud-controller-manager").Rules {
				readsSlices = readsSlices || r.APIGroups[0] == "discovery.k8s.io" && slices.Equal(r.Resources, []string{"endpointslices"}) && slices.Equal(r.Verbs, []string{"get", "list", "watch"})
				gates = gates || r.APIGroups[0] == "" && slices.Equal(r.Resources, []string{"pods/status"}) && slices.Equal(r.Verbs, []string{"patch"})
				if r.APIGroups[0] == "" && slices.Contains(r.Resources, "pods") && slices.ContainsFunc(r.Verbs, func(v string) bool { return v != "get" && v != "list" && v != "watch" }) {
					t.Errorf("ClusterRole writes pods: %+v", r)
				}
				if r.APIGroups[0] == "gateway.networking.k8s.io" && slices.Contains(r.Resources, "httproutes") {
					t.Errorf("ClusterRole reads routes with the Gateway API off: %+v", r)
				}
			}
			if !readsSlices || !gates {
				t.Errorf("ClusterRole: reads EndpointSlices %v, patches pods' status %v; want both", readsSlices, gates)
			}
		}},

		{"gateway API", map[string]any{"gatewayAPI": map[string]any{"enabled": true}}, func(t *testing.T, objs []runtime.Object) {
			if cfg := cloudConfig(t, objs); !cfg.GatewayAPI.Enabled {
				t.Error("cloud config: gatewayAPI not enabled")
			}
			var reads, writes, finalizes bool
			for _, r := range one[*rbacv1.ClusterRole](t, objs, "example-cloud-controller-manager").Rules {
				if r.APIGroups[0] != "gateway.networking.k8s.io" {
					continue
				}
				reads = reads || slices.Contains(r.Resources, "httproutes") && slices.Contains(r.Resources, "grpcroutes") &&
					slices.Contains(r.Resources, "backendtlspolicies") && slices.Contains(r.Resources, "listenersets") && slices.Contains(r.Verbs, "watch")
				writes = writes || slices.Contains(r.Resources, "httproutes/status") && slices.Contains(r.Resources, "grpcroutes/status") &&
					slices.Contains(r.Resources, "backendtlspolicies/status") && slices.Contains(r.Resources, "listenersets/status") && slices.Equal(r.Verbs, []string{"update"})
				finalizes = finalizes || slices.Equal(r.Resources, []string{"gateways"}) && slices.Contains(r.Verbs, "update")
				// Routes are the tenants': read, never written but their status.
				if slices.Contains(r.Resources, "httproutes") && slices.ContainsFunc(r.Verbs, func(v string) bool { return v != "get" && v != "list" && v != "watch" }) {
					t.Errorf("ClusterRole writes HTTPRoutes: %+v", r)
				}
			}
			if !reads || !writes || !finalizes {
				t.Errorf("ClusterRole: reads routes %v, writes their status %v, updates Gateways (finalizer) %v; want all", reads, writes, finalizes)
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

		{"webhook disabled", map[string]any{
			"webhook": map[string]any{"enabled": false, "certificates": map[string]any{"mode": "cert-manager"}},
			// The chart owns webhook.enabled, whatever cloudConfig says.
			"cloudConfig": map[string]any{"webhook": map[string]any{"enabled": true}},
		}, func(t *testing.T, objs []runtime.Object) {
			none[*corev1.Service](t, objs)
			none[*admissionv1.MutatingWebhookConfiguration](t, objs)
			none[*admissionv1.ValidatingWebhookConfiguration](t, objs)
			none[*unstructured.Unstructured](t, objs)
			if cfg := cloudConfig(t, objs); cfg.Webhook.Enabled || cfg.Webhook.Certificates.Mode != cloudconfig.CertificatesSelfManaged {
				t.Errorf("cloud config webhook %+v, want disabled", cfg.Webhook)
			}
			dep, c := container(t, objs)
			if slices.ContainsFunc(c.Ports, func(p corev1.ContainerPort) bool { return p.Name == "webhook" }) {
				t.Errorf("container ports %+v: a webhook port (a host port) without webhook", c.Ports)
			}
			if len(dep.Spec.Template.Spec.Volumes) != 4 {
				t.Errorf("volumes %+v", dep.Spec.Template.Spec.Volumes)
			}
		}},

		{"webhook certificate from cert-manager", map[string]any{
			"webhook":     map[string]any{"timeoutSeconds": 10, "certificates": map[string]any{"mode": "cert-manager"}},
			"cloudConfig": map[string]any{"webhook": map[string]any{"previewBudget": "3s", "refuse": true}},
		}, func(t *testing.T, objs []runtime.Object) {
			issuer := oneUnstructured(t, objs, "Issuer", "example-ccm-webhook-selfsigned")
			if _, ok, _ := unstructured.NestedMap(issuer.Object, "spec", "selfSigned"); !ok || issuer.GetNamespace() != deploy.Namespace {
				t.Errorf("Issuer %s/%s: spec %v, want selfSigned", issuer.GetNamespace(), issuer.GetName(), issuer.Object["spec"])
			}
			cert := oneUnstructured(t, objs, "Certificate", "example-ccm-webhook")
			checkCertificate(t, cert, map[string]any{"name": issuer.GetName(), "kind": "Issuer", "group": "cert-manager.io"})
			from := deploy.Namespace + "/" + cert.GetName()
			m := one[*admissionv1.MutatingWebhookConfiguration](t, objs, cloudconfig.MutatingWebhookName)
			v := one[*admissionv1.ValidatingWebhookConfiguration](t, objs, cloudconfig.ValidatingWebhookName)
			for _, a := range []map[string]string{m.Annotations, v.Annotations} {
				if a["cert-manager.io/inject-ca-from"] != from {
					t.Errorf("annotations %v, want cert-manager.io/inject-ca-from: %s", a, from)
				}
			}
			if *m.Webhooks[0].TimeoutSeconds != 10 || *v.Webhooks[0].TimeoutSeconds != 10 {
				t.Errorf("timeoutSeconds %d and %d, want 10", *m.Webhooks[0].TimeoutSeconds, *v.Webhooks[0].TimeoutSeconds)
			}
			cfg := cloudConfig(t, objs)
			wc := cfg.Webhook.Certificates
			if !cfg.Webhook.Enabled || wc.Mode != cloudconfig.CertificatesFiles || filepath.Base(wc.CertFile) != "tls.crt" || filepath.Base(wc.KeyFile) != "tls.key" {
				t.Errorf("cloud config webhook %+v", cfg.Webhook)
			}
			// cloudConfig.webhook's other keys are kept.
			if cfg.Webhook.PreviewBudget.Duration != 3*time.Second || !cfg.Webhook.Refuse {
				t.Errorf("previewBudget %s, refuse %t: cloudConfig.webhook lost", cfg.Webhook.PreviewBudget.Duration, cfg.Webhook.Refuse)
			}
			dep, c := container(t, objs)
			fileOnSecretMount(t, dep, c, wc.CertFile, "example-ccm-webhook-tls-cm")
			fileOnSecretMount(t, dep, c, wc.KeyFile, "example-ccm-webhook-tls-cm")
		}},

		{"webhook certificate from an existing issuer", map[string]any{
			"namespace": map[string]any{"name": "ccm-prod"},
			"webhook": map[string]any{"certificates": map[string]any{"mode": "cert-manager",
				"issuerRef": map[string]any{"name": "corp-ca", "kind": "ClusterIssuer"}}},
		}, func(t *testing.T, objs []runtime.Object) {
			for _, u := range find[*unstructured.Unstructured](objs) {
				if u.GetKind() == "Issuer" {
					t.Errorf("Issuer %s rendered beside issuerRef", u.GetName())
				}
			}
			cert := oneUnstructured(t, objs, "Certificate", "example-ccm-webhook")
			checkCertificate(t, cert, map[string]any{"name": "corp-ca", "kind": "ClusterIssuer", "group": "cert-manager.io"})
			m := one[*admissionv1.MutatingWebhookConfiguration](t, objs, cloudconfig.MutatingWebhookName)
			if a := m.Annotations["cert-manager.io/inject-ca-from"]; a != "ccm-prod/example-ccm-webhook" {
				t.Errorf("inject-ca-from %q", a)
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

// oneUnstructured returns the only object of a kind outside the scheme
// (cert-manager's), named name.
func oneUnstructured(t *testing.T, objs []runtime.Object, kind, name string) *unstructured.Unstructured {
	t.Helper()
	var found []*unstructured.Unstructured
	for _, u := range find[*unstructured.Unstructured](objs) {
		if u.GetKind() == kind && u.GetName() == name {
			found = append(found, u)
		}
	}
	if len(found) != 1 {
		t.Fatalf("%d %s %q, want one", len(found), kind, name)
	}
	return found[0]
}

// checkCertificate: the webhook's Certificate, in the controller's
// namespace, names the webhook Service (as the controller's own
// certificate would) and issues the Secret the pod mounts.
func checkCertificate(t *testing.T, cert *unstructured.Unstructured, issuerRef map[string]any) {
	t.Helper()
	ns := cert.GetNamespace()
	spec, _, _ := unstructured.NestedMap(cert.Object, "spec")
	wantDNS := []any{"example-ccm-webhook." + ns + ".svc", "example-ccm-webhook." + ns + ".svc.cluster.local"}
	if cert.GetAPIVersion() != "cert-manager.io/v1" || spec["secretName"] != "example-ccm-webhook-tls-cm" ||
		!reflect.DeepEqual(spec["dnsNames"], wantDNS) || !reflect.DeepEqual(spec["issuerRef"], issuerRef) {
		t.Errorf("Certificate %s/%s: %s %v, want secret example-ccm-webhook-tls-cm, dnsNames %v, issuerRef %v",
			ns, cert.GetName(), cert.GetAPIVersion(), spec, wantDNS, issuerRef)
	}
}
