package renderer

import (
	"context"
	"flag"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/zclconf/go-cty/cty"
	corev1 "k8s.io/api/core/v1"

	"github.com/example/cloud-provider-example/annotations"
	"github.com/example/cloud-provider-example/exampleapi"
	"github.com/example/cloud-provider-example/internal/tftest"
	"github.com/example/cloud-provider-example/lbmodel"
)

var update = flag.Bool("update", false, "rewrite testdata/*.golden")

type goldenCase struct {
	name   string
	render func() (*Module, error)
}

func lbCase(name string, svc *corev1.Service, cfg Config) goldenCase {
	return goldenCase{name, func() (*Module, error) { return LoadBalancer(annotations.Read(svc), testNodes(), cfg) }}
}

func withConfig(f func(*Config)) Config {
	c := testConfig()
	f(&c)
	return c
}

// testGateway has an http listener on 80 with two routes' rules (one
// with a query parameter, response header changes and session
// persistence, one weighted
// between an h2c backend and one re-encrypted, rewritten, with timeouts
// and a retry, answering CORS, one redirect), an https one on 443 and a tcp one.
// testCA is a CA certificate a backend's TLS verifies against.
const testCA = `-----BEGIN CERTIFICATE-----
MIIBjTCCATOgAwIBAgIUY09v/i0d2cMrH9oJqRVHE9cTE5swCgYIKoZIzj0EAwIw
GzEZMBcGA1UEAwwQcmVuZGVyZXIgdGVzdCBDQTAgFw0yNjEyMDMxOTI3MzlaGA8y
MTI2MTEwOTE5MjczOVowGzEZMBcGA1UEAwwQcmVuZGVyZXIgdGVzdCBDQTBZMBMG
ByqGSM49AgEGCCqGSM49AwEHA0IABPEwZV28FI4zwaYckEFhb9qi5p7XBYcChaNS
eQNaYajsfkoDB3kKGTb6dIIRMOBIeJDJjb7KIUeekxyJQZlTvV2jUzBRMB0GA1Ud
DgQWBBTBhtBt4VwDfHJtNrJydwn4dax/oTAfBgNVHSMEGDAWgBTBhtBt4VwDfHJt
NrJydwn4dax/oTAPBgNVHRMBAf8EBTADAQH/MAoGCCqGSM49BAMCA0gAMEUCIQCs
aO69Nd60MkpxqErG0v55MVldt0orQaM4E86aVZ2B8QIgNxwa3RPjJqjoXM3IlOT5
pmAw4CbbYdQsIwGGRPnwdqY=
-----END CERTIFICATE-----
`

func testGateway() lbmodel.LoadBalancer {
	return lbmodel.LoadBalancer{Namespace: "infra", Name: "gw", UID: "0d3c9a7e-1b2f-4e5d-8c6b-a1b2c3d4e5f6",
		Listeners: []lbmodel.Listener{{Protocol: "tcp", Port: 5432, TargetPort: 30432}, {Protocol: "http", Port: 80}},
		Rules: []lbmodel.Rule{
			{Name: "team-a/shop/0.0:80@a.example", ListenerPort: 80, Priority: 1, Hostname: "a.example", PathType: "prefix", Path: "/api",
				QueryParams:     map[string]string{"version": "2"},
				Backends:        []lbmodel.Backend{{TargetPoolID: "tp-0a1b2c3d4e5f6a7b", Port: 30001, Weight: 1}},
				ResponseHeaders: &lbmodel.HeaderChanges{Set: map[string]string{"Cache-Control": "no-store"}},
				SessionPersistence: &exampleapi.SessionPersistence{Name: "shop-session", AbsoluteTimeoutSeconds: 3600,
					Lifetime: exampleapi.PermanentLifetime}},
			{Name: "team-a/shop/1.0:80@a.example", ListenerPort: 80, Priority: 2, Hostname: "a.example", PathType: "prefix", Path: "/web",
				Backends: []lbmodel.Backend{{TargetPoolID: "tp-0a1b2c3d4e5f6a7b", Port: 30002, Weight: 80, Protocol: "h2c"},
					{TargetPoolID: "tp-0a1b2c3d4e5f6a7b", Port: 30003, Weight: 20,
						TLS: &exampleapi.BackendTLS{CABundle: testCA, ServerName: "web.internal", SubjectAltNames: []string{"spiffe://example.test/web"}}}},
				RequestHeaders: &lbmodel.HeaderChanges{Set: map[string]string{"X-Route": "web"}},
				Rewrite:        &lbmodel.URLRewrite{Hostname: "web.internal", PathPrefix: "/"},
				Timeouts:       &lbmodel.Timeouts{RequestMS: 10000, BackendRequestMS: 2500},
				Retry:          &lbmodel.Retry{Attempts: 2, StatusCodes: []int{502, 503}, BackoffMS: 100},
				CORS: &exampleapi.CORS{AllowOrigins: []string{"https://www.foo.com", "https://*.bar.com"}, AllowMethods: []string{"GET"},
					ExposeHeaders: []string{"X-Request-Id"}, AllowCredentials: true, MaxAgeSeconds: 600}},
			{Name: "team-b/old/0.0:80@any", ListenerPort: 80, Priority: 3, PathType: "prefix", Path: "/",
				Redirect: &lbmodel.HTTPRedirect{Scheme: "https", PathPrefix: "/", StatusCode: 301}},
		}}
}

