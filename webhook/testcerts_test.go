package webhook

import (
	"crypto/tls"
	"crypto/x509"
	"net"
	"sync/atomic"
	"testing"
	"time"
)

// testPair issues a CA and a serving certificate for 127.0.0.1, returning
// the pair and a pool trusting the CA.
func testPair(t *testing.T) (certPEM, keyPEM []byte, pool *x509.CertPool) {
	t.Helper()
	ca, caKey, err := newCA(time.Now(), time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	certPEM, keyPEM, err = newServingCert(ca, caKey, nil, []net.IP{net.ParseIP("127.0.0.1")}, time.Now(), time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	pool = x509.NewCertPool()
	pool.AddCert(ca)
	return certPEM, keyPEM, pool
}

// swappable is a CertSource whose certificate the test replaces.
type swappable struct {
	c atomic.Pointer[tls.Certificate]
}

func (s *swappable) GetCertificate(*tls.ClientHelloInfo) (*tls.Certificate, error) {
	return s.c.Load(), nil
}

func (s *swappable) set(t *testing.T, certPEM, keyPEM []byte) {
	t.Helper()
	c, err := tls.X509KeyPair(certPEM, keyPEM)
	if err != nil {
		t.Fatal(err)
	}
	s.c.Store(&c)
}

// servedSerial dials addr trusting pool and returns the serial of the
// certificate served.
func servedSerial(t *testing.T, addr string, pool *x509.CertPool) string {
	t.Helper()
	conn, err := tls.Dial("tcp", addr, &tls.Config{RootCAs: pool})
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	return conn.ConnectionState().PeerCertificates[0].SerialNumber.Text(16)
}
