package testcluster

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/hex"
	"encoding/pem"
	"fmt"
	"math/big"
	"os"
	"path/filepath"
	"time"
)

// secrets are the apiserver's credential files.
type secrets struct {
	adminToken string
	tokenFile  string // static token auth: the admin, group system:masters
	saKey      string // signs ServiceAccount tokens (TokenRequest)
	saPub      string // verifies them
	// clientCA is a CA whose key is discarded, so it signs nothing. Given
	// as client and front-proxy CA, as in a real cluster, it makes the
	// apiserver publish ConfigMap kube-system/extension-apiserver-authentication,
	// which the CCM's delegated authentication reads (without it, it logs an
	// error every few seconds).
	clientCA string
}

const adminUser = "testcluster-admin"

func writeSecrets(dir string) (*secrets, error) {
	buf := make([]byte, 24)
	if _, err := rand.Read(buf); err != nil {
		return nil, err
	}
	s := &secrets{
		adminToken: hex.EncodeToString(buf),
		tokenFile:  filepath.Join(dir, "tokens.csv"),
		saKey:      filepath.Join(dir, "sa.key"),
		saPub:      filepath.Join(dir, "sa.pub"),
		clientCA:   filepath.Join(dir, "client-ca.crt"),
	}
	csv := fmt.Sprintf("%s,%s,%s-uid,\"system:masters\"\n", s.adminToken, adminUser, adminUser)
	if err := os.WriteFile(s.tokenFile, []byte(csv), 0o600); err != nil {
		return nil, err
	}
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		return nil, err
	}
	pub, err := x509.MarshalPKIXPublicKey(&key.PublicKey)
	if err != nil {
		return nil, err
	}
	if err := writePEM(s.saKey, "RSA PRIVATE KEY", x509.MarshalPKCS1PrivateKey(key)); err != nil {
		return nil, err
	}
	if err := writePEM(s.saPub, "PUBLIC KEY", pub); err != nil {
		return nil, err
	}
	ca, err := selfSignedCA()
	if err != nil {
		return nil, err
	}
	if err := writePEM(s.clientCA, "CERTIFICATE", ca); err != nil {
		return nil, err
	}
	return s, nil
}

func writePEM(path, typ string, der []byte) error {
	return os.WriteFile(path, pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: der}), 0o600)
}

// selfSignedCA returns the DER of a CA certificate whose key is discarded.
func selfSignedCA() ([]byte, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	now := time.Now()
	tmpl := &x509.Certificate{
		SerialNumber:          big.NewInt(1),
		Subject:               pkix.Name{CommonName: "testcluster-client-ca"},
		NotBefore:             now.Add(-time.Hour),
		NotAfter:              now.Add(10 * 365 * 24 * time.Hour),
		KeyUsage:              x509.KeyUsageCertSign,
		BasicConstraintsValid: true,
		IsCA:                  true,
	}
	return x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
}
