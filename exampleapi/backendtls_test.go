package exampleapi_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/example/cloud-provider-example/exampleapi"
	"github.com/example/cloud-provider-example/simulator/simtest"
)

// A backend's TLS is checked by CheckRule: a CA bundle of PEM certificates
// only, an exact SNI name, names to verify that are DNS names or URIs;
// refusals name the field and never quote the bundle.
func TestCheckBackendTLS(t *testing.T) {
	ca := simtest.NewCert(t, simtest.CertOptions{CommonName: "ca", IsCA: true})
	other := simtest.NewCert(t, simtest.CertOptions{CommonName: "other-ca", IsCA: true})
	ok := exampleapi.Rule{Name: "r", ListenerPort: 80, Priority: 1, Backends: []exampleapi.RuleBackend{{TargetPoolID: "tp-1", Port: 30001, Weight: 1,
		TLS: &exampleapi.BackendTLS{CABundle: ca.CertPEM + other.CertPEM, ServerName: "abc.example.com",
			SubjectAltNames: []string{"abc.example.com", "spiffe://abc.example.com/test-identity"}}}}}
	if err := exampleapi.CheckRule(ok); err != nil {
		t.Fatalf("a valid backend TLS: %v", err)
	}
	for _, tc := range []struct {
		name, field, reason string
		edit                func(*exampleapi.BackendTLS)
	}{
		{"no bundle", "backends[0].tls.ca_bundle", "is required (the PEM CA certificates a target's certificate must be issued by)",
			func(b *exampleapi.BackendTLS) { b.CABundle = " \n" }},
		{"not PEM", "backends[0].tls.ca_bundle", "holds no PEM CERTIFICATE block (expected -----BEGIN CERTIFICATE-----)",
			func(b *exampleapi.BackendTLS) { b.CABundle = "secret-looking text" }},
		{"a key in the bundle", "backends[0].tls.ca_bundle", "PEM block 2 is a private key (PRIVATE KEY); a CA bundle holds certificates only",
			func(b *exampleapi.BackendTLS) { b.CABundle = ca.CertPEM + ca.KeyPEM }},
		{"text after the blocks", "backends[0].tls.ca_bundle", "holds text outside its PEM blocks (14 bytes at byte",
			func(b *exampleapi.BackendTLS) { b.CABundle = ca.CertPEM + "trailing words" }},
		{"too large", "backends[0].tls.ca_bundle", "bytes (at most 65536)",
			func(b *exampleapi.BackendTLS) { b.CABundle = strings.Repeat(ca.CertPEM, 200) }},
		{"wildcard SNI", "backends[0].tls.server_name", `"*.example.com" is not a DNS name without a wildcard (lower case, at most 253 characters)`,
			func(b *exampleapi.BackendTLS) { b.ServerName = "*.example.com" }},
		{"no SNI", "backends[0].tls.server_name", `"" is not a DNS name without a wildcard`,
			func(b *exampleapi.BackendTLS) { b.ServerName = "" }},
		{"SAN neither", "backends[0].tls.subject_alt_names[1]", `"a b" is neither a DNS name without a wildcard nor a URI with a scheme`,
			func(b *exampleapi.BackendTLS) { b.SubjectAltNames = []string{"abc.example.com", "a b"} }},
		{"SAN URI without a rest", "backends[0].tls.subject_alt_names[0]", `"spiffe:" is not an absolute URI`,
			func(b *exampleapi.BackendTLS) { b.SubjectAltNames = []string{"spiffe:"} }},
		{"SAN twice", "backends[0].tls.subject_alt_names[1]", `"abc.example.com" is also subject_alt_names[0]`,
			func(b *exampleapi.BackendTLS) { b.SubjectAltNames = []string{"abc.example.com", "abc.example.com"} }},
		{"too many SANs", "backends[0].tls.subject_alt_names", "has 17 names (at most 16)",
			func(b *exampleapi.BackendTLS) { b.SubjectAltNames = make([]string, 17) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := ok
			b := *ok.Backends[0].TLS
			tc.edit(&b)
			r.Backends = []exampleapi.RuleBackend{ok.Backends[0]}
			r.Backends[0].TLS = &b
			var re *exampleapi.RuleError
			err := exampleapi.CheckRule(r)
			if !errors.As(err, &re) || re.Field != tc.field || !strings.Contains(re.Reason, tc.reason) {
				t.Fatalf("got %v, want %s: ...%s", err, tc.field, tc.reason)
			}
			if strings.Contains(re.Reason, "secret-looking") || strings.Contains(re.Reason, "BEGIN CERTIFICATE-----\n") {
				t.Errorf("the refusal quotes the bundle: %s", re.Reason)
			}
		})
	}
	// h2c is cleartext: a backend over TLS is not.
	h2 := ok
	h2.Backends = []exampleapi.RuleBackend{ok.Backends[0]}
	h2.Backends[0].Protocol = exampleapi.BackendH2C
	var re *exampleapi.RuleError
	if err := exampleapi.CheckRule(h2); !errors.As(err, &re) || re.Field != "backends[0].tls" {
		t.Errorf("TLS with h2c: %v, want a refusal of backends[0].tls", err)
	}
}
