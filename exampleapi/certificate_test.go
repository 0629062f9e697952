package exampleapi_test

import (
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"k8s.io/klog/v2"

	"github.com/example/cloud-provider-example/exampleapi"
	"github.com/example/cloud-provider-example/internal/testkit"
	"github.com/example/cloud-provider-example/simulator/simtest"
)

func certRequest(name string, c simtest.Cert) exampleapi.CreateCertificateRequest {
	return exampleapi.CreateCertificateRequest{Name: name, Region: region, CertificatePEM: c.CertPEM, PrivateKeyPEM: c.KeyPEM,
		Tags: map[string]string{"cluster": "prod"}}
}

// keyBody is the base64 body of a PEM key, what must never leak.
func keyBody(keyPEM string) string { return strings.Split(keyPEM, "\n")[1] }

// TestCertificateLifecycle drives every certificate method, and an https
// listener using a certificate, through the client.
func TestCertificateLifecycle(t *testing.T) {
	c := startClient(t)
	cc := simtest.NewCert(t, simtest.CertOptions{CommonName: "shop.example.test"})

	cert, err := c.CreateCertificate(testkit.Context(t), certRequest("shop", cc))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(cert.ID, "cert-") || cert.Fingerprint != cc.Fingerprint || !cert.NotAfter.Equal(cc.NotAfter) ||
		cert.CommonName != "shop.example.test" || cert.Tags["cluster"] != "prod" || cert.CertificatePEM != cc.CertPEM {
		t.Fatalf("created %+v", cert)
	}
	if got, err := c.GetCertificate(testkit.Context(t), cert.ID); err != nil || got.Fingerprint != cc.Fingerprint {
		t.Fatalf("get: %+v %v", got, err)
	}
	list, err := c.ListCertificates(testkit.Context(t), exampleapi.CertificateFilter{Name: "shop", Region: region})
	if err != nil || len(list) != 1 || list[0].ID != cert.ID {
		t.Fatalf("list: %+v %v", list, err)
	}

	spec := lbSpec("shop")
	spec.Listeners = []exampleapi.Listener{
		{Protocol: "http", Port: 80, TargetPort: 30080, RedirectToHTTPSPort: 443},
		{Protocol: "https", Port: 443, TargetPort: 30080, CertificateIDs: []string{cert.ID},
			StickySessions: &exampleapi.StickySessions{CookieName: "EXLB", TTLSeconds: 600}},
	}
	spec.HealthCheck = &exampleapi.HealthCheck{Protocol: "https", Port: 30080, Path: "/healthz",
		IntervalSeconds: 10, TimeoutSeconds: 5, HealthyThreshold: 3, UnhealthyThreshold: 3}
	lb, err := c.CreateLoadBalancer(testkit.Context(t), spec)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(lb.Listeners, spec.Listeners) || lb.HealthCheck.Protocol != "https" {
		t.Fatalf("listeners %+v", lb.Listeners)
	}

	checkDeleteInUse(t, c, "certificate", cert.ID, lb.ID, c.DeleteCertificate, c.GetCertificate)
}

// TestCertificateFieldErrors: a 400 keeps the field the API named.
func TestCertificateFieldErrors(t *testing.T) {
	c := startClient(t)
	cc := simtest.NewCert(t, simtest.CertOptions{})
	other := simtest.NewCert(t, simtest.CertOptions{})
	req := certRequest("web", cc)
	req.PrivateKeyPEM = other.KeyPEM
	_, err := c.CreateCertificate(testkit.Context(t), req)
	var apiErr *exampleapi.APIError
	if !errors.Is(err, exampleapi.ErrInvalid) || !errors.As(err, &apiErr) || apiErr.Field != "private_key_pem" {
		t.Fatalf("mismatched key: want invalid private_key_pem, got %v", err)
	}

	spec := lbSpec("web")
	spec.Listeners = []exampleapi.Listener{{Protocol: "https", Port: 443, TargetPort: 30443, CertificateIDs: []string{"cert-gone"}}}
	_, err = c.CreateLoadBalancer(testkit.Context(t), spec)
	if !errors.As(err, &apiErr) || apiErr.Field != "listeners[0].certificate_ids[0]" {
		t.Fatalf("unknown certificate: want invalid listeners[0].certificate_ids[0], got %v", err)
	}
}

