package renderer

import (
	"errors"
	"math/rand/v2"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/zclconf/go-cty/cty"
	corev1 "k8s.io/api/core/v1"

	"github.com/example/cloud-provider-example/annotations"
	"github.com/example/cloud-provider-example/internal/tftest"
	"github.com/example/cloud-provider-example/lbmodel"
	"github.com/example/cloud-provider-example/modules"
	"github.com/example/cloud-provider-example/servicemodel"
)

func TestOrderIndependent(t *testing.T) {
	ports := []corev1.ServicePort{
		port("a", corev1.ProtocolTCP, 80, 30080), port("b", corev1.ProtocolUDP, 53, 30053),
		port("c", corev1.ProtocolTCP, 443, 30443), port("d", corev1.ProtocolUDP, 5353, 30054),
	}
	first, err := LoadBalancer(annotations.Read(testService(withPorts(ports...))), testNodes(), testConfig())
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(1, 2))
	for range 20 {
		ps, ns := slices.Clone(ports), testNodes()
		rng.Shuffle(len(ps), func(i, j int) { ps[i], ps[j] = ps[j], ps[i] })
		rng.Shuffle(len(ns), func(i, j int) { ns[i], ns[j] = ns[j], ns[i] })
		m, err := LoadBalancer(annotations.Read(testService(withPorts(ps...))), ns, testConfig())
		if err != nil {
			t.Fatal(err)
		}
		if m.Hash != first.Hash {
			t.Fatalf("order changed the output:\n%s\n---\n%s", first.Files[MainFile], m.Files[MainFile])
		}
	}
	routes := testRoutes()
	r1, _ := Routes(routes, testConfig())
	slices.Reverse(routes)
	if r2, _ := Routes(routes, testConfig()); r2.Hash != r1.Hash {
		t.Error("route order changed the output")
	}
}

func TestExcluded(t *testing.T) {
	for value, want := range map[string]bool{"": true, "true": true, "yes": true, "false": false, "0": false, "False": false} {
		n := testNode("n", "example://ex-west-1/i-aaa", ExcludeLabel, value)
		if got := Excluded(n); got != want {
			t.Errorf("Excluded with %s=%q = %v, want %v", ExcludeLabel, value, got, want)
		}
	}
	if Excluded(testNode("n", "example://ex-west-1/i-aaa")) {
		t.Error("a node without the label is excluded")
	}
}

func TestTargets(t *testing.T) {
	nodes := []*corev1.Node{
		testNode("a", "example://ex-west-1/i-aaa", "role", "ingress"),
		testNode("b", "example://ex-west-1/i-bbb", "role", "worker"),
		testNode("excluded", "example://ex-west-1/i-ccc", "role", "ingress", ExcludeLabel, ""),
		testNode("included", "example://ex-west-1/i-eee", "role", "ingress", ExcludeLabel, "false"),
		testNode("no-id", "", "role", "ingress"),
		testNode("foreign", "aws:///eu-west-1a/i-0123", "role", "ingress"),
		testNode("other-region", "example://ex-east-1/i-ddd", "role", "ingress"),
		testNode("dup", "example://ex-west-1/i-aaa", "role", "ingress"),
		nil,
	}
	svc := testService(withAnnotations(string(annotations.LBNodeSelector), "role=ingress"))
	ann, err := annotations.Parse(svc.Annotations)
	if err != nil {
		t.Fatal(err)
	}
	ids, warnings := lbmodel.InstanceIDs(lbmodel.PickNodes(nodes, ann.NodeSelector, "ex-west-1"))
	if !slices.Equal(ids, []string{"i-aaa", "i-eee"}) {
		t.Errorf("targets = %v", ids)
	}
	want := []string{`node "dup" skipped: instance i-aaa is already node "a"`, `node "foreign"`, `node "no-id"`, `node "other-region"`}
	if len(warnings) != len(want) {
		t.Fatalf("warnings = %q", warnings)
	}
	for i, w := range want {
		if !strings.HasPrefix(warnings[i], w) {
			t.Errorf("warning %d = %q, want prefix %q", i, warnings[i], w)
		}
	}

	m, err := LoadBalancer(annotations.Read(testService()), nil, testConfig())
	if err != nil {
		t.Fatal(err)
	}
	if len(m.Warnings) != 1 || !strings.Contains(m.Warnings[0], "no targets") {
		t.Errorf("warnings = %q", m.Warnings)
	}
}

