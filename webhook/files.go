package webhook

import (
	"bytes"
	"crypto/tls"
	"fmt"
	"os"
	"sync"
	"time"

	"k8s.io/klog/v2"
)

// fileCheckInterval rate-limits re-reading the files on handshakes.
const fileCheckInterval = 10 * time.Second

// FromFiles serves the certificate and key in certFile and keyFile (a
// mounted cert-manager Secret) and reloads them when they change, checked
// at most every 10s on a handshake. A pair that does not load (the files
// are mid-update) keeps the previous certificate until the next check.
func FromFiles(certFile, keyFile string) (CertSource, error) {
	f := &fileSource{certFile: certFile, keyFile: keyFile, interval: fileCheckInterval, now: time.Now}
	if err := f.reload(); err != nil {
		return nil, err
	}
	return f, nil
}

type fileSource struct {
	certFile, keyFile string
	interval          time.Duration
	now               func() time.Time

	mu      sync.Mutex
	cert    *tls.Certificate
	raw     []byte // the certificate then the key, as last read
	checked time.Time
}

func (f *fileSource) GetCertificate(*tls.ClientHelloInfo) (*tls.Certificate, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.now().Sub(f.checked) >= f.interval {
		if err := f.reload(); err != nil {
			klog.ErrorS(err, "Reloading webhook serving certificate; serving the previous one")
		}
	}
	return f.cert, nil
}

// reload reads both files and loads them if they changed. f.mu is held
// (or f is not shared yet).
func (f *fileSource) reload() error {
	f.checked = f.now()
	crt, err := os.ReadFile(f.certFile)
	if err != nil {
		return fmt.Errorf("reading webhook certificate: %w", err)
	}
	key, err := os.ReadFile(f.keyFile)
	if err != nil {
		return fmt.Errorf("reading webhook key: %w", err)
	}
	raw := append(crt, key...)
	if bytes.Equal(raw, f.raw) {
		return nil
	}
	c, err := tls.X509KeyPair(crt, key)
	if err != nil {
		return fmt.Errorf("loading webhook certificate %s and key %s: %w", f.certFile, f.keyFile, err)
	}
	f.cert, f.raw = &c, raw
	klog.InfoS("Loaded webhook serving certificate from files", "file", f.certFile,
		"serial", c.Leaf.SerialNumber.Text(16), "notAfter", c.Leaf.NotAfter)
	return nil
}