func goldenCases() []goldenCase {
	return []goldenCase{
		{"gateway", func() (*Module, error) { return RenderGateway(testGateway(), testConfig()) }},
		{"gateway-https", func() (*Module, error) {
			g := testGateway()

			g.Certificates = map[string]string{"infra/shop-tls": testCertificates()["api-tls"]}
			g.Listeners = append(g.Listeners, lbmodel.Listener{Protocol: "https", Port: 443, Certificates: []string{"infra/shop-tls"}})
			// A route's rule the load balancer holds until its rule set
			// does (held_routes).
			g.Rules = append(g.Rules, lbmodel.Rule{Name: "team-a/shop/0.0:443@a.example", ListenerPort: 443, Priority: 1, Hostname: "a.example",
				PathType: "prefix", Path: "/api", Backends: []lbmodel.Backend{{TargetPoolID: "tp-0a1b2c3d4e5f6a7b", Port: 30001, Weight: 1}},
				Route: &lbmodel.RouteRef{Kind: "HTTPRoute", Namespace: "team-a", Name: "shop"}})
			return RenderGateway(g, testConfig())
		}},
		{"gateway-l4", func() (*Module, error) {
			// TLS passthrough routed by SNI name, a TCP and a UDP listener
			// on one port, each with its route's one rule.
			pool := "tp-0a1b2c3d4e5f6a7b"
			return RenderGateway(lbmodel.LoadBalancer{Namespace: "infra", Name: "gw", UID: "0d3c9a7e-1b2f-4e5d-8c6b-a1b2c3d4e5f6",
				Listeners: []lbmodel.Listener{{Protocol: "tls", Port: 443}, {Protocol: "tcp", Port: 53}, {Protocol: "udp", Port: 53}},
				Rules: []lbmodel.Rule{
					{Name: "team-a/dns/UDPRoute:53", ListenerPort: 53, ListenerProtocol: "udp", Priority: 1,
						Backends: []lbmodel.Backend{{TargetPoolID: pool, Port: 30053, Weight: 1}}},
					{Name: "team-a/dns-tcp/TCPRoute:53", ListenerPort: 53, Priority: 1,
						Backends: []lbmodel.Backend{{TargetPoolID: pool, Port: 30054, Weight: 3}, {TargetPoolID: pool, Port: 30055, Weight: 1}}},
					{Name: "team-b/db/TLSRoute:443@db.example", ListenerPort: 443, Priority: 1, Hostname: "db.example",
						Backends: []lbmodel.Backend{{TargetPoolID: pool, Port: 30443, Weight: 1}}},
				}}, testConfig())
		}},
		lbCase("simple-tcp", testService(), testConfig()),
		lbCase("multi-port", testService(withPorts(
			port("https", corev1.ProtocolTCP, 443, 30443),
			port("dns", corev1.ProtocolUDP, 53, 30053),
			port("http", corev1.ProtocolTCP, 80, 30080),
			port("dns-tcp", corev1.ProtocolTCP, 53, 30054),
		)), testConfig()),
		lbCase("local-traffic-policy", testService(func(s *corev1.Service) {
			s.Spec.ExternalTrafficPolicy = corev1.ServiceExternalTrafficPolicyLocal
			s.Spec.HealthCheckNodePort = 32123
		}), testConfig()),
		lbCase("dual-stack", testService(func(s *corev1.Service) {
			s.Spec.IPFamilies = []corev1.IPFamily{corev1.IPv6Protocol, corev1.IPv4Protocol}
		}), testConfig()),
		lbCase("internal-annotations", testService(withAnnotations(
			string(annotations.LBInternal), "true",
			string(annotations.LBType), "lb-medium",
			string(annotations.LBAlgorithm), "least_connections",
			string(annotations.LBProxyProtocol), "true",
			string(annotations.LBName), "shop-web-internal",
			string(annotations.LBNodeSelector), "role=ingress",
			string(annotations.LBHealthCheckPath), "/readyz",
			string(annotations.LBHealthCheckPort), "30081",
			string(annotations.LBHealthCheckInterval), "15s",
			string(annotations.LBHealthCheckTimeout), "3s",
			string(annotations.LBHealthCheckHealthyThreshold), "2",
			string(annotations.LBHealthCheckUnhealthyThreshold), "4",
		)), testConfig()),
		lbCase("source-ranges", testService(
			func(s *corev1.Service) {
				s.Spec.LoadBalancerSourceRanges = []string{"2001:db8::/32", "203.0.113.0/24", "198.51.100.7/32"}
			},
			withAnnotations(string(annotations.LegacySourceRanges), "10.0.0.0/8"), // the field wins
		), testConfig()),
		lbCase("source-ranges-annotation", testService(
			withAnnotations(string(annotations.LegacySourceRanges), "192.0.2.0/24, 10.0.0.0/8"),
		), testConfig()),
		lbCase("adopt", testService(withAnnotations(
			string(annotations.LBAdoptID), "lb-00ff00ff00ff00ff",
			string(annotations.LBName), "legacy-shop-web",
		)), testConfig()),
		lbCase("hostile", hostileService(), withConfig(func(c *Config) { c.ClusterID = "x" })),
		lbCase("backend-local", testService(), withConfig(func(c *Config) {
			c.Backend = Backend{Type: "local", Attrs: []Attr{{"path", cty.StringVal("/var/lib/example-ccm/state/shop/web.tfstate")}}}
		})),
		lbCase("backend-pg", testService(), withConfig(func(c *Config) {
			c.Backend = Backend{Type: "pg", Attrs: []Attr{
				{"schema_name", cty.StringVal("ccm_prod_eu")},
				{"skip_schema_creation", cty.True},
			}}
		})),
		lbCase("backend-kubernetes", testService(), withConfig(func(c *Config) {
			c.Backend = Backend{Type: "kubernetes", Attrs: []Attr{
				{"secret_suffix", cty.StringVal("svc-shop-web")},
				{"namespace", cty.StringVal("kube-system")},
				{"in_cluster_config", cty.True},
				{"labels", cty.MapVal(map[string]cty.Value{"app.kubernetes.io/managed-by": cty.StringVal("example-ccm")})},
			}}
		})),
		lbCase("module-git", testService(), withConfig(func(c *Config) {
			c.LoadBalancerModule = ModuleSource{Source: "git::https://git.example.com/platform/tf-modules.git//loadbalancer?ref=v1.4.2"}
		})),
		lbCase("module-registry", testService(), withConfig(func(c *Config) {
			c.LoadBalancerModule = ModuleSource{Source: "registry.example.com/platform/loadbalancer/example", Version: "~> 1.4"}
		})),
		lbCase("modules-digest", testService(), withConfig(func(c *Config) {
			c.ModulesDigest = "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"
		})),
		lbCase("target-pool", testService(), withConfig(func(c *Config) { c.TargetPoolID = "tp-00aa00aa00aa00aa" })),
		// The delay asked of the pool is an output: reviewed with the plan.
		lbCase("deregistration-delay", testService(withAnnotations(string(annotations.LBDeregistrationDelay), "2m")),
			withConfig(func(c *Config) { c.TargetPoolID = "tp-00aa00aa00aa00aa" })),
		lbCase("https-tls-secrets", httpsService(), withConfig(func(c *Config) { c.Certificates = testCertificates() })),
		lbCase("https-skip-tls-secrets", httpsService(), withConfig(func(c *Config) { c.SkipTLSSecrets = true })),
		lbCase("https-certificate-ids", testService(withPorts(
			port("http", corev1.ProtocolTCP, 80, 30080),
			port("https", corev1.ProtocolTCP, 443, 30443),
		), withAnnotations(
			string(annotations.LBHTTPPorts), "80",
			string(annotations.LBHTTPSPorts), "443",
			string(annotations.LBCertificateIDs), "cert-00ff00ff00ff00ff,cert-11ee11ee11ee11ee",
			string(annotations.LBStickySessions), "true",
		)), testConfig()),
		{"target-pools", func() (*Module, error) {
			return TargetPools([]lbmodel.Pool{
				{Selection: "role=ingress", Targets: []string{"i-0b0b0b0b0b0b0b0b", "i-0a0a0a0a0a0a0a0a"}},
				{Selection: "", Targets: []string{"i-0b0b0b0b0b0b0b0b", "i-0a0a0a0a0a0a0a0a", "i-1c1c1c1c1c1c1c1c"}},
				{Selection: "topology.kubernetes.io/zone in (ex-west-1a)"},
			}, testConfig())
		}},
		{"group", func() (*Module, error) {
			m, _, err := GroupLoadBalancer(testGroup(), testNodes(), withConfig(func(c *Config) { c.TargetPoolID = "tp-00aa00aa00aa00aa" }))
			return m, err
		}},
		{"target-pools-none", func() (*Module, error) { return TargetPools(nil, testConfig()) }},
		{"target-pools-drain", func() (*Module, error) {
			// A pool whose Services ask for the cluster's delay renders
			// none of its own; one asking longer does.
			own, same := 2*time.Minute, 45*time.Second
			return TargetPools([]lbmodel.Pool{
				{Selection: "", Targets: []string{"i-0a0a0a0a0a0a0a0a"}, Delay: &same},
				{Selection: "role=ingress", Targets: []string{"i-0b0b0b0b0b0b0b0b"}, Delay: &own, AskedBy: []string{"Service shop/web", "load balancer group shop/front"}},
			}, withConfig(func(c *Config) { c.DeregistrationDelay = 45 * time.Second }))
		}},
		{"address-held", func() (*Module, error) {
			return AddressRoot(lbmodel.Address{Namespace: "shop", Name: "k8s-a-0123456789abcdef0123456789", LoadBalancerID: "lb-00aa00aa00aa00aa", Holder: "Service shop/blue"}, testConfig())
		}},
		{"address-kept", func() (*Module, error) {
			return AddressRoot(lbmodel.Address{Namespace: "shop", Name: "shop-www", Family: "ipv6", ImportID: "addr-00bb00bb00bb00bb"}, testConfig())
		}},
		// Target type ip: each listener's rule forwards to its port's pod
		// pool, which the engine names after the translation.
		{"service-pods", func() (*Module, error) {
			svc := testService(withPorts(port("http", corev1.ProtocolTCP, 80, 0), port("dns", corev1.ProtocolUDP, 53, 0)),
				withAnnotations(string(annotations.LBTargetType), annotations.TargetTypeIP))
			return LoadBalancerOnPods(annotations.Read(svc), map[lbmodel.ServicePort]string{
				{Namespace: svc.Namespace, Service: svc.Name, Port: 80, Protocol: corev1.ProtocolTCP}: "tp-0080aa00aa00aa00",
				{Namespace: svc.Namespace, Service: svc.Name, Port: 53, Protocol: corev1.ProtocolUDP}: "tp-0053aa00aa00aa00"}, testConfig())
		}},
		{"pod-pool", func() (*Module, error) {
			return PodPoolRoot(lbmodel.PodPool{ServicePort: lbmodel.ServicePort{Namespace: "shop", Service: "web", Port: 80, Protocol: corev1.ProtocolTCP},
				Targets: []string{"10.244.2.5:8080", "10.244.1.5:8080", "[fd00:244::5]:8080"}, Delay: new(45 * time.Second)}, testConfig())
		}},
		// One route's rules on its Gateway's load balancer (ADR 28):
		// keyed, forwarding to pods, answering themselves, redirecting.
		{"rule-set", func() (*Module, error) {
			return RuleSetRoot(lbmodel.RuleSet{GatewayNamespace: "infra", Gateway: "gw", RouteKind: "HTTPRoute", RouteNamespace: "shop",
				Route: "web", LoadBalancerID: "lb-00aa00aa00aa00aa", Rules: []lbmodel.Rule{
					{Name: "shop-web-0", ListenerPort: 80, OrderKey: "0014100140001200001170000000001shop/web!00000000", Hostname: "shop.example.com",
						PathType: "prefix", Path: "/", Backends: []lbmodel.Backend{{TargetPoolID: "tp-0080aa00aa00aa00", Weight: 1}}},
					{Name: "shop-web-1", ListenerPort: 443, OrderKey: "0014100140001200001170000000001shop/web!00010000", Hostname: "shop.example.com",
						PathType: "exact", Path: "/old", FixedResponse: &lbmodel.FixedResponse{StatusCode: 410}},
					{Name: "shop-web-2", ListenerPort: 80, OrderKey: "0014100140001200001170000000001shop/web!00020000", Hostname: "shop.example.com",
						Redirect: &lbmodel.HTTPRedirect{Scheme: "https", StatusCode: 301}},
				}}, testConfig())
		}},
		{"retained", func() (*Module, error) { return Retained(testService(), testConfig()) }},
		{"retained-address", func() (*Module, error) {
			return RetainedAddress(lbmodel.Address{Namespace: "shop", Name: "k8s-a-0123456789abcdef0123456789"}, testConfig())
		}},
		{"routes", func() (*Module, error) { return Routes(testRoutes(), testConfig()) }},
		{"routes-network-id", func() (*Module, error) {
			return Routes(testRoutes()[:1], withConfig(func(c *Config) { c.NetworkID = "net-0123456789abcdef" }))
		}},
	}
}