// TestInspectCertificate: what the provider shows at plan time is what the
// cloud answers.
func TestInspectCertificate(t *testing.T) {
	ca := simtest.NewCert(t, simtest.CertOptions{CommonName: "CA", IsCA: true})
	leaf := simtest.NewCert(t, simtest.CertOptions{CommonName: "a.example.test", DNSNames: []string{"a.example.test", "b.example.test"},
		NotAfter: time.Date(2031, 2, 3, 4, 5, 6, 0, time.UTC), Issuer: &ca})
	// Whitespace around and between the blocks is all a chain may hold
	// besides them (TestInspectCertificateForeignText).
	info, err := exampleapi.InspectCertificate("\n" + leaf.CertPEM + "\r\n\t \n" + strings.ReplaceAll(ca.CertPEM, "\n", "\r\n") + "\n\n")
	if err != nil {
		t.Fatal(err)
	}
	want := exampleapi.CertificateInfo{Fingerprint: leaf.Fingerprint, CommonName: "a.example.test",
		DNSNames: []string{"a.example.test", "b.example.test"}, NotBefore: info.NotBefore, NotAfter: leaf.NotAfter}
	if !slices.Equal(info.DNSNames, want.DNSNames) || fmt.Sprint(info) != fmt.Sprint(want) ||
		info.NotAfter.Format(time.RFC3339) != "2031-02-03T04:05:06Z" {
		t.Errorf("info %+v, want %+v", info, want)
	}
	if err := exampleapi.CheckPrivateKey(leaf.CertPEM+ca.CertPEM, leaf.KeyPEM); err != nil {
		t.Errorf("the leaf's key: %v", err)
	}
	if err := exampleapi.CheckPrivateKey(leaf.CertPEM+ca.CertPEM, ca.KeyPEM); err == nil || strings.Contains(err.Error(), keyBody(ca.KeyPEM)) {
		t.Errorf("the CA's key: %v", err)
	}
}

// TestPrivateKeyNeverInErrorsOrLogs: neither a create request printed by
// mistake, nor the client's errors and logs (at the highest verbosity,
// through retries) show the private key.
func TestPrivateKeyNeverInErrorsOrLogs(t *testing.T) {
	logs := captureLogs(t)

	sim := simtest.Start(t)
	c := newClient(t, sim, func(o *exampleapi.Options) { o.RetryMax = 2 })
	cc := simtest.NewCert(t, simtest.CertOptions{})
	other := simtest.NewCert(t, simtest.CertOptions{})
	secrets := []string{keyBody(cc.KeyPEM), keyBody(other.KeyPEM)}
	good := certRequest("web", cc)
	bad := good
	bad.PrivateKeyPEM = other.KeyPEM

	var errs []error
	_, err := c.CreateCertificate(testkit.Context(t), bad)
	errs = append(errs, err)
	sim.SetFaults(t, exampleapi.Faults{ErrorRate: 1})
	_, err = c.CreateCertificate(testkit.Context(t), good)
	errs = append(errs, err)
	sim.SetFaults(t, exampleapi.Faults{})
	if _, err := c.CreateCertificate(testkit.Context(t), good); err != nil {
		t.Fatal(err)
	}
	klog.Flush()

	printed := []string{fmt.Sprint(good), fmt.Sprintf("%v %+v %#v %s", good, good, good, good), fmt.Sprintf("%+v", &good)}
	for i, err := range errs {
		if err == nil {
			t.Fatalf("call %d: want an error", i)
		}
		printed = append(printed, err.Error())
	}
	if logs.String() == "" {
		t.Fatal("captured no log output; the check would be vacuous")
	}
	printed = append(printed, logs.String())
	for i, s := range printed {
		for _, secret := range secrets {
			if strings.Contains(s, secret) {
				t.Errorf("text %d shows a private key: %.200s", i, s)
			}
		}
	}
	if !strings.Contains(printed[0], "PrivateKeyPEM:(redacted)") || !strings.Contains(printed[0], "CertificatePEM:(") {
		t.Errorf("printed request %q", printed[0])
	}
}

