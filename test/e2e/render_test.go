package e2e

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"

	"github.com/example/cloud-provider-example/exampleapi"
	"github.com/example/cloud-provider-example/internal/testkit"
)

// checkRenders runs `examplectl render` with the CCM's own cloud config on
// the Service as the API server has it, and wants byte for byte the main.tf
// the CCM applied (backend block included): one config for both.
func (e *env) checkRenders(ns, name string, extra ...string) {
	t := e.t
	t.Helper()
	svc, err := e.kube.CoreV1().Services(ns).Get(testkit.Context(t), name, metav1.GetOptions{})
	testkit.Must(t, err)
	nodes, err := e.kube.CoreV1().Nodes().List(testkit.Context(t), metav1.ListOptions{})
	testkit.Must(t, err)
	dir := t.TempDir()
	write := func(file string, obj any) string {
		data, err := yaml.Marshal(obj)
		testkit.Must(t, err)
		p := filepath.Join(dir, file)
		testkit.Must(t, os.WriteFile(p, data, 0o600))
		return p
	}
	svc.Kind, svc.APIVersion = "Service", "v1"
	args := []string{"render", "--config", filepath.Join(e.dir, "cloud-config.yaml"),
		"--service", write("svc.yaml", svc), "--nodes", write("nodes.yaml", &v1.NodeList{TypeMeta: metav1.TypeMeta{Kind: "NodeList", APIVersion: "v1"}, Items: nodes.Items})}
	pools, err := e.api.ListTargetPools(testkit.Context(t), exampleapi.TargetPoolFilter{Region: region})
	testkit.Must(t, err)
	if len(pools) != 1 {
		t.Fatalf("want one target pool (one node selection), got %d", len(pools))
	}
	args = append(args, "--target-pool", pools[0].ID)
	args = append(args, extra...)

	applied, err := filepath.Glob(filepath.Join(e.workDir, "e2e-service-"+ns+"-"+name+"-*", "main.tf"))
	testkit.Must(t, err)
	if len(applied) != 1 {
		t.Fatalf("want one workspace of %s/%s in %s, got %v", ns, name, e.workDir, applied)
	}
	want, err := os.ReadFile(applied[0])
	testkit.Must(t, err)
	cmd := exec.Command(filepath.Join(os.Getenv("EXAMPLE_BIN"), "examplectl"), args...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	got, err := cmd.Output()
	if err != nil {
		t.Fatalf("examplectl render: %v: %s", err, stderr.String())
	}
	if !bytes.Equal(got, want) {
		t.Errorf("examplectl render differs from the CCM's %s\n--- examplectl:\n%s\n--- CCM:\n%s", applied[0], got, want)
	}
	if strings.Contains(stderr.String(), "warning") {
		t.Errorf("warnings: %s", stderr.String())
	}
}
