package exampleapi

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/rsa"
	"crypto/sha256"
	"crypto/x509"
	"encoding/hex"
	"encoding/pem"
	"errors"
	"fmt"
	"strings"
)

// Limits of an uploaded certificate, as the cloud enforces them.
const (
	MaxCertificatePEMBytes = 64 << 10
	MaxPrivateKeyPEMBytes  = 16 << 10
	// MaxCertificateChain is the leaf and its intermediates.
	MaxCertificateChain = 10
	// MinRSAKeyBits is the smallest RSA key accepted.
	MinRSAKeyBits = 2048
)

// InspectCertificate checks a PEM certificate chain the way the cloud does
// (CERTIFICATE blocks only, without headers, the leaf first, then each
// issuer; nothing but whitespace before, between or after them) and
// returns what it reads from the leaf. The simulator, the provider and the
// controller's check of a TLS Secret's tls.crt share it, so a plan shows
// exactly what the cloud will answer. Messages read after the field name,
// e.g. "certificate_pem: holds no PEM CERTIFICATE block", and never echo
// text of the input raw: text outside the blocks, which a tenant may have
// written to reach a reviewer's terminal or the plan text, is named by its
// offset and length, with a short excerpt escaped (termsafe).
func InspectCertificate(certPEM string) (CertificateInfo, error) {
	certs, err := parseChain(certPEM)
	if err != nil {
		return CertificateInfo{}, err
	}
	leaf := certs[0]
	sum := sha256.Sum256(leaf.Raw)
	return CertificateInfo{
		Fingerprint: hex.EncodeToString(sum[:]),
		CommonName:  leaf.Subject.CommonName,
		DNSNames:    leaf.DNSNames,
		NotBefore:   leaf.NotBefore.UTC(),
		NotAfter:    leaf.NotAfter.UTC(),
	}, nil
}

// certificateChainField is certificate_pem: the leaf, then its intermediates.
var certificateChainField = pemCertificatesField{name: "certificate_pem", holds: "the PEM certificate, then its intermediates",
	maxBytes: MaxCertificatePEMBytes, maxCertificates: MaxCertificateChain,
	keyAdvice: "the key goes in private_key_pem, certificate_pem holds certificates only"}

func parseChain(certPEM string) ([]*x509.Certificate, error) {
	certs, err := certificateChainField.parse(certPEM)
	if err != nil {
		return nil, err
	}
	for i := 1; i < len(certs); i++ {
		if err := certs[i-1].CheckSignatureFrom(certs[i]); err != nil {
			return nil, fmt.Errorf("certificate %d was not issued by certificate %d: the chain lists the leaf "+
				"first, then each certificate's issuer (%v)", i, i+1, err)
		}
	}
	switch certs[0].PublicKey.(type) {
	case *rsa.PublicKey, *ecdsa.PublicKey, ed25519.PublicKey:
	default:
		return nil, fmt.Errorf("the certificate's public key (%s) is not supported (accepted: RSA, ECDSA, Ed25519)",
			certs[0].PublicKeyAlgorithm)
	}
	return certs, nil
}

// CheckPrivateKey checks that keyPEM is one unencrypted private key (PKCS
// #1, PKCS #8 or SEC 1; RSA keys of at least MinRSAKeyBits) matching the
// leaf of certPEM, which must pass InspectCertificate. Its messages never
// quote the key; they read after the field name private_key_pem.
func CheckPrivateKey(certPEM, keyPEM string) error {
	certs, err := parseChain(certPEM)
	if err != nil {
		return fmt.Errorf("cannot be checked: certificate_pem %w", err)
	}
	key, err := parsePrivateKey(keyPEM)
	if err != nil {
		return err
	}
	pub, ok := key.Public().(interface{ Equal(crypto.PublicKey) bool })
	if !ok || !pub.Equal(certs[0].PublicKey) {
		return errors.New("does not match the certificate: it is not the private key of the first (leaf) " +
			"certificate of certificate_pem")
	}
	return nil
}

