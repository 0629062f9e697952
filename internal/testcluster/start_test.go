package testcluster

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"testing"
	"time"
)

// The serving cert is taken as the CA only once whole: a file the
// apiserver is still writing is read again on the next poll.
func TestWholeCerts(t *testing.T) {
	cert := func(name string) []byte {
		key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
		if err != nil {
			t.Fatal(err)
		}
		tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: name},
			NotBefore: time.Now(), NotAfter: time.Now().Add(time.Hour)}
		der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
		if err != nil {
			t.Fatal(err)
		}
		return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})
	}
	leaf, ca := cert("localhost"), cert("localhost-ca")
	bundle := append(append([]byte{}, leaf...), ca...)
	for _, c := range []struct {
		name string
		data []byte
		want bool
	}{
		{"one", leaf, true},
		{"a bundle", bundle, true},
		{"empty (created, not written yet)", nil, false},
		{"half of one", leaf[:len(leaf)/2], false},
		{"the second half-written", bundle[:len(leaf)+len(ca)/2], false},
		{"a key", pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: []byte{1}}), false},
	} {
		if got := wholeCerts(c.data); got != c.want {
			t.Errorf("%s: wholeCerts = %v, want %v", c.name, got, c.want)
		}
	}
}