// TestInspectCertificateForeignText: a chain holds PEM CERTIFICATE blocks
// and whitespace only. Any other text - openssl's subject= line, a
// comment, an escape sequence meant for a reviewer's terminal, a block the
// PEM decoder would skip - is refused, before, between or after the
// blocks, and the message names it by offset and length with an escaped
// excerpt, never raw.
func TestInspectCertificateForeignText(t *testing.T) {
	ca := simtest.NewCert(t, simtest.CertOptions{CommonName: "CA", IsCA: true})
	leaf := simtest.NewCert(t, simtest.CertOptions{Issuer: &ca})
	chain := leaf.CertPEM + ca.CertPEM
	const clear = "\x1b[2J\x1b[HNo changes.\r\u202e"
	body := strings.Split(leaf.CertPEM, "\n")[1]
	for _, tc := range []struct {
		name, pem, want string
	}{
		{"openssl subject line", "subject=CN = a.example.test\n" + chain,
			`holds text outside its PEM blocks (27 bytes at byte 0: "subject=CN = a.example.t"...)`},
		{"escape sequence before", clear + "\n" + chain,
			`holds text outside its PEM blocks (22 bytes at byte 0: "\x1b[2J\x1b[HNo changes.\r\u202e")`},
		{"between", leaf.CertPEM + "# the CA\n" + ca.CertPEM,
			fmt.Sprintf(`(8 bytes at byte %d: "# the CA")`, len(leaf.CertPEM))},
		{"after", chain + clear,
			fmt.Sprintf(`(22 bytes at byte %d: "\x1b[2J\x1b[HNo changes.\r\u202e")`, len(chain))},
		{"after, on the END line", strings.TrimSuffix(chain, "\n") + " trailing\n",
			"PEM block 2, at byte " + fmt.Sprint(len(leaf.CertPEM)) + ", is malformed"},
		{"quotes escaped", chain + `"evil"`, fmt.Sprintf(`(6 bytes at byte %d: "\"evil\"")`, len(chain))},
		// The decoder skips a malformed block and reads the next: its text
		// would pass unseen.
		{"malformed block first", "-----BEGIN CERTIFICATE-----\n" + clear + "\n-----END CERTIFICATE-----\n" + chain,
			"PEM block 1, at byte 0, is malformed"},
		{"BEGIN without END", leaf.CertPEM + "-----BEGIN CERTIFICATE-----\n" + body + "\n",
			"PEM block 2, at byte " + fmt.Sprint(len(leaf.CertPEM)) + ", is malformed"},
		{"headers", strings.Replace(leaf.CertPEM, "-----\n", "-----\nComment: "+clear+"\n\n", 1),
			"PEM block 1 has headers (1); a CERTIFICATE block holds the certificate only"},
		{"only text", "hello " + clear, "holds no PEM CERTIFICATE block"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := exampleapi.InspectCertificate(tc.pem)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("InspectCertificate: %v; want an error with %s", err, tc.want)
			}
			if strings.ContainsAny(err.Error(), "\x1b\r\u202e") {
				t.Errorf("the error holds the foreign text raw: %q", err)
			}
			// The key check reads the same chain, and refuses it alike.
			if err := exampleapi.CheckPrivateKey(tc.pem, leaf.KeyPEM); err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("CheckPrivateKey: %v; want an error with %s", err, tc.want)
			}
		})
	}
}
