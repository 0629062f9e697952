package renderer

import (
	"errors"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"

	"github.com/example/cloud-provider-example/annotations"
	"github.com/example/cloud-provider-example/lbmodel"
	"github.com/example/cloud-provider-example/servicemodel"
)

func TestTLSRefusals(t *testing.T) {
	for _, c := range []struct {
		name string
		svc  *corev1.Service
		cfg  Config
		want string
	}{
		{"secret not read", httpsService(), withConfig(func(c *Config) {
			c.Certificates = map[string]string{"web-tls": testCertificates()["web-tls"]}
		}), `annotation loadbalancer.example.com/tls-secrets: "api-tls" no certificate was read from Secret shop/api-tls`},
		{"no certificates at all", httpsService(), testConfig(), `"web-tls" no certificate was read from Secret shop/web-tls`},
		{"https port not in the Service", testService(withAnnotations(
			string(annotations.LBHTTPSPorts), "443", string(annotations.LBCertificateIDs), "cert-1",
		)), testConfig(), `annotation loadbalancer.example.com/https-ports: "443" is not a TCP port of the Service`},
		{"http port that is udp", testService(withPorts(port("dns", corev1.ProtocolUDP, 53, 30053), port("web", corev1.ProtocolTCP, 80, 30080)),
			withAnnotations(string(annotations.LBHTTPPorts), "53")), testConfig(),
			`annotation loadbalancer.example.com/http-ports: "53" is not a TCP port of the Service`},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := LoadBalancer(annotations.Read(c.svc), testNodes(), c.cfg)
			var ie *lbmodel.InputError
			if !errors.As(err, &ie) {
				t.Fatalf("got %v, want an lbmodel.InputError", err)
			}
			if !strings.Contains(err.Error(), c.want) {
				t.Errorf("got %q, want it to contain %q", err, c.want)
			}
			if err := servicemodel.Check(annotations.Read(c.svc), c.cfg.Service()); c.name != "secret not read" && c.name != "no certificates at all" && err == nil {
				t.Errorf("CheckService accepts what rendering refuses")
			}
		})
	}
}

// The private keys are never an input: a Service's main.tf holds the
// certificates and a reference to the ephemeral variable, nothing more.
func TestTLSRendersNoKeyMaterial(t *testing.T) {
	m, err := LoadBalancer(annotations.Read(httpsService()), testNodes(), withConfig(func(c *Config) { c.Certificates = testCertificates() }))
	if err != nil {
		t.Fatal(err)
	}
	main := string(m.Files[MainFile])
	for _, want := range []string{`private_keys = ephemeral.example_private_keys.tls.keys`, `ephemeral "example_private_keys" "tls"`, `certificates = module.certificates.ids`} {
		if !strings.Contains(main, want) {
			t.Errorf("main.tf lacks %q", want)
		}
	}
	if strings.Contains(main, "PRIVATE KEY") {
		t.Error("main.tf holds a private key")
	}
}

// A destroy renders without the Secrets: no certificates, no variable, the
// Service's TLS ports as tcp, and no error for Secrets it cannot read.
func TestSkipTLSSecrets(t *testing.T) {
	m, err := LoadBalancer(annotations.Read(httpsService()), testNodes(), withConfig(func(c *Config) { c.SkipTLSSecrets = true }))
	if err != nil {
		t.Fatal(err)
	}
	main := string(m.Files[MainFile])
	for _, absent := range []string{TLSKeysResource, `module "certificates"`, "certificate_ids", "redirect_to_https_port", "sticky_sessions"} {
		if strings.Contains(main, absent) {
			t.Errorf("main.tf has %s", absent)
		}
	}
	if n := strings.Count(main, `= "tcp"`); n != 3 {
		t.Errorf("%d tcp listeners, want 80, 443 and 8443 as tcp", n)
	}
	// Certificates by id need no Secret: kept.
	ids := testService(withPorts(port("https", corev1.ProtocolTCP, 443, 30443)),
		withAnnotations(string(annotations.LBHTTPSPorts), "443", string(annotations.LBCertificateIDs), "cert-1"))
	m, err = LoadBalancer(annotations.Read(ids), testNodes(), withConfig(func(c *Config) { c.SkipTLSSecrets = true }))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(m.Files[MainFile]), `"cert-1"`) {
		t.Error("certificate ids dropped without TLS Secrets")
	}
}

// tcp, http and https listeners share the TCP ports: in a group, an https
// 443 after another member's tcp 443 is a conflict, not a broken load
// balancer.
func TestGroupConflictAcrossTCPProtocols(t *testing.T) {
	a := groupMemberSvc("shop", "a", 1, withPorts(port("tls", corev1.ProtocolTCP, 443, 31443)))
	b := groupMemberSvc("shop", "b", 2, withPorts(port("https", corev1.ProtocolTCP, 443, 32443)),
		withAnnotations(string(annotations.LBHTTPSPorts), "443", string(annotations.LBCertificateIDs), "cert-1"))
	c := groupMemberSvc("shop", "c", 3, withPorts(port("https", corev1.ProtocolTCP, 8443, 32444)),
		withAnnotations(string(annotations.LBHTTPSPorts), "8443", string(annotations.LBTLSSecrets), "c-tls"))
	_, rep, err := GroupLoadBalancer(lbmodel.Group{Namespace: "shop", Name: "g", Members: []*corev1.Service{a, b, c}}, testNodes(), testConfig())
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Conflicts) != 1 || rep.Conflicts[0].Service != b || rep.Conflicts[0].Listener != "https/443" || rep.Conflicts[0].Winner != a {
		t.Errorf("conflicts = %+v, want b's https/443 lost to a", rep.Conflicts)
	}
	if len(rep.Excluded) != 1 || rep.Excluded[0].Service != c || !strings.Contains(rep.Excluded[0].Err.Error(), "not supported on a member of a load balancer group") {
		t.Errorf("excluded = %+v, want c (tls-secrets in a group)", rep.Excluded)
	}
}