// IsPrivateKey tells whether keyPEM is one private key in a PEM block
// without headers, weak or not: key material, worth redacting wherever it
// might be shown. A tenant's other text is not: redacting it would blank
// it in every event and audit line (docs/tenancy.md).
func IsPrivateKey(keyPEM string) bool {
	b, rest := pem.Decode([]byte(keyPEM))
	if b == nil || len(b.Headers) > 0 || strings.TrimSpace(string(rest)) != "" {
		return false
	}
	_, known, err := parseKeyBlock(b)
	return known && err == nil
}

// parseKeyBlock parses PEM block b of a private key type (known: one of
// PRIVATE KEY, RSA PRIVATE KEY, EC PRIVATE KEY).
func parseKeyBlock(b *pem.Block) (key any, known bool, err error) {
	switch b.Type {
	case "PRIVATE KEY":
		key, err = x509.ParsePKCS8PrivateKey(b.Bytes)
	case "RSA PRIVATE KEY":
		key, err = x509.ParsePKCS1PrivateKey(b.Bytes)
	case "EC PRIVATE KEY":
		key, err = x509.ParseECPrivateKey(b.Bytes)
	default:
		return nil, false, nil
	}
	return key, true, err
}

func parsePrivateKey(keyPEM string) (crypto.Signer, error) {
	if strings.TrimSpace(keyPEM) == "" {
		return nil, errors.New("is required (the PEM private key of the certificate)")
	}
	if len(keyPEM) > MaxPrivateKeyPEMBytes {
		return nil, fmt.Errorf("is %d bytes (at most %d)", len(keyPEM), MaxPrivateKeyPEMBytes)
	}
	b, rest := pem.Decode([]byte(keyPEM))
	if b == nil {
		return nil, errors.New("holds no PEM block (expected -----BEGIN PRIVATE KEY-----)")
	}
	if next, _ := pem.Decode(rest); next != nil {
		return nil, errors.New("holds more than one PEM block; give the one private key of the certificate")
	}
	switch {
	case b.Type == "ENCRYPTED PRIVATE KEY" || b.Headers["Proc-Type"] != "":
		return nil, errors.New("is encrypted; upload it unencrypted")
	case b.Type == "CERTIFICATE":
		return nil, errors.New("holds a certificate, not a private key (certificate_pem and private_key_pem swapped?)")
	}
	key, known, err := parseKeyBlock(b)
	switch {
	case !known:
		return nil, fmt.Errorf("is a %q PEM block (accepted: PRIVATE KEY, RSA PRIVATE KEY, EC PRIVATE KEY)", b.Type)
	case err != nil:
		// The parser's message names the format only, never key bytes.
		return nil, fmt.Errorf("is not a valid %s: %v", strings.ToLower(b.Type), err)
	}
	switch k := key.(type) {
	case *rsa.PrivateKey:
		if bits := k.N.BitLen(); bits < MinRSAKeyBits {
			return nil, fmt.Errorf("is a %d-bit RSA key (at least %d bits)", bits, MinRSAKeyBits)
		}
		return k, nil
	case *ecdsa.PrivateKey:
		return k, nil
	case ed25519.PrivateKey:
		return k, nil
	}
	return nil, fmt.Errorf("is a %T key (accepted: RSA, ECDSA, Ed25519)", key)
}

// String shows the request without its private key, so logging it by
// mistake cannot leak the key.
func (r CreateCertificateRequest) String() string {
	return fmt.Sprintf("{Name:%s Region:%s CertificatePEM:(%d bytes) PrivateKeyPEM:(redacted) Tags:%v}",
		r.Name, r.Region, len(r.CertificatePEM), r.Tags)
}

// GoString is String for %#v.
func (r CreateCertificateRequest) GoString() string {
	return "exampleapi.CreateCertificateRequest" + r.String()
}
