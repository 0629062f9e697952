package webhook

import (
	"bytes"
	"crypto/tls"
	"crypto/x509"
	"net"
	"slices"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/util/cert"
)

// Lifetimes in hours keep the arithmetic readable: CA 30h, serving
// certificate 9h, renewed after 2/3 of their lifetime.
var (
	t0         = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	testPolicy = policy{
		dnsNames:      []string{"webhook.example-system.svc", "webhook.example-system.svc.cluster.local"},
		ips:           []net.IP{net.ParseIP("127.0.0.1")},
		caValidity:    30 * time.Hour,
		certValidity:  9 * time.Hour,
		renewFraction: 2.0 / 3,
	}
)

func at(h float64) time.Time { return t0.Add(time.Duration(h * float64(time.Hour))) }

// step reconciles data at now, failing unless exactly the wanted reasons
// come back.
func step(t *testing.T, p *policy, data map[string][]byte, now time.Time, want ...string) map[string][]byte {
	t.Helper()
	out, reasons, err := p.reconcile(data, now)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(reasons, want) {
		t.Fatalf("at %s: reasons %q, want %q", now.Sub(t0), reasons, want)
	}
	if len(want) == 0 && !sameData(out, data) {
		t.Fatalf("at %s: data changed without a reason", now.Sub(t0))
	}
	return out
}

func sameData(a, b map[string][]byte) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if !bytes.Equal(v, b[k]) {
			return false
		}
	}
	return true
}

func bundleOf(t *testing.T, data map[string][]byte) []*x509.Certificate {
	t.Helper()
	cas, err := cert.ParseCertsPEM(data[KeyCABundle])
	if err != nil {
		t.Fatal(err)
	}
	return cas
}

func leafOf(t *testing.T, data map[string][]byte) *x509.Certificate {
	t.Helper()
	pair, err := tls.X509KeyPair(data[corev1.TLSCertKey], data[corev1.TLSPrivateKeyKey])
	if err != nil {
		t.Fatal(err)
	}
	return pair.Leaf
}

// verify checks that a client trusting the bundle accepts the serving
// certificate for every name at now.
func verify(t *testing.T, data map[string][]byte, now time.Time) {
	t.Helper()
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(data[KeyCABundle]) {
		t.Fatal("bad bundle")
	}
	for _, name := range []string{"webhook.example-system.svc", "webhook.example-system.svc.cluster.local", "127.0.0.1"} {
		if _, err := leafOf(t, data).Verify(x509.VerifyOptions{DNSName: name, Roots: pool, CurrentTime: now,
			KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}}); err != nil {
			t.Fatalf("at %s, %s: %v", now.Sub(t0), name, err)
		}
	}
}

func TestRenewalTimeline(t *testing.T) {
	p := testPolicy
	d := step(t, &p, nil, at(0), "no usable CA", "no usable serving certificate")
	verify(t, d, at(0))
	ca1 := bundleOf(t, d)
	if len(ca1) != 1 || !ca1[0].IsCA || !leafOf(t, d).NotAfter.Equal(at(9)) || !ca1[0].NotAfter.Equal(at(30)) {
		t.Fatalf("initial: %d CAs, leaf until %s, CA until %s", len(ca1), leafOf(t, d).NotAfter, ca1[0].NotAfter)
	}
	if k, _ := parseSigner(d[KeyCAKey]); k == nil || !keyMatches(k, ca1[0]) {
		t.Fatal("ca.key does not match the CA")
	}

	// Both are backdated 5 minutes: the serving certificate is due at
	// 5.97h, the CA at 19.97h.
	step(t, &p, d, at(5.9))
	d2 := step(t, &p, d, at(6), "serving certificate renewal due")
	verify(t, d2, at(6))
	if !bytes.Equal(d2[KeyCABundle], d[KeyCABundle]) || !bytes.Equal(d2[KeyCAKey], d[KeyCAKey]) {
		t.Fatal("serving renewal changed the CA")
	}
	if bytes.Equal(d2[corev1.TLSCertKey], d[corev1.TLSCertKey]) || bytes.Equal(d2[corev1.TLSPrivateKeyKey], d[corev1.TLSPrivateKeyKey]) {
		t.Fatal("serving certificate or key not renewed")
	}

	// Walk to the CA's renewal point, renewing the serving certificate on
	// the way (at 12h and 18h).
	d = d2
	for h := 6.5; h < 19.9; h += 0.5 {
		out, _, err := p.reconcile(d, at(h))
		if err != nil {
			t.Fatal(err)
		}
		if !bundleOf(t, out)[0].Equal(ca1[0]) {
			t.Fatalf("CA renewed early, at %vh", h)
		}
		d = out
	}
	d = step(t, &p, d, at(20), "CA renewal due")
	cas := bundleOf(t, d)
	if len(cas) != 2 || cas[0].Equal(ca1[0]) || !cas[1].Equal(ca1[0]) {
		t.Fatalf("bundle after CA renewal: %d CAs, want new then old", len(cas))
	}
	if k, _ := parseSigner(d[KeyCAKey]); k == nil || !keyMatches(k, cas[0]) {
		t.Fatal("ca.key is not the new CA's")
	}
	verify(t, d, at(20))

	// The serving certificate renewed at 24h is signed by the new CA; the
	// old CA stays trusted until it expires.
	var renewed bool
	for h := 20.5; h < 30; h += 0.5 {
		out, reasons, err := p.reconcile(d, at(h))
		if err != nil {
			t.Fatal(err)
		}
		if len(reasons) > 0 {
			if !slices.Equal(reasons, []string{"serving certificate renewal due"}) {
				t.Fatalf("at %vh: %q", h, reasons)
			}
			if leafOf(t, out).CheckSignatureFrom(cas[0]) != nil {
				t.Fatal("renewed serving certificate not signed by the new CA")
			}
			renewed = true
		}
		if b := bundleOf(t, out); len(b) != 2 {
			t.Fatalf("at %vh the bundle has %d CAs before the old one expired", h, len(b))
		}
		verify(t, out, at(h))
		d = out
	}
	if !renewed {
		t.Fatal("serving certificate never renewed under the new CA")
	}
	// The old CA expires at 30h and leaves the bundle.
	d = step(t, &p, d, at(30), "expired CA dropped from the bundle", "serving certificate renewal due")
	if b := bundleOf(t, d); len(b) != 1 || !b[0].Equal(cas[0]) {
		t.Fatalf("bundle after expiry: %d CAs", len(b))
	}
	verify(t, d, at(30))
}

