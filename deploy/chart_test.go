package deploy_test

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"reflect"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/yaml"

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
// load balancers that still exist, the CRDs every approval.
var keptOnUninstall = []string{
	"Namespace /example-ccm",
	"CustomResourceDefinition /planapprovals.review.example.com",
	"CustomResourceDefinition /stateunlocks.review.example.com",
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
// state backend, with more reviewers: the invariants must follow.
var chartValuesElsewhere = map[string]any{
	"namespace":     map[string]any{"name": "ccm-prod"},
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
	objs, err := deploy.Objects()
	if err != nil {
		t.Fatal(err)
	}
	c, err := deploy.Component(deploy.ServiceAuthor)
	if err != nil {
		t.Fatal(err)
	}
	return append(objs, c...)
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
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := deploy.RenderChart(t.Context(), helm, c.values)
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("err = %v, want one containing %q", err, c.want)
			}
		})
	}
}