func testRoutes() []lbmodel.Route {
	return []lbmodel.Route{
		{Destination: "10.244.2.0/24", TargetInstanceID: "i-0b0b0b0b0b0b0b0b", NodeName: "worker-b"},
		{Destination: "fd00:10:244:1::/64", TargetInstanceID: "i-0a0a0a0a0a0a0a0a", NodeName: "worker-a"},
		{Destination: "10.244.1.0/24", TargetInstanceID: "i-0a0a0a0a0a0a0a0a", NodeName: "worker-a"},
		{Destination: "fd00:10:244:2::/64", TargetInstanceID: "i-0b0b0b0b0b0b0b0b", NodeName: "worker-b"},
	}
}

// hostileService has every string a user controls set to something that
// would break naive HCL templating.
func hostileService() *corev1.Service {
	return testService(
		func(s *corev1.Service) {
			s.Namespace = `ns"quote\back`
			s.Name = "name\n# injected comment\n}"
			s.UID = "${file(\"/etc/passwd\")}%{ if true }x%{ endif }"
		},
		withAnnotations(string(annotations.LBHealthCheckPath), `/h"${var.x}%{for}\é✓`),
	)
}

func TestGolden(t *testing.T) {
	for _, c := range goldenCases() {
		t.Run(c.name, func(t *testing.T) {
			m, err := c.render()
			if err != nil {
				t.Fatal(err)
			}
			got := m.Files[MainFile]
			path := filepath.Join("testdata", c.name+".golden")
			if *update {
				if err := os.WriteFile(path, got, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(path)
			if err != nil {
				t.Fatalf("%v (run go test ./renderer -update)", err)
			}
			if string(got) != string(want) {
				t.Errorf("%s differs from the rendered module (run go test ./renderer -update and review the diff):\n%s", path, got)
			}
			again, _ := c.render()
			if again.Hash != m.Hash || string(again.Files[MainFile]) != string(got) {
				t.Errorf("rendering twice differs")
			}
		})
	}
}

// TestGoldenTerraformFmt: what we render is byte-for-byte what terraform fmt
// would write.
func TestGoldenTerraformFmt(t *testing.T) {
	dir := t.TempDir()
	for _, c := range goldenCases() {
		m, err := c.render()
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, c.name+".tf"), m.Files[MainFile], 0o644); err != nil {
			t.Fatal(err)
		}
	}
	tf := tftest.Get(t).Exec(t, dir)
	ok, files, err := tf.FormatCheck(context.Background())
	if err != nil {
		t.Fatalf("terraform fmt -check: %v", err)
	}
	if !ok {
		t.Errorf("terraform fmt would change: %v", files)
	}
}

