package dataplane_test

import (
	"crypto/tls"
	"io"
	"log"
	"net/http"
	"net/netip"
	"net/url"
	"testing"

	"github.com/example/cloud-provider-example/exampleapi"
	"github.com/example/cloud-provider-example/internal/echo"
	"github.com/example/cloud-provider-example/simulator/dataplane"
	"github.com/example/cloud-provider-example/simulator/simtest"
)

// A backend with TLS is reached over TLS: the load balancer sends the
// rule's SNI name and verifies the target's certificate against the CA
// bundle, for that name or for one of the subject alt names (a DNS name
// or a URI); a wrong CA, a name the certificate lacks or a SAN it does
// not hold fails closed with 502, never reaching the target in
// cleartext. The target is echo's HTTPS server, as example-echo's.
func TestBackendTLS(t *testing.T) {
	ca := simtest.NewCert(t, simtest.CertOptions{CommonName: "backend CA", IsCA: true})
	other := simtest.NewCert(t, simtest.CertOptions{CommonName: "another CA", IsCA: true})
	spiffe := &url.URL{Scheme: "spiffe", Host: "abc.example.com", Path: "/test-identity"}
	leaf := simtest.NewCert(t, simtest.CertOptions{CommonName: "abc.example.com", Issuer: &ca, URIs: []*url.URL{spiffe}})
	srv := server(echo.Handler("tls-pod", "test"))
	srv.TLSConfig = &tls.Config{Certificates: []tls.Certificate{*keyPair(t, leaf)}, MinVersion: tls.VersionTLS12}
	srv.ErrorLog = log.New(io.Discard, "", 0) // the refused handshakes are the test's point
	serve(t, "10.0.0.7:30443", srv)
	httpBackend(t, "10.0.0.7:30080", "plain-pod")

	backend := func(path string, b *exampleapi.BackendTLS) exampleapi.Rule {
		return exampleapi.Rule{ListenerPort: 80, PathType: exampleapi.PathExact, Path: path,
			Backends: []exampleapi.RuleBackend{{TargetPoolID: "tp-a", Port: 30443, Weight: 1, TLS: b}}}
	}
	good := func(sans ...string) *exampleapi.BackendTLS {
		return &exampleapi.BackendTLS{CABundle: other.CertPEM + ca.CertPEM, ServerName: "abc.example.com", SubjectAltNames: sans}
	}
	rules := []exampleapi.Rule{
		backend("/tls", good()),
		backend("/wrong-ca", &exampleapi.BackendTLS{CABundle: other.CertPEM, ServerName: "abc.example.com"}),
		backend("/wrong-host", &exampleapi.BackendTLS{CABundle: ca.CertPEM, ServerName: "mismatch.example.com"}),
		backend("/san-dns", good("abc.example.com")),
		backend("/san-uri", good("spiffe://abc.example.com/test-identity")),
		backend("/san-dns-mismatch", good("dce.example.com")),
		backend("/san-uri-mismatch", good("spiffe://def.example.com/test-identity")),
		backend("/sans", good("spiffe://def.example.com/test-identity", "abc.example.com")),
		// The TLS port spoken to in cleartext: the target refuses it.
		backend("/cleartext", nil),
	}
	for i := range rules {
		rules[i].Priority = i + 1
	}
	lb := newLB("lb-tls", []exampleapi.Listener{{Protocol: "http", Port: 80, TargetPort: 30080}}, rules)
	start(t, &dataplane.Plane{LoadBalancers: []dataplane.LoadBalancer{{LoadBalancer: lb, Addrs: []netip.Addr{lbAddr},
		Pools: map[string][]dataplane.Target{"tp-a": {target("i-1", "10.0.0.7")}}}}})

	base := "http://" + lbAddr.String()
	for _, path := range []string{"/tls", "/san-dns", "/san-uri", "/sans"} {
		r, a := get(t, noRedirects, base+path, "front.example")
		if r.StatusCode != http.StatusOK || a.Pod != "tls-pod" || a.TLS == nil || a.TLS.ServerName != "abc.example.com" || a.Host != "front.example" {
			t.Errorf("%s: %d, answered by %q over %+v for Host %q; want 200 by tls-pod over TLS with SNI abc.example.com, the client's Host",
				path, r.StatusCode, a.Pod, a.TLS, a.Host)
		}
	}
	for _, path := range []string{"/wrong-ca", "/wrong-host", "/san-dns-mismatch", "/san-uri-mismatch"} {
		if r, a := get(t, noRedirects, base+path, ""); r.StatusCode != http.StatusBadGateway || a.Pod != "" {
			t.Errorf("%s: %d (pod %q), want 502 without reaching the target", path, r.StatusCode, a.Pod)
		}
	}
	if r, _ := get(t, noRedirects, base+"/cleartext", ""); r.StatusCode == http.StatusOK {
		t.Errorf("/cleartext: %d, want the TLS port to refuse HTTP", r.StatusCode)
	}
}