func TestRenewalServingWaitsOneSyncAfterCA(t *testing.T) {
	p := testPolicy
	d := step(t, &p, nil, at(0), "no usable CA", "no usable serving certificate")
	// At 25h the serving certificate is past its expiry (9h): replaced at
	// once, under the new CA.
	out := step(t, &p, d, at(25), "CA renewal due", "serving certificate expired")
	if leafOf(t, out).CheckSignatureFrom(bundleOf(t, out)[0]) != nil {
		t.Fatal("expired serving certificate not replaced under the new CA")
	}
	// Due (since 18.97h) but valid (until 22h) when the CA is renewed at
	// 20h: kept for one more sync, so clients trust the new CA first.
	d = step(t, &p, d, at(6), "serving certificate renewal due")
	d = step(t, &p, d, at(13), "serving certificate renewal due")
	out = step(t, &p, d, at(20), "CA renewal due")
	if !bytes.Equal(out[corev1.TLSCertKey], d[corev1.TLSCertKey]) {
		t.Fatal("serving certificate changed together with the CA")
	}
	out = step(t, &p, out, at(20.01), "serving certificate renewal due")
	if leafOf(t, out).CheckSignatureFrom(bundleOf(t, out)[0]) != nil {
		t.Fatal("serving certificate not signed by the new CA")
	}
}

func TestRenewalCapsServingAtCAExpiry(t *testing.T) {
	p := testPolicy
	p.certValidity = 40 * time.Hour
	d := step(t, &p, nil, at(0), "no usable CA", "no usable serving certificate")
	if got := leafOf(t, d).NotAfter; !got.Equal(at(30)) {
		t.Fatalf("serving certificate until %s, CA until %s", got, at(30))
	}
}

func TestRenewalRepairs(t *testing.T) {
	p := testPolicy
	good := step(t, &p, nil, at(0), "no usable CA", "no usable serving certificate")
	with := func(k string, v []byte) map[string][]byte {
		d := make(map[string][]byte)
		for key, val := range good {
			d[key] = val
		}
		d[k] = v
		return d
	}
	other := step(t, &p, nil, at(0), "no usable CA", "no usable serving certificate")

	step(t, &p, with(corev1.TLSCertKey, []byte("garbage")), at(1), "no usable serving certificate")
	step(t, &p, with(corev1.TLSPrivateKeyKey, other[corev1.TLSPrivateKeyKey]), at(1), "no usable serving certificate")
	d := step(t, &p, with(KeyCAKey, other[KeyCAKey]), at(1), "no usable CA")
	if len(bundleOf(t, d)) != 2 {
		t.Fatal("a CA whose key is lost must stay trusted until it expires")
	}
	step(t, &p, with(KeyCABundle, []byte("garbage")), at(1), "no usable CA", "serving certificate issuer not in the CA bundle")
	step(t, &p, with(corev1.TLSCertKey, other[corev1.TLSCertKey]), at(1), "no usable serving certificate")
	step(t, &p, good, t0.Add(-time.Hour), "serving certificate not valid yet")

	renamed := p
	renamed.dnsNames = []string{"webhook.other.svc"}
	out := step(t, &renamed, good, at(1), "serving certificate names changed")
	if !slices.Equal(leafOf(t, out).DNSNames, renamed.dnsNames) {
		t.Fatal("names not updated")
	}
	reip := p
	reip.ips = nil
	step(t, &reip, good, at(1), "serving certificate names changed")

	// Other keys in the Secret are kept.
	d = step(t, &p, with("note", []byte("kept")), at(6), "serving certificate renewal due")
	if string(d["note"]) != "kept" {
		t.Fatal("unrelated key dropped")
	}
}
