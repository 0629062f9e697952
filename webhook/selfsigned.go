package webhook

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"fmt"
	"math/big"
	"net"
	"time"

	"k8s.io/client-go/util/cert"
	"k8s.io/client-go/util/keyutil"
)

// backdate moves NotBefore into the past so that replicas and API servers
// whose clocks lag a little still accept a fresh certificate.
func backdate(validity time.Duration) time.Duration {
	return min(validity/10, 5*time.Minute)
}

// newCA makes a self-signed CA valid for validity from now. It does not use
// cert.NewSelfSignedCACert, whose validity is fixed at 10 years from the
// wall clock.
func newCA(now time.Time, validity time.Duration) (*x509.Certificate, *ecdsa.PrivateKey, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, nil, fmt.Errorf("generating CA key: %w", err)
	}
	tmpl := &x509.Certificate{
		Subject: pkix.Name{
			CommonName:   fmt.Sprintf("example-cloud-controller-manager-webhook-ca@%d", now.Unix()),
			Organization: []string{"example-cloud-controller-manager"},
		},
		NotBefore:             now.Add(-backdate(validity)).UTC(),
		NotAfter:              now.Add(validity).UTC(),
		KeyUsage:              x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign | x509.KeyUsageCRLSign,
		BasicConstraintsValid: true,
		IsCA:                  true,
		MaxPathLenZero:        true,
	}
	ca, err := sign(tmpl, tmpl, key, key)
	if err != nil {
		return nil, nil, fmt.Errorf("signing CA certificate: %w", err)
	}
	return ca, key, nil
}

// newServingCert issues a server certificate for dnsNames and ips signed by
// ca, valid for validity but never past the CA itself.
func newServingCert(ca *x509.Certificate, caKey crypto.Signer, dnsNames []string, ips []net.IP, now time.Time, validity time.Duration) (certPEM, keyPEM []byte, err error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, nil, fmt.Errorf("generating serving key: %w", err)
	}
	cn := "example-cloud-controller-manager-webhook"
	if len(dnsNames) > 0 {
		cn = dnsNames[0]
	}
	tmpl := &x509.Certificate{
		Subject:     pkix.Name{CommonName: cn},
		DNSNames:    dnsNames,
		IPAddresses: ips,
		NotBefore:   now.Add(-backdate(validity)).UTC(),
		NotAfter:    now.Add(validity).UTC(),
		KeyUsage:    x509.KeyUsageDigitalSignature,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	if tmpl.NotAfter.After(ca.NotAfter) {
		tmpl.NotAfter = ca.NotAfter
	}
	leaf, err := sign(tmpl, ca, key, caKey)
	if err != nil {
		return nil, nil, fmt.Errorf("signing serving certificate: %w", err)
	}
	if keyPEM, err = keyutil.MarshalPrivateKeyToPEM(key); err != nil {
		return nil, nil, fmt.Errorf("encoding serving key: %w", err)
	}
	return encodeCerts(leaf), keyPEM, nil
}

func sign(tmpl, parent *x509.Certificate, key *ecdsa.PrivateKey, signer crypto.Signer) (*x509.Certificate, error) {
	serial, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 127))
	if err != nil {
		return nil, err
	}
	tmpl.SerialNumber = serial.Add(serial, big.NewInt(1)) // never 0
	der, err := x509.CreateCertificate(rand.Reader, tmpl, parent, key.Public(), signer)
	if err != nil {
		return nil, err
	}
	return x509.ParseCertificate(der)
}

// encodeCerts is cert.EncodeCertificates without its (impossible) error.
func encodeCerts(certs ...*x509.Certificate) []byte {
	b, _ := cert.EncodeCertificates(certs...)
	return b
}

// parseSigner reads a PEM private key that can sign (ca.key).
func parseSigner(pemBytes []byte) (crypto.Signer, error) {
	k, err := keyutil.ParsePrivateKeyPEM(pemBytes)
	if err != nil {
		return nil, err
	}
	s, ok := k.(crypto.Signer)
	if !ok {
		return nil, fmt.Errorf("private key of type %T cannot sign", k)
	}
	return s, nil
}