// httpsService serves http on 80 (redirecting), https on 443 and 8443
// with two TLS Secrets' certificates and one by id, and DNS over udp.
func httpsService() *corev1.Service {
	return testService(withPorts(
		port("http", corev1.ProtocolTCP, 80, 30080),
		port("https", corev1.ProtocolTCP, 443, 30443),
		port("admin", corev1.ProtocolTCP, 8443, 30444),
		port("dns", corev1.ProtocolUDP, 53, 30053),
	), withAnnotations(
		string(annotations.LBHTTPPorts), "80",
		string(annotations.LBHTTPSPorts), "8443,443",
		string(annotations.LBTLSSecrets), "web-tls,api-tls",
		string(annotations.LBCertificateIDs), "cert-00ff00ff00ff00ff",
		string(annotations.LBRedirectHTTPToHTTPS), "true",
		string(annotations.LBStickySessions), "true",
		string(annotations.LBStickySessionsCookieTTL), "10m",
		string(annotations.LBHealthCheckProtocol), "https",
	))
}

// testCertificates are the certificates of httpsService's Secrets: only
// their text matters to the renderer (the controller checks them).
func testCertificates() map[string]string {
	return map[string]string{
		"web-tls": "-----BEGIN CERTIFICATE-----\nMIIBwebLEAF\n-----END CERTIFICATE-----\n-----BEGIN CERTIFICATE-----\nMIIBwebCA\n-----END CERTIFICATE-----\n",
		"api-tls": "-----BEGIN CERTIFICATE-----\nMIIBapiLEAF\n-----END CERTIFICATE-----\n",
	}
}
