package dataplane

import (
	"crypto/sha256"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"maps"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"

	"github.com/example/cloud-provider-example/exampleapi"
)

// tlsTransports are the load balancers' connections to backends over TLS,
// one per TLS setting (CA bundle, SNI name, names to verify): kept across
// swaps, so a write to the cloud does not drop their idle connections,
// and forgotten once no rule of the plane uses them.
type tlsTransports struct {
	mu sync.Mutex
	by map[string]*http.Transport
}

// tlsKey identifies a setting: its bundle by digest (it is long).
func tlsKey(t *exampleapi.BackendTLS) string {
	sum := sha256.Sum256([]byte(t.CABundle))
	return fmt.Sprintf("%x|%s|%s", sum, t.ServerName, strings.Join(t.SubjectAltNames, ","))
}

// transport is the transport of backend TLS t, made on first use. A
// bundle the cloud took always parses; one that does not (a plane made by
// hand) verifies nothing, so every request fails closed.
func (tt *tlsTransports) transport(t *exampleapi.BackendTLS) *http.Transport {
	k := tlsKey(t)
	tt.mu.Lock()
	defer tt.mu.Unlock()
	if tr := tt.by[k]; tr != nil {
		return tr
	}
	roots, err := exampleapi.ParseCABundle(t.CABundle)
	if err != nil {
		roots = x509.NewCertPool()
	}
	tr := newTransport(func(p *http.Protocols) { p.SetHTTP1(true) })
	tr.TLSClientConfig = backendTLSConfig(roots, t.ServerName, t.SubjectAltNames)
	if tt.by == nil {
		tt.by = map[string]*http.Transport{}
	}
	tt.by[k] = tr
	return tr
}

// forget drops the transports no rule of p uses, closing their idle
// connections.
func (tt *tlsTransports) forget(p *Plane) {
	used := map[string]bool{}
	for _, lb := range p.LoadBalancers {
		for _, r := range lb.AllRules() {
			for _, b := range r.Backends {
				if b.TLS != nil {
					used[tlsKey(b.TLS)] = true
				}
			}
		}
	}
	tt.mu.Lock()
	defer tt.mu.Unlock()
	maps.DeleteFunc(tt.by, func(k string, tr *http.Transport) bool {
		if used[k] {
			return false
		}
		tr.CloseIdleConnections()
		return true
	})
}

// backendTLSConfig sends serverName as SNI and verifies the target's
// chain against roots: for serverName, or, when sans are given, for one
// of them (a DNS name, or a URI such as a SPIFFE id) and not for
// serverName, as the Gateway API's subjectAltNames ask.
func backendTLSConfig(roots *x509.CertPool, serverName string, sans []string) *tls.Config {
	return &tls.Config{
		ServerName: serverName,
		MinVersion: tls.VersionTLS12,
		// The chain and its names are verified below, not by the
		// default check, which knows no URI names.
		InsecureSkipVerify: true, //nolint:gosec // VerifyConnection verifies the chain and names
		VerifyConnection: func(cs tls.ConnectionState) error {
			if len(cs.PeerCertificates) == 0 {
				return errors.New("backend TLS: the target sent no certificate")
			}
			leaf := cs.PeerCertificates[0]
			inter := x509.NewCertPool()
			for _, c := range cs.PeerCertificates[1:] {
				inter.AddCert(c)
			}
			opts := x509.VerifyOptions{Roots: roots, Intermediates: inter}
			if len(sans) == 0 {
				opts.DNSName = serverName
			}
			if _, err := leaf.Verify(opts); err != nil {
				return fmt.Errorf("backend TLS: %w", err)
			}
			if len(sans) > 0 && !holdsOneOf(leaf, sans) {
				return fmt.Errorf("backend TLS: the target's certificate holds none of the subject alt names %s", strings.Join(sans, ", "))
			}
			return nil
		},
	}
}

// holdsOneOf tells whether leaf is valid for one of sans: a URI one by
// its exact text, a DNS one as a host name check does.
func holdsOneOf(leaf *x509.Certificate, sans []string) bool {
	return slices.ContainsFunc(sans, func(san string) bool {
		if strings.Contains(san, ":") {
			return slices.ContainsFunc(leaf.URIs, func(u *url.URL) bool { return u.String() == san })
		}
		return leaf.VerifyHostname(san) == nil
	})
}
