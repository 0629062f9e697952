package engine_test

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	corev1 "k8s.io/api/core/v1"

	"github.com/example/cloud-provider-example/annotations"
	"github.com/example/cloud-provider-example/engine"
	"github.com/example/cloud-provider-example/internal/testkit"
	"github.com/example/cloud-provider-example/policy"
	"github.com/example/cloud-provider-example/runner"
)

// A preview plans the edited Service speculatively: it names the
// replacement an internal load balancer causes and the rule that would
// hold it, and changes nothing: the load balancer, the state and the next
// reconcile's plan are those without it.
func TestPreviewIsSpeculative(t *testing.T) {
	rules, err := policy.Compile(policy.Defaults)
	if err != nil {
		t.Fatal(err)
	}
	f := newFixtureWith(t, 2, engine.Options{Rules: rules})
	nodes := []*corev1.Node{f.node(t, "node-a")}
	svc := service("web", 80)
	obj := policy.Object{Kind: "Service", Namespace: svc.Namespace, Name: svc.Name}

	if _, _, err := f.eng.PreviewLoadBalancer(testkit.Context(t), annotations.Read(svc), nodes, "", nil, obj); !errors.Is(err, runner.ErrNoState) {
		t.Fatalf("preview before any apply: %v, want ErrNoState", err)
	}
	lb := applied(t, f.eng, svc, nodes)
	stateBefore := readStates(t, f)

	same, verdicts, err := f.eng.PreviewLoadBalancer(testkit.Context(t), annotations.Read(svc), nodes, "", nil, obj)
	if err != nil || same.HasChanges || len(verdicts) > 0 {
		t.Fatalf("preview of the unchanged Service: %+v, %v, %v", same, verdicts, err)
	}

	internal := svc.DeepCopy()
	internal.Annotations = map[string]string{string(annotations.LBInternal): "true"}
	sp, verdicts, err := f.eng.PreviewLoadBalancer(testkit.Context(t), annotations.Read(internal), nodes, "", nil, obj)
	if err != nil {
		t.Fatal(err)
	}
	var replaced bool
	for _, r := range sp.Summary.Resources {
		replaced = replaced || (r.Type == "example_load_balancer" && r.Action == "replace")
	}
	if !sp.HasChanges || !replaced || sp.JSON == nil {
		t.Errorf("preview of internal: %+v, want the load balancer replaced", sp.Summary)
	}
	if len(verdicts) == 0 {
		t.Errorf("no rule holds a replacement; the default rules do")
	}
	if got, err := f.api.GetLoadBalancer(testkit.Context(t), lb.ID); err != nil || got.Internal {
		t.Error("the preview changed the load balancer")
	}
	if after := readStates(t, f); after != stateBefore {
		t.Error("the preview wrote the state")
	}
	if _, out, err := f.eng.ReconcileLoadBalancer(testkit.Context(t), annotations.Read(svc), nodes, auto); err != nil || out.Planned != nil && out.Planned.HasChanges {
		t.Errorf("reconcile after the preview: %+v, %v; want nothing to do", out, err)
	}
}

// readStates is every state file of the fixture's local backend, joined.
func readStates(t *testing.T, f *fixture) string {
	t.Helper()
	var all string
	err := filepath.WalkDir(f.stateDir, func(path string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := os.ReadFile(path)
		all += path + "\n" + string(data)
		return err
	})
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	return all
}
