package dataplane_test

import (
	"bufio"
	"crypto/tls"
	"crypto/x509"
	"io"
	"net"
	"net/http"
	"net/netip"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/example/cloud-provider-example/exampleapi"
	"github.com/example/cloud-provider-example/internal/echo"
	"github.com/example/cloud-provider-example/simulator/dataplane"
	"github.com/example/cloud-provider-example/simulator/simtest"
)

// keyPair is c as the data plane holds it.
func keyPair(t *testing.T, c simtest.Cert) *tls.Certificate {
	t.Helper()
	kp, err := tls.X509KeyPair([]byte(c.CertPEM), []byte(c.KeyPEM))
	if err != nil {
		t.Fatal(err)
	}
	return &kp
}

// tlsBackend answers each TLS connection at addr with name, under cert.
func tlsBackend(t *testing.T, addr, name string, cert *tls.Certificate) {
	t.Helper()
	go echo.ServeTCP(tls.NewListener(listen(t, "tcp", addr), &tls.Config{Certificates: []tls.Certificate{*cert}}), name+"\n")
}

// A tcp listener relays connections (with the PROXY protocol header where
// it asks), a udp one datagrams, a tls one passes TLS through by the SNI
// name, and an https one terminates TLS with the certificate of the SNI
// name.
func TestStreamsAndDatagrams(t *testing.T) {
	ca := simtest.NewCert(t, simtest.CertOptions{CommonName: "test CA", IsCA: true})
	roots := x509.NewCertPool()
	roots.AppendCertsFromPEM([]byte(ca.CertPEM))
	certA := keyPair(t, simtest.NewCert(t, simtest.CertOptions{CommonName: "a.example.test", Issuer: &ca}))
	certB := keyPair(t, simtest.NewCert(t, simtest.CertOptions{CommonName: "b.example.test", Issuer: &ca}))

	go echo.ServeTCP(listen(t, "tcp", "10.0.0.4:30432"), "")
	udp, err := net.ListenPacket("udp", "10.0.0.4:30053")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = udp.Close() })
	go echo.ServeUDP(udp, "udp:")
	tlsBackend(t, "10.0.0.5:9443", "backend-a", certA)
	tlsBackend(t, "10.0.0.6:9443", "backend-b", certB)
	httpBackend(t, "10.0.0.4:30080", "web")

	lb := newLB("lb-2", []exampleapi.Listener{
		{Protocol: "tcp", Port: 5432, TargetPort: 30432, ProxyProtocol: true},
		{Protocol: "udp", Port: 53, TargetPort: 30053},
		{Protocol: "tls", Port: 8443, TargetPort: 9443},
		{Protocol: "https", Port: 443, TargetPort: 30080, CertificateIDs: []string{"cert-a", "cert-b"}},
	}, []exampleapi.Rule{
		{ListenerPort: 8443, Priority: 1, Hostnames: []string{"a.example.test"}, Backends: []exampleapi.RuleBackend{{TargetPoolID: "tp-a", Port: 9443, Weight: 1}}},
		{ListenerPort: 8443, Priority: 2, Hostnames: []string{"*.example.test"}, Backends: []exampleapi.RuleBackend{{TargetPoolID: "tp-b", Port: 9443, Weight: 1}}},
	})
	start(t, &dataplane.Plane{LoadBalancers: []dataplane.LoadBalancer{{LoadBalancer: lb, Addrs: []netip.Addr{lbAddr},
		Own: []dataplane.Target{target("i-4", "10.0.0.4")},
		Pools: map[string][]dataplane.Target{
			"tp-a": {target("i-5", "10.0.0.5")},
			"tp-b": {target("i-6", "10.0.0.6")},
		},
		Certificates: map[string]*tls.Certificate{"cert-a": certA, "cert-b": certB},
	}}})

	t.Run("tcp with the PROXY protocol", func(t *testing.T) {
		c, err := net.DialTimeout("tcp", "203.0.113.10:5432", 5*time.Second)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		if _, err := io.WriteString(c, "ping\n"); err != nil {
			t.Fatal(err)
		}
		r := bufio.NewReader(c)
		header, _ := r.ReadString('\n')
		local := c.LocalAddr().(*net.TCPAddr)
		want := "PROXY TCP4 " + local.IP.String() + " 203.0.113.10 " + itoa(local.Port) + " 5432\r\n"
		if header != want {
			t.Fatalf("the target got header %q, want %q", header, want)
		}
		if line, _ := r.ReadString('\n'); line != "ping\n" {
			t.Fatalf("echo %q", line)
		}
	})
	t.Run("udp", func(t *testing.T) {
		c, err := net.Dial("udp", "203.0.113.10:53")
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		buf := make([]byte, 100)
		for i := range 3 {
			if _, err := io.WriteString(c, "hello"+itoa(i)); err != nil {
				t.Fatal(err)
			}
			_ = c.SetReadDeadline(time.Now().Add(5 * time.Second))
			n, err := c.Read(buf)
			if err != nil || string(buf[:n]) != "udp:hello"+itoa(i) {
				t.Fatalf("datagram %d: %q %v", i, buf[:n], err)
			}
		}
	})
	t.Run("tls passthrough by SNI", func(t *testing.T) {
		for sni, want := range map[string]string{"a.example.test": "backend-a", "b.example.test": "backend-b"} {
			c, err := tls.DialWithDialer(&net.Dialer{Timeout: 5 * time.Second}, "tcp", "203.0.113.10:8443",
				&tls.Config{ServerName: sni, RootCAs: roots})
			if err != nil {
				t.Fatalf("%s: %v (the backend's own certificate must verify: TLS passes through)", sni, err)
			}
			line, _ := bufio.NewReader(c).ReadString('\n')
			c.Close()
			if strings.TrimSpace(line) != want {
				t.Errorf("SNI %s reached %q, want %s", sni, line, want)
			}
		}
	})
	t.Run("https by SNI", func(t *testing.T) {
		for _, sni := range []string{"a.example.test", "b.example.test"} {
			c := &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{
				TLSClientConfig: &tls.Config{ServerName: sni, RootCAs: roots}}}
			res, a := get(t, c, "https://203.0.113.10/", sni)
			if res.StatusCode != http.StatusOK || a.Pod != "web" || res.TLS.PeerCertificates[0].Subject.CommonName != sni {
				t.Errorf("SNI %s: status %d, pod %q, certificate %q", sni, res.StatusCode, a.Pod, res.TLS.PeerCertificates[0].Subject.CommonName)
			}
		}
	})
}

func itoa(n int) string { return strconv.Itoa(n) }