func TestHealthCheck(t *testing.T) {
	udp := testService(withPorts(port("dns", corev1.ProtocolUDP, 53, 30053)))
	spec := mustSpec(t, udp)
	if spec.HealthCheck != nil {
		t.Errorf("UDP-only Service got a health check: %+v", spec.HealthCheck)
	}
	udp.Annotations = map[string]string{string(annotations.LBHealthCheckProtocol): "http"}
	if _, err := LoadBalancer(annotations.Read(udp), nil, testConfig()); !isInputError(err) {
		t.Errorf("health check without a port: err = %v", err)
	}
	udp.Annotations[string(annotations.LBHealthCheckPort)] = "8080"
	if hc := mustSpec(t, udp).HealthCheck; hc == nil || *hc != (lbmodel.HealthCheck{Protocol: "http", Path: "/healthz", Port: 8080,
		IntervalSeconds: 10, TimeoutSeconds: 5, HealthyThreshold: 3, UnhealthyThreshold: 3}) {
		t.Errorf("health check = %+v", hc)
	}

	local := testService(func(s *corev1.Service) {
		s.Spec.ExternalTrafficPolicy = corev1.ServiceExternalTrafficPolicyLocal
		s.Spec.HealthCheckNodePort = 32000
		s.Annotations = map[string]string{string(annotations.LBHealthCheckProtocol): "tcp"}
	})
	if hc := mustSpec(t, local).HealthCheck; *hc != (lbmodel.HealthCheck{Protocol: "tcp", Port: 32000,
		IntervalSeconds: 10, TimeoutSeconds: 5, HealthyThreshold: 3, UnhealthyThreshold: 3}) {
		t.Errorf("Local + tcp override = %+v", hc)
	}
}

func TestErrors(t *testing.T) {
	sctp := testService(withPorts(port("x", corev1.ProtocolSCTP, 9, 30009)))
	_, err := LoadBalancer(annotations.Read(sctp), nil, testConfig())
	var pe *UnsupportedProtocolError
	if !errors.As(err, &pe) || pe.Protocol != corev1.ProtocolSCTP || pe.Number != 9 {
		t.Errorf("SCTP: err = %v", err)
	}
	if !strings.HasPrefix(err.Error(), "render Service shop/web: port 9 (x): protocol SCTP") {
		t.Errorf("message %q", err)
	}

	_, err = LoadBalancer(annotations.Read(testService(withAnnotations(string(annotations.LBType), "huge"))), nil, testConfig())
	var ae *annotations.Error
	if !errors.As(err, &ae) || ae.Annotation != annotations.LBType {
		t.Errorf("annotation: err = %v", err)
	}

	for name, svc := range map[string]*corev1.Service{
		"no node port": testService(withPorts(port("a", corev1.ProtocolTCP, 80, 0))),
		"no ports":     testService(withPorts()),
		"duplicate": testService(withPorts(
			port("a", corev1.ProtocolTCP, 80, 30080), port("b", corev1.ProtocolTCP, 80, 30081))),
		"cluster ip":     testService(func(s *corev1.Service) { s.Spec.Type = corev1.ServiceTypeClusterIP }),
		"source range":   testService(func(s *corev1.Service) { s.Spec.LoadBalancerSourceRanges = []string{"10.0.0.0"} }),
		"bad utf8 label": testService(func(s *corev1.Service) { s.Name = "web\xff" }),
	} {
		if _, err := LoadBalancer(annotations.Read(svc), nil, testConfig()); !isInputError(err) {
			t.Errorf("%s: err = %v, want *lbmodel.InputError", name, err)
		}
	}
	if _, err := LoadBalancer(nil, nil, testConfig()); err == nil {
		t.Error("nil Service rendered")
	}
}

func TestConfigErrors(t *testing.T) {
	for name, f := range map[string]func(*Config){
		"no region":          func(c *Config) { c.Region = "" },
		"bad cluster id":     func(c *Config) { c.ClusterID = "a b" },
		"no cluster id":      func(c *Config) { c.ClusterID = "" },
		"default type":       func(c *Config) { c.DefaultLoadBalancerType = "xl" },
		"default algorithm":  func(c *Config) { c.DefaultAlgorithm = "random" },
		"version on git":     func(c *Config) { c.LoadBalancerModule = ModuleSource{"git::https://x/y.git", "1.0"} },
		"version on local":   func(c *Config) { c.RoutesModule = ModuleSource{Version: "1.0"} },
		"credential":         func(c *Config) { c.Backend = Backend{"pg", []Attr{{"conn_str", cty.StringVal("postgres://u:p@h/db")}}} },
		"credential (upper)": func(c *Config) { c.Backend = Backend{"s3", []Attr{{"Secret_Key", cty.StringVal("x")}}} },
		"bad backend type":   func(c *Config) { c.Backend = Backend{Type: `pg" {`} },
		"bad attr name":      func(c *Config) { c.Backend = Backend{"pg", []Attr{{"a b", cty.True}}} },
		"duplicate attr":     func(c *Config) { c.Backend = Backend{"pg", []Attr{{"a", cty.True}, {"a", cty.False}}} },
		"unknown attr":       func(c *Config) { c.Backend = Backend{"pg", []Attr{{"a", cty.UnknownVal(cty.String)}}} },
		"attrs without type": func(c *Config) { c.Backend = Backend{Attrs: []Attr{{"a", cty.True}}} },
		"utf8 endpoint":      func(c *Config) { c.Endpoint = "http://\xfe" },
	} {
		if _, err := LoadBalancer(annotations.Read(testService()), nil, withConfig(f)); !isInputError(err) {
			t.Errorf("%s: err = %v, want *lbmodel.InputError", name, err)
		}
	}
}

