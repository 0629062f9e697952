package testcluster

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/csv"
	"encoding/hex"
	"encoding/pem"
	"fmt"
	"math/big"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// secrets are the apiserver's credential files.
type secrets struct {
	adminToken string
	// tokenFile is static token auth: the admin (group system:masters)
	// and Options.Users.
	tokenFile  string
	userTokens map[string]string // user name -> token
	saKey      string            // signs ServiceAccount tokens (TokenRequest)
	saPub      string            // verifies them
	// clientCA is a CA whose key is discarded, so it signs nothing. Given
	// as client and front-proxy CA, as in a real cluster, it makes the
	// apiserver publish ConfigMap kube-system/extension-apiserver-authentication,
	// which the CCM's delegated authentication reads (without it, it logs an
	// error every few seconds).
	clientCA string
}

const adminUser = "testcluster-admin"

func writeSecrets(dir string, users []User) (*secrets, error) {
	s := &secrets{
		adminToken: randomToken(),
		tokenFile:  filepath.Join(dir, "tokens.csv"),
		userTokens: map[string]string{},
		saKey:      filepath.Join(dir, "sa.key"),
		saPub:      filepath.Join(dir, "sa.pub"),
		clientCA:   filepath.Join(dir, "client-ca.crt"),
	}
	if err := s.writeTokenFile(users); err != nil {
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

// writeTokenFile writes the admin's and the users' tokens in the format of
// --token-auth-file: token,user,uid,"group1,group2" (encoding/csv, as the
// apiserver reads it).
func (s *secrets) writeTokenFile(users []User) error {
	var buf strings.Builder
	w := csv.NewWriter(&buf)
	_ = w.Write([]string{s.adminToken, adminUser, adminUser + "-uid", "system:masters"})
	for _, u := range users {
		if err := u.validate(); err != nil {
			return err
		}
		if _, dup := s.userTokens[u.Name]; dup || u.Name == adminUser {
			return fmt.Errorf("user %q: declared twice", u.Name)
		}
		s.userTokens[u.Name] = randomToken()
		_ = w.Write([]string{s.userTokens[u.Name], u.Name, u.Name + "-uid", strings.Join(u.Groups, ",")})
	}
	w.Flush()
	if err := w.Error(); err != nil {
		return err
	}
	return os.WriteFile(s.tokenFile, []byte(buf.String()), 0o600)
}

func randomToken() string {
	buf := make([]byte, 24)
	_, _ = rand.Read(buf) // never fails: since Go 1.24 it would crash instead
	return hex.EncodeToString(buf)
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
