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
	"github.com/example/cloud-provider-example/simulator/simtest"
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
	golden(t, "render.golden", out)
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
		"pool, no config":    {"--service", "testdata/service.yaml", "--nodes", "testdata/nodes.yaml", "--target-pool", "tp-1"},
		"pool, pools off":    {"--service", "testdata/service.yaml", "--config", "testdata/config.yaml", "--target-pool", "tp-1"},
		// The renderer's old file format is not a cloud config.
		"old config format": {"--service", "testdata/service.yaml", "--config", write("old.yaml", "clusterID: a\nregion: r\nendpoint: https://api.example.cloud\n")},
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

// withConfig writes testdata/config.yaml changed by edit into a temp file.
func withConfig(t *testing.T, edit func(string) string) string {
	t.Helper()
	data, err := os.ReadFile("testdata/config.yaml")
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(t.TempDir(), "cloud-config.yaml")
	if err := os.WriteFile(p, []byte(edit(string(data))), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// With target pools on (the controller's default) the module forwards to
// the pool given; without one, a warning says the listed nodes are not
// what the controller renders.
func TestRenderTargetPool(t *testing.T) {
	pools := withConfig(t, func(s string) string {
		return strings.Replace(s, "loadBalancer:\n  targetPools:\n    disabled: true\n", "", 1)
	})
	out, warnings, err := render(t, "--service", "testdata/service.yaml", "--nodes", "testdata/nodes.yaml", "--config", pools, "--target-pool", "tp-0123")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out, `target_pool_id = "tp-0123"`) || !strings.Contains(out, "targets = []") || strings.Contains(warnings, "target pools are enabled") {
		t.Errorf("with --target-pool: warnings %q, module:\n%s", warnings, out)
	}
	out, warnings, err = render(t, "--service", "testdata/service.yaml", "--nodes", "testdata/nodes.yaml", "--config", pools)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(out, "target_pool_id") || !strings.Contains(warnings, "pass --target-pool ID") {
		t.Errorf("without --target-pool: warnings %q, module:\n%s", warnings, out)
	}
}

// Rendering reads no credential and creates nothing: a pg config whose
// connection string variable is unset, a local one whose directory is
// missing, both render their backend block.
func TestRenderReadsNoCredential(t *testing.T) {
	missing := filepath.Join(t.TempDir(), "no", "such", "dir")
	for name, c := range map[string]struct{ state, want string }{
		"pg":    {"state: {type: pg, pg: {connStrEnv: EXAMPLECTL_TEST_UNSET_PG, schemaName: ccm}}", `backend "pg"`},
		"local": {"state: {type: local, local: {dir: " + missing + "}}", missing},
		"http":  {"state: {type: http, http: {address: https://states.example, passwordFile: /nonexistent/pw}}", `"https://states.example/prod-eu-service-shop-web-`},
	} {
		cfg := withConfig(t, func(s string) string {
			i := strings.Index(s, "state:")
			j := strings.Index(s, "loadBalancer:")
			return s[:i] + c.state + "\n" + s[j:]
		})
		out, _, err := render(t, "--service", "testdata/service.yaml", "--nodes", "testdata/nodes.yaml", "--config", cfg)
		if err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		if !strings.Contains(out, c.want) {
			t.Errorf("%s: module lacks %s:\n%s", name, c.want, out)
		}
	}
	if _, err := os.Stat(missing); !os.IsNotExist(err) {
		t.Errorf("render created %s: %v", missing, err)
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

// A tls.crt the controller would refuse (text outside its PEM blocks, an
// escape sequence above all) renders nothing; the error does not echo it.
func TestRenderTLSCertificateChecked(t *testing.T) {
	cert := simtest.NewCert(t, simtest.CertOptions{})
	dir := t.TempDir()
	good, bad := filepath.Join(dir, "good.crt"), filepath.Join(dir, "bad.crt")
	if err := os.WriteFile(good, []byte(cert.CertPEM), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(bad, []byte(cert.CertPEM+"\x1b[2J\x1b[HNo changes.\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	tls, err := readTLSCertificates([]string{"web-tls=" + good})
	if err != nil || tls.Certificates["web-tls"] != cert.CertPEM {
		t.Fatalf("a good tls.crt: %v", err)
	}
	_, _, err = render(t, "--service", "testdata/service.yaml", "--nodes", "testdata/nodes.yaml", "--tls-certificate", "web-tls="+bad)
	if err == nil || !strings.Contains(err.Error(), `the controller refuses it (tls.crt: holds text outside its PEM blocks (18 bytes at byte`) ||
		strings.Contains(err.Error(), "\x1b") {
		t.Errorf("a tls.crt with text after its block: %v", err)
	}
}

// render with the controller's cloud config takes the controller's
// reference decisions where the config makes them: an adopt-id the config
// does not allow is refused (it rendered as an import block before); a
// certificate of the cloud or a group of another namespace, which the
// controller decides from the cloud and the cluster, is a warning.
func TestRenderTakesTheControllerDecisions(t *testing.T) {
	data, err := os.ReadFile("testdata/service.yaml")
	if err != nil {
		t.Fatal(err)
	}
	svc := func(ann string) string {
		p := filepath.Join(t.TempDir(), "svc.yaml")
		text := strings.Replace(string(data), "  annotations:\n", "  annotations:\n"+ann, 1)
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	_, _, err = render(t, "--service", svc("    loadbalancer.example.com/adopt-id: lb-0123456789abcdef\n    loadbalancer.example.com/name: old\n"), "--config", "testdata/config.yaml")
	if err == nil || !strings.Contains(err.Error(), "the controller would refuse this Service") || !strings.Contains(err.Error(), "does not allow adoption in namespace shop") {
		t.Errorf("adopt-id without adoption allowed: %v", err)
	}
	// Allowed by the config, the load balancer's owner is the cloud's to say.
	allowing := filepath.Join(t.TempDir(), "config.yaml")
	cfg, err := os.ReadFile("testdata/config.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(allowing, []byte(strings.Replace(string(cfg), "loadBalancer:\n", "loadBalancer:\n  adoption: {enabled: true}\n", 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	_, warnings, err := render(t, "--service", svc("    loadbalancer.example.com/adopt-id: lb-0123456789abcdef\n    loadbalancer.example.com/name: old\n"), "--config", allowing)
	if err != nil || !strings.Contains(warnings, "the load balancer's owner tags in the cloud") {
		t.Errorf("adopt-id with adoption allowed: %v, warnings %q", err, warnings)
	}
	_, warnings, err = render(t, "--service", svc("    loadbalancer.example.com/group: platform/edge\n"), "--config", "testdata/config.yaml")
	if err != nil || !strings.Contains(warnings, "no ReferenceGrant") || !strings.Contains(warnings, "the ReferenceGrants in the cluster") {
		t.Errorf("group of another namespace: %v, warnings %q", err, warnings)
	}
	// Another namespace's default name is refused by its form; whose a
	// name is in the cloud is the cloud's to say.
	squat := renderer.GroupLoadBalancerName("prod-eu", "platform", "edge")
	_, _, err = render(t, "--service", svc("    loadbalancer.example.com/name: "+squat+"\n"), "--config", "testdata/config.yaml")
	if err == nil || !strings.Contains(err.Error(), "the controller would refuse this Service") || !strings.Contains(err.Error(), "reserved for another owner") {
		t.Errorf("another namespace's group's default name: %v", err)
	}
	_, warnings, err = render(t, "--service", svc("    loadbalancer.example.com/name: shop-web\n"), "--config", "testdata/config.yaml")
	if err != nil || !strings.Contains(warnings, `load balancer name "shop-web" if a load balancer of another namespace or cluster has it`) {
		t.Errorf("an explicit name: %v, warnings %q", err, warnings)
	}
}

// A Service of target type ip renders its listeners' rules to its pod
// pools: the ids --pod-pool gives, a placeholder said on stderr for a
// port without one; a --pod-pool of a port it does not forward is an
// error. With --config and without.
func TestRenderPodPools(t *testing.T) {
	dir := t.TempDir()
	svc := filepath.Join(dir, "svc.yaml")
	err := os.WriteFile(svc, []byte(`kind: Service
metadata: {name: web, namespace: shop, uid: 6f1c1e2a-8d3b-4c5e-9f70-0123456789ab, annotations: {loadbalancer.example.com/target-type: ip}}
spec:
  type: LoadBalancer
  ports: [{name: http, port: 80}, {name: dns, port: 53, protocol: UDP}]
`), 0o644)
	if err != nil {
		t.Fatal(err)
	}
	for _, extra := range [][]string{nil, {"--config", "testdata/config.yaml"}} {
		args := append([]string{"--service", svc, "--nodes", "testdata/nodes.yaml", "--pod-pool", "80/tcp=tp-0080aa00aa00aa00"}, extra...)
		out, warnings, err := render(t, args...)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(out, `target_pool_id = "tp-0080aa00aa00aa00"`) || !strings.Contains(out, `target_pool_id = "tp-pods-53-udp"`) ||
			!strings.Contains(out, "targets              = []") {
			t.Errorf("%v: module:\n%s", extra, out)
		}
		if !strings.Contains(warnings, "pod pool id tp-pods-53-udp is a placeholder; pass --pod-pool 53/UDP=ID (examplectl plan pods:shop/web-53-udp)") ||
			strings.Contains(warnings, "80/TCP") {
			t.Errorf("%v: warnings %q", extra, warnings)
		}
		if _, _, err := render(t, append(args, "--pod-pool", "443/TCP=tp-1")...); err == nil || !strings.Contains(err.Error(), "forwards to no pod pool of that port") {
			t.Errorf("%v: a pool of a port it does not forward: %v", extra, err)
		}
	}
}