func TestLoadBalancerName(t *testing.T) {
	svc := testService()
	n := LoadBalancerName(svc, "prod-eu")
	if !regexp.MustCompile(`^k8s-[0-9a-f]{28}$`).MatchString(n) {
		t.Errorf("name %q", n)
	}
	if LoadBalancerName(svc, "prod-eu") != n || LoadBalancerName(svc, "prod-us") == n {
		t.Error("name must be stable per cluster and differ across clusters")
	}
	renamed := testService(func(s *corev1.Service) { s.Name = "other" })
	if LoadBalancerName(renamed, "prod-eu") != n {
		t.Error("name must follow the UID, not the Service name")
	}
	renamed.UID = ""
	if LoadBalancerName(renamed, "prod-eu") == n {
		t.Error("UID-less Services must hash their namespace/name")
	}
}

func TestIsRegistrySource(t *testing.T) {
	for src, want := range map[string]bool{
		"./modules/loadbalancer": false,
		"../modules/lb":          false,
		"/abs/path":              false,
		"git::https://git.example.com/m.git//lb?ref=v1.2.0":     false,
		"github.com/org/repo//lb":                               false,
		"github.com/org/repo/lb":                                false,
		"https://example.com/m.zip":                             false,
		"platform/loadbalancer/example":                         true,
		"registry.example.com/platform/loadbalancer/example":    true,
		"registry.example.com/platform/loadbalancer/example//x": true,
		"localhost:8080/platform/lb/example":                    true,
		"a/b":                                                   false,
		"a/b/c?ref=1":                                           false,
	} {
		if got := IsRegistrySource(src); got != want {
			t.Errorf("IsRegistrySource(%q) = %v, want %v", src, got, want)
		}
	}
}

func TestRoutes(t *testing.T) {
	for name, rs := range map[string][]lbmodel.Route{
		"host bits":   {{Destination: "10.244.1.1/24", TargetInstanceID: "i-1"}},
		"not a cidr":  {{Destination: "10.244.1.0", TargetInstanceID: "i-1"}},
		"upper ipv6":  {{Destination: "FD00::/64", TargetInstanceID: "i-1"}},
		"bad target":  {{Destination: "10.244.1.0/24", TargetInstanceID: "node-1"}},
		"duplicate":   {{Destination: "10.0.0.0/24", TargetInstanceID: "i-1"}, {Destination: "10.0.0.0/24", TargetInstanceID: "i-2"}},
		"4in6 prefix": {{Destination: "::ffff:10.0.0.0/120", TargetInstanceID: "i-1"}},
	} {
		if _, err := Routes(rs, testConfig()); !isInputError(err) {
			t.Errorf("%s: err = %v, want *lbmodel.InputError", name, err)
		}
	}
	if _, err := Routes(nil, withConfig(func(c *Config) { c.NetworkName = "" })); !isInputError(err) {
		t.Errorf("no network: err = %v", err)
	}

	// Node names only reach comments; hostile ones must stay there.
	rs := []lbmodel.Route{
		{Destination: "10.244.1.0/24", TargetInstanceID: "i-1", NodeName: "a\n}\nresource \"x\" \"y\" {"},
		{Destination: "fd00::/64", TargetInstanceID: "i-2", NodeName: "b\r\u2028${x}"},
		{Destination: "10.244.2.0/24", TargetInstanceID: "i-3"},
	}
	cfg := testConfig()
	m, err := Routes(rs, cfg)
	if err != nil {
		t.Fatal(err)
	}
	full, _ := cfg.withDefaults()
	checkRendered(t, m.Files[MainFile], expectation{
		module: RoutesModuleName, source: full.RoutesModule, cfg: full, outputs: routesOutputs,
		inputs: []input{
			{name: "network_name", value: cty.StringVal("cluster-net")},
			{name: "region", value: cty.StringVal("ex-west-1")},
			{name: "routes", value: cty.MapVal(map[string]cty.Value{
				"10.244.1.0/24": cty.StringVal("i-1"), "10.244.2.0/24": cty.StringVal("i-3"), "fd00::/64": cty.StringVal("i-2"),
			})},
		},
	})
	empty, err := Routes(nil, cfg)
	if err != nil || !strings.Contains(string(empty.Files[MainFile]), "routes       = {}") {
		t.Errorf("empty routes: %v\n%s", err, empty.Files[MainFile])
	}
}

