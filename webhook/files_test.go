package webhook

import (
	"os"
	"path/filepath"
	"testing"
	"time"
)

func TestFromFiles(t *testing.T) {
	dir := t.TempDir()
	certFile, keyFile := filepath.Join(dir, "tls.crt"), filepath.Join(dir, "tls.key")
	write := func(crt, key []byte) {
		t.Helper()
		for f, b := range map[string][]byte{certFile: crt, keyFile: key} {
			if err := os.WriteFile(f, b, 0o600); err != nil {
				t.Fatal(err)
			}
		}
	}
	if _, err := FromFiles(certFile, keyFile); err == nil {
		t.Fatal("missing files accepted")
	}
	crt1, key1, _ := testPair(t)
	write(crt1, key1)
	src, err := FromFiles(certFile, keyFile)
	if err != nil {
		t.Fatal(err)
	}
	f := src.(*fileSource)
	now := time.Now()
	f.now = func() time.Time { return now }
	serial := func() string {
		t.Helper()
		c, err := src.GetCertificate(nil)
		if err != nil || c == nil {
			t.Fatalf("GetCertificate: %v", err)
		}
		return c.Leaf.SerialNumber.Text(16)
	}
	first := serial()

	crt2, key2, _ := testPair(t)
	write(crt2, key2)
	if serial() != first {
		t.Fatal("reloaded before the check interval")
	}
	now = now.Add(fileCheckInterval)
	second := serial()
	if second == first {
		t.Fatal("not reloaded after the check interval")
	}

	// Half-written (certificate and key do not match): keep serving.
	write(crt1, key2)
	now = now.Add(fileCheckInterval)
	if serial() != second {
		t.Fatal("mismatched pair replaced the certificate")
	}
	os.Remove(keyFile)
	now = now.Add(fileCheckInterval)
	if serial() != second {
		t.Fatal("missing key replaced the certificate")
	}
	write(crt1, key1)
	now = now.Add(fileCheckInterval)
	if serial() != first {
		t.Fatal("repaired files not loaded")
	}
}
