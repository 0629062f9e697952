package main

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/example/cloud-provider-example/modules"
	"github.com/example/cloud-provider-example/renderer"
)

var update = flag.Bool("update", false, "rewrite testdata/*.golden")

func render(t *testing.T, args ...string) (stdout, stderr string, err error) {
	t.Helper()
	cmd := newRootCmd()
	var out, errOut bytes.Buffer
	cmd.SetOut(&out)
	cmd.SetErr(&errOut)
	cmd.SetArgs(append([]string{"render"}, args...))
	err = cmd.Execute()
	return out.String(), errOut.String(), err
}

func TestRenderGolden(t *testing.T) {
	out, warnings, err := render(t,
		"--service", "testdata/service.yaml", "--nodes", "testdata/nodes.yaml", "--config", "testdata/config.yaml")
	if err != nil {
		t.Fatal(err)
	}
	// The shipped modules' digest changes with every module edit.
	out = strings.Replace(out, fmt.Sprintf("sha256 %.12s.", modules.Digest()), "sha256 <digest>.", 1)
	golden := filepath.Join("testdata", "render.golden")
	if *update {
		if err := os.WriteFile(golden, []byte(out), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatal(err)
	}
	if out != string(want) {
		t.Errorf("output differs from %s (go test ./cmd/examplectl -update):\n%s", golden, out)
	}
	if !strings.Contains(warnings, `warning: node "ingress-new" skipped: no spec.providerID yet`) {
		t.Errorf("warnings = %q", warnings)
	}
}

func TestRenderOut(t *testing.T) {
	dir := t.TempDir()
	stdout, stderr, err := render(t, "--service", "testdata/service.yaml", "--nodes", "testdata/nodes.yaml",
		"--out", dir, "--with-modules")
	if err != nil {
		t.Fatal(err)
	}
	if stdout != "" || !strings.Contains(stderr, "wrote ") {
		t.Errorf("stdout %q stderr %q", stdout, stderr)
	}
	main, err := os.ReadFile(filepath.Join(dir, renderer.MainFile))
	if err != nil {
		t.Fatal(err)
	}
	// Without --config: cluster "kubernetes", region from the nodes.
	for _, want := range []string{`region = "ex-west-1"`, `"k8s.example.com/cluster-id"        = "kubernetes"`} {
		if !strings.Contains(string(main), want) {
			t.Errorf("main.tf lacks %s", want)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "modules", "loadbalancer", "main.tf")); err != nil {
		t.Error(err)
	}
}

func TestRenderErrors(t *testing.T) {
	dir := t.TempDir()
	write := func(name, content string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	bad := write("bad.yaml", "kind: Service\nspec:\n  type: LoadBalancer\n  ports: [{port: 80, nodePort: 30080}]\nmetadata:\n  annotations:\n    loadbalancer.example.com/type: huge\n")
	cases := map[string][]string{
		"no --service":       nil,
		"no region":          {"--service", "testdata/service.yaml"},
		"annotation":         {"--service", bad, "--config", "testdata/config.yaml"},
		"unknown cfg field":  {"--service", "testdata/service.yaml", "--config", write("c.yaml", "clusterID: a\nregion: r\nregoin: x\n")},
		"not a service":      {"--service", write("n.yaml", "kind: Node\n")},
		"unknown svc field":  {"--service", write("s.yaml", "kind: Service\nspec:\n  typo: 1\n")},
		"with-modules alone": {"--service", "testdata/service.yaml", "--config", "testdata/config.yaml", "--with-modules"},
	}
	for name, args := range cases {
		if _, _, err := render(t, args...); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
	_, _, err := render(t, "--service", bad, "--config", "testdata/config.yaml")
	if !strings.Contains(err.Error(), "loadbalancer.example.com/type") || !strings.Contains(err.Error(), "accepted: lb-small") {
		t.Errorf("annotation error %q does not name the annotation and accepted values", err)
	}
}

func TestReadNodesForms(t *testing.T) {
	dir := t.TempDir()
	forms := map[string]string{
		"list.yaml":   "- metadata: {name: a}\n  spec: {providerID: example://r/i-1}\n- metadata: {name: b}\n",
		"docs.yaml":   "# nodes\n---\nkind: Node\nmetadata: {name: a}\n---\napiVersion: v1\nkind: Node\nmetadata: {name: b}\n---\n",
		"v1list.yaml": "kind: List\nitems:\n- kind: Node\n  metadata: {name: a}\n- kind: Node\n  metadata: {name: b}\n",
	}
	for name, content := range forms {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		nodes, err := readNodes(p)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if len(nodes) != 2 || nodes[0].Name != "a" || nodes[1].Name != "b" {
			t.Errorf("%s: %d nodes", name, len(nodes))
		}
	}
}
