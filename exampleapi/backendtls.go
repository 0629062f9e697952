package exampleapi

import (
	"crypto/x509"
	"fmt"
	"net/url"
	"strings"
)

// BackendTLS is a rule backend reached over TLS: the load balancer
// re-encrypts what it forwards, sends ServerName as the SNI name and
// verifies the target's certificate against CABundle, for ServerName or,
// when SubjectAltNames are given, for one of them. A target whose
// certificate fails is not reached: the request gets 502, never the
// target in cleartext.
type BackendTLS struct {
	// CABundle is the CA certificates (PEM CERTIFICATE blocks, at most
	// MaxCABundleCertificates) the target's chain must end in.
	CABundle string `json:"ca_bundle"`
	// ServerName is the SNI name sent, an exact DNS name; without
	// SubjectAltNames, the name the certificate must be valid for.
	ServerName string `json:"server_name"`
	// SubjectAltNames, when set, are what the certificate must hold one
	// of instead: a DNS name, or a URI (one with a scheme, such as a
	// SPIFFE id spiffe://trust.domain/path).
	SubjectAltNames []string `json:"subject_alt_names,omitempty"`
}

// Limits of a backend's TLS, as the cloud enforces them.
const (
	MaxCABundleBytes        = 64 << 10
	MaxCABundleCertificates = 32
	MaxSubjectAltNames      = 16
	MaxSubjectAltNameLen    = 512
)

// checkBackendTLS checks backend g's TLS: a CA bundle of PEM certificates
// only, an exact host name to send, and the alternative names to accept.
// Messages never quote the bundle: text outside its blocks is named by
// offset (pemBlocks).
func checkBackendTLS(g string, t BackendTLS) error {
	if err := CheckCABundle(t.CABundle); err != nil {
		return ruleError(g+".tls.ca_bundle", "%v", err)
	}
	if err := CheckServerName(t.ServerName); err != nil {
		return ruleError(g+".tls.server_name", "%v", err)
	}
	if n := len(t.SubjectAltNames); n > MaxSubjectAltNames {
		return ruleError(g+".tls.subject_alt_names", "has %d names (at most %d)", n, MaxSubjectAltNames)
	}
	seen := map[string]int{}
	for k, san := range t.SubjectAltNames {
		f := fmt.Sprintf("%s.tls.subject_alt_names[%d]", g, k)
		if j, dup := seen[san]; dup {
			return ruleError(f, "%q is also subject_alt_names[%d]", san, j)
		}
		seen[san] = k
		if err := CheckSubjectAltName(san); err != nil {
			return ruleError(f, "%v", err)
		}
	}
	return nil
}

// CheckServerName checks a backend's SNI name: an exact DNS name.
func CheckServerName(name string) error {
	if !isExactHostname(name) {
		return fmt.Errorf("%q is not a DNS name without a wildcard (lower case, at most %d characters)", name, MaxHostnameLen)
	}
	return nil
}

// CheckSubjectAltName checks one name to verify: a URI if it has a
// scheme (a DNS name has no ":"), else an exact DNS name.
func CheckSubjectAltName(san string) error {
	if len(san) > MaxSubjectAltNameLen {
		return fmt.Errorf("is %d characters (at most %d)", len(san), MaxSubjectAltNameLen)
	}
	if !strings.Contains(san, ":") {
		if !isExactHostname(san) {
			return fmt.Errorf("%q is neither a DNS name without a wildcard nor a URI with a scheme", san)
		}
		return nil
	}
	u, err := url.Parse(san)
	if err != nil || u.Scheme == "" || u.Opaque == "" && u.Host == "" && u.Path == "" || strings.ContainsAny(san, " \t\r\n") {
		return fmt.Errorf("%q is not an absolute URI (a scheme and what follows, such as spiffe://trust.domain/workload)", san)
	}
	return nil
}

// CheckCABundle checks a CA bundle: PEM CERTIFICATE blocks only, each an
// X.509 certificate.
func CheckCABundle(bundle string) error {
	_, err := ParseCABundle(bundle)
	return err
}

// caBundleField is a backend's ca_bundle.
var caBundleField = pemCertificatesField{name: "a CA bundle", holds: "the PEM CA certificates a target's certificate must be issued by",
	maxBytes: MaxCABundleBytes, maxCertificates: MaxCABundleCertificates, keyAdvice: "a CA bundle holds certificates only"}

// ParseCABundle reads a CA bundle as the cloud takes it: 1 to
// MaxCABundleCertificates PEM CERTIFICATE blocks without headers and
// nothing but whitespace around them, at most MaxCABundleBytes. The data
// plane verifies targets against what it returns.
func ParseCABundle(bundle string) (*x509.CertPool, error) {
	certs, err := caBundleField.parse(bundle)
	if err != nil {
		return nil, err
	}
	pool := x509.NewCertPool()
	for _, c := range certs {
		pool.AddCert(c)
	}
	return pool, nil
}
