package simtest

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/hex"
	"encoding/pem"
	"math/big"
	"net/url"
	"testing"
	"time"
)

// Cert is a certificate and its private key, PEM encoded, made for a test.
type Cert struct {
	CertPEM string
	KeyPEM  string
	// Fingerprint is the SHA-256 of the certificate (DER), hex, as the
	// cloud reports it.
	Fingerprint string
	NotAfter    time.Time

	cert *x509.Certificate
	key  crypto.Signer
}

// CertOptions shape NewCert's certificate; the zero value is a
// self-signed ECDSA P-256 certificate for example.test, valid from an hour
// ago for 90 days.
type CertOptions struct {
	CommonName string   // default "example.test"
	DNSNames   []string // default [CommonName]
	// URIs are URI subject alternative names (a SPIFFE id), beside them.
	URIs      []*url.URL
	NotBefore time.Time
	NotAfter  time.Time
	// RSABits makes an RSA key of that size instead of ECDSA P-256.
	RSABits int
	// IsCA makes a certificate that can issue others (see Issuer).
	IsCA bool
	// Issuer signs the certificate; nil means self-signed. Chains are
	// the leaf's CertPEM followed by its issuers'.
	Issuer *Cert
}

// NewCert generates a certificate and key.
func NewCert(t testing.TB, o CertOptions) Cert {
	t.Helper()
	if o.CommonName == "" {
		o.CommonName = "example.test"
	}
	if o.DNSNames == nil && !o.IsCA {
		o.DNSNames = []string{o.CommonName}
	}
	now := time.Now().UTC().Truncate(time.Second)
	if o.NotBefore.IsZero() {
		o.NotBefore = now.Add(-time.Hour)
	}
	if o.NotAfter.IsZero() {
		o.NotAfter = now.Add(90 * 24 * time.Hour)
	}
	var key crypto.Signer
	var keyDER []byte
	var err error
	if o.RSABits > 0 {
		var k *rsa.PrivateKey
		if k, err = rsa.GenerateKey(rand.Reader, o.RSABits); err == nil {
			key, keyDER = k, x509.MarshalPKCS1PrivateKey(k)
		}
	} else {
		var k *ecdsa.PrivateKey
		if k, err = ecdsa.GenerateKey(elliptic.P256(), rand.Reader); err == nil {
			key = k
			keyDER, err = x509.MarshalPKCS8PrivateKey(k)
		}
	}
	if err != nil {
		t.Fatalf("simtest: generating a key: %v", err)
	}
	serial, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 62))
	if err != nil {
		t.Fatalf("simtest: serial: %v", err)
	}
	tmpl := &x509.Certificate{
		SerialNumber:          serial,
		Subject:               pkix.Name{CommonName: o.CommonName},
		DNSNames:              o.DNSNames,
		URIs:                  o.URIs,
		NotBefore:             o.NotBefore,
		NotAfter:              o.NotAfter,
		KeyUsage:              x509.KeyUsageDigitalSignature,
		ExtKeyUsage:           []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		BasicConstraintsValid: true,
		IsCA:                  o.IsCA,
	}
	if o.IsCA {
		tmpl.KeyUsage |= x509.KeyUsageCertSign
		tmpl.ExtKeyUsage = nil
	}
	parent, signer := tmpl, key
	if o.Issuer != nil {
		parent, signer = o.Issuer.cert, o.Issuer.key
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, parent, key.Public(), signer)
	if err != nil {
		t.Fatalf("simtest: creating a certificate: %v", err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatalf("simtest: parsing the certificate: %v", err)
	}
	keyType := "PRIVATE KEY"
	if o.RSABits > 0 {
		keyType = "RSA PRIVATE KEY"
	}
	sum := sha256.Sum256(der)
	return Cert{
		CertPEM:     string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})),
		KeyPEM:      string(pem.EncodeToMemory(&pem.Block{Type: keyType, Bytes: keyDER})),
		Fingerprint: hex.EncodeToString(sum[:]),
		NotAfter:    cert.NotAfter.UTC(),
		cert:        cert,
		key:         key,
	}
}