func TestGoldenCasesRoundTrip(t *testing.T) {
	for _, c := range goldenCases() {
		m, err := c.render()
		if err != nil {
			t.Fatal(err)
		}
		file := string(m.Files[MainFile])
		if strings.Contains(file, "token") {
			t.Errorf("%s: mentions a token", c.name)
		}
	}
	svc := hostileService()
	cfg := withConfig(func(c *Config) { c.ClusterID = "x" })
	m, err := LoadBalancer(annotations.Read(svc), testNodes(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	full, _ := cfg.withDefaults()
	ann, _ := annotations.Parse(svc.Annotations)
	spec, _ := servicemodel.TranslateMember(svc, ann, testNodes(), full.Service())
	checkRendered(t, m.Files[MainFile], expectation{
		module: LoadBalancerModuleName, inputs: loadBalancerInputs(spec), source: full.LoadBalancerModule,
		cfg: full, outputs: loadBalancerOutputs,
	})
}

func TestHash(t *testing.T) {
	a := hashFiles(map[string][]byte{"a": []byte("bc")})
	if a != hashFiles(map[string][]byte{"a": []byte("bc")}) || a == hashFiles(map[string][]byte{"ab": []byte("c")}) {
		t.Error("hash must be stable and frame names and contents")
	}
}

// TestValidateRendered runs terraform validate on every golden case that
// calls the shipped modules: the rendered call matches the modules'
// variables and types.
func TestValidateRendered(t *testing.T) {
	mirror := tftest.Get(t)
	for _, c := range goldenCases() {
		m, err := c.render()
		if err != nil {
			t.Fatal(err)
		}
		src := string(m.Files[MainFile])
		if !strings.Contains(src, `source = "`+DefaultLoadBalancerModuleSource+`"`) &&
			!strings.Contains(src, `source = "`+DefaultRoutesModuleSource+`"`) {
			continue // git/registry sources cannot be fetched offline
		}
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			if _, err := modules.WriteTo(filepath.Join(dir, "modules")); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(dir, MainFile), m.Files[MainFile], 0o644); err != nil {
				t.Fatal(err)
			}
			mirror.Validate(t, dir)
		})
	}
}

func mustSpec(t *testing.T, svc *corev1.Service) lbmodel.LoadBalancer {
	t.Helper()
	cfg, _ := testConfig().withDefaults()
	ann, err := annotations.Parse(svc.Annotations)
	if err != nil {
		t.Fatal(err)
	}
	s, err := servicemodel.TranslateMember(svc, ann, nil, cfg.Service())
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func isInputError(err error) bool {
	var ie *lbmodel.InputError
	return errors.As(err, &ie)
}

func TestIPv6OnlyWarns(t *testing.T) {
	svc := testService(func(s *corev1.Service) { s.Spec.IPFamilies = []corev1.IPFamily{corev1.IPv6Protocol} })
	m, err := LoadBalancer(annotations.Read(svc), testNodes(), testConfig())
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(m.Files[MainFile]), `ip_family = "dualstack"`) || len(m.Warnings) != 1 {
		t.Errorf("IPv6-only: warnings %q\n%s", m.Warnings, m.Files[MainFile])
	}
}

// A Service with more ports than a load balancer may have listeners is
// refused before anything is built, naming the limit.
func TestListenerLimit(t *testing.T) {
	ports := func(n int) func(*corev1.Service) {
		var ps []corev1.ServicePort
		for i := range n {
			ps = append(ps, port("", corev1.ProtocolTCP, int32(1000+i), int32(30000+i)))
		}
		return withPorts(ps...)
	}
	if _, err := LoadBalancer(annotations.Read(testService(ports(MaxListeners))), nil, testConfig()); err != nil {
		t.Fatalf("%d ports: %v", MaxListeners, err)
	}
	for _, c := range []struct{ ports, limit int }{{MaxListeners + 1, 0}, {5000, 0}, {11, 10}} {
		cfg := testConfig()
		cfg.MaxListeners = c.limit
		_, err := LoadBalancer(annotations.Read(testService(ports(c.ports))), nil, cfg)
		var tm *TooManyListenersError
		want := c.limit
		if want == 0 {
			want = MaxListeners
		}
		if !errors.As(err, &tm) || tm.Ports != c.ports || tm.Limit != want || !strings.Contains(err.Error(), "loadBalancer.maxListeners") {
			t.Errorf("%d ports, limit %d: %v", c.ports, c.limit, err)
		}
	}
}
