package main

import (
	"errors"
	"io"
	"path/filepath"
	"strings"
	"testing"
)

func testClusterErrors(t *testing.T, s *scope) {
	s.fixtures()
	s.service("plain")
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"plan", "errors-shop/missing"}, "Service errors-shop/missing not found, and no plan record for it in namespace errors-system"},
		{[]string{"history", "plain", "-n", "errors-shop"}, "no plan record for Service errors-shop/plain in namespace errors-system yet"},
		{[]string{"approve", "errors-shop/missing"}, "Service errors-shop/missing not found"},
		{[]string{"unlock", "errors-shop/missing", "--yes"}, "Service errors-shop/missing not found"},
		{[]string{"plan", "errors-shop/web", "-n", "other"}, "errors-shop/web names namespace errors-shop, but -n is other"},
		{[]string{"plan", "a/b/c"}, `"a/b/c" is not a Service`},
		{[]string{"plan"}, "accepts 1 arg(s), received 0"},
		{[]string{"approve", "errors-shop/web", "plan-x", "extra"}, "accepts between 1 and 2 arg(s), received 3"},
	} {
		s.mustFail(tc.want, nil, tc.args...)
	}
	// The records are in the controller's namespace: elsewhere, none.
	cmd := newRootCmd()
	cmd.SetArgs([]string{"history", "errors-shop/web", "--kubeconfig", s.kubeconfig, "--namespace", "default"})
	if err := cmd.ExecuteContext(t.Context()); err == nil || !strings.Contains(err.Error(), "is --namespace the controller's namespace?") {
		t.Errorf("history in the wrong --namespace: %v", err)
	}
}

func TestNoKubeconfig(t *testing.T) {
	t.Setenv("KUBECONFIG", filepath.Join(t.TempDir(), "missing"))
	t.Setenv("KUBERNETES_SERVICE_HOST", "")
	t.Setenv("KUBERNETES_SERVICE_PORT", "")
	for _, args := range [][]string{{"status"}, {"plan", "web"}, {"approve", "routes"}} {
		cmd := newRootCmd()
		cmd.SetArgs(args)
		if err := cmd.Execute(); !errors.Is(err, errNoKubeconfig) {
			t.Errorf("examplectl %s: %v, want %v", strings.Join(args, " "), err, errNoKubeconfig)
		}
	}
	cmd := newRootCmd()
	cmd.SetArgs([]string{"status", "--kubeconfig", filepath.Join(t.TempDir(), "nope")})
	if err := cmd.Execute(); err == nil || !strings.Contains(err.Error(), "kubeconfig:") {
		t.Errorf("a missing --kubeconfig: %v", err)
	}
}

// TestFilesHash: plan compares the recorded files with a plan's HCL hash
// the way the renderer hashes them.
func TestFilesHash(t *testing.T) {
	svc, err := readService("testdata/service.yaml")
	if err != nil {
		t.Fatal(err)
	}
	nodes, err := readNodes("testdata/nodes.yaml")
	if err != nil {
		t.Fatal(err)
	}
	m, err := renderService(renderOptions{config: "testdata/config.yaml"}, svc, nodes, nil, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	files := map[string]string{}
	for name, data := range m.Files {
		files[name] = string(data)
	}
	if got := filesHash(files); got != m.Hash {
		t.Errorf("filesHash = %s, renderer's = %s", got, m.Hash)
	}
}
