package simulator_test

import (
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/example/cloud-provider-example/exampleapi"
	"github.com/example/cloud-provider-example/internal/syncbuf"
	"github.com/example/cloud-provider-example/simulator/simtest"
)

func certReq(name string, c simtest.Cert) exampleapi.CreateCertificateRequest {
	return exampleapi.CreateCertificateRequest{Name: name, Region: "ex-west-1", CertificatePEM: c.CertPEM, PrivateKeyPEM: c.KeyPEM}
}

func (a *api) createCert(req exampleapi.CreateCertificateRequest) exampleapi.Certificate {
	a.t.Helper()
	return decoded[exampleapi.Certificate](a, http.StatusCreated, "POST", "/v1/certificates", req)
}

// keyBody is the base64 body of a PEM key: what must never be answered or
// logged (the BEGIN line alone would prove nothing).
func keyBody(t *testing.T, keyPEM string) string {
	t.Helper()
	lines := strings.Split(strings.TrimSpace(keyPEM), "\n")
	if len(lines) < 3 {
		t.Fatalf("not a PEM key: %d lines", len(lines))
	}
	return lines[1]
}

// httpsLB is a load balancer with an https listener on 443 serving certs
// and an http listener on 80 redirecting to it.
func httpsLB(name string, certs ...string) exampleapi.LoadBalancerSpec {
	s := lbSpec(name)
	s.Listeners = []exampleapi.Listener{
		{Protocol: "http", Port: 80, TargetPort: 30080, RedirectToHTTPSPort: 443},
		{Protocol: "https", Port: 443, TargetPort: 30080, CertificateIDs: certs,
			StickySessions: &exampleapi.StickySessions{CookieName: "EXLB", TTLSeconds: 3600}},
	}
	s.HealthCheck.Protocol = "https"
	return s
}

// TestCertificateLifecycle: upload, read, list, names shared by a
// rotation, an https listener using it, delete refused (409) while used,
// rotation to a new certificate, delete.
func TestCertificateLifecycle(t *testing.T) {
	c := startControl(t)
	old := simtest.NewCert(t, simtest.CertOptions{CommonName: "shop.example.test", DNSNames: []string{"shop.example.test", "www.shop.example.test"}})

	var cert exampleapi.Certificate
	resp := c.must(http.StatusCreated, "POST", "/v1/certificates", certReq("shop", old), &cert)
	if !strings.HasPrefix(cert.ID, "cert-") || cert.Name != "shop" || cert.Region != "ex-west-1" || cert.Version != 1 ||
		cert.CertificatePEM != old.CertPEM || cert.Fingerprint != old.Fingerprint || !cert.NotAfter.Equal(old.NotAfter) ||
		cert.CommonName != "shop.example.test" || !reflect.DeepEqual(cert.DNSNames, []string{"shop.example.test", "www.shop.example.test"}) ||
		cert.CreatedAt.IsZero() {
		t.Fatalf("new certificate %+v", cert)
	}
	if resp.header.Get("ETag") != `"1"` || resp.header.Get("Location") != "/v1/certificates/"+cert.ID {
		t.Errorf("create headers %v", resp.header)
	}
	var got exampleapi.Certificate
	c.must(http.StatusOK, "GET", "/v1/certificates/"+cert.ID, nil, &got)
	if !reflect.DeepEqual(got, cert) {
		t.Errorf("get %+v, want %+v", got, cert)
	}

	// A rotation uploads the new certificate under the same name.
	renewed := simtest.NewCert(t, simtest.CertOptions{CommonName: "shop.example.test"})
	next := c.createCert(certReq("shop", renewed))
	east := certReq("shop", renewed)
	east.Region = "ex-east-1"
	other := c.createCert(east)
	var l exampleapi.ListResponse[exampleapi.Certificate]
	c.must(http.StatusOK, "GET", "/v1/certificates?name=shop&region=ex-west-1", nil, &l)
	if len(l.Items) != 2 {
		t.Fatalf("list by name and region: %d items, want 2", len(l.Items))
	}
	c.must(http.StatusOK, "GET", "/v1/certificates?region=ex-east-1", nil, &l)
	if len(l.Items) != 1 || l.Items[0].ID != other.ID {
		t.Fatalf("list by region: %+v", l.Items)
	}
	var p1, p2 exampleapi.ListResponse[exampleapi.Certificate]
	c.must(http.StatusOK, "GET", "/v1/certificates?page_size=2", nil, &p1)
	c.must(http.StatusOK, "GET", "/v1/certificates?page_size=2&page_token="+p1.NextPageToken, nil, &p2)
	if len(p1.Items) != 2 || p1.NextPageToken == "" || len(p2.Items) != 1 || p2.NextPageToken != "" || p1.Items[1].ID >= p2.Items[0].ID {
		t.Fatalf("pages %+v / %+v", p1, p2)
	}

	lb := c.lbs().create(httpsLB("shop", cert.ID))
	if !reflect.DeepEqual(lb.Listeners, httpsLB("shop", cert.ID).Listeners) {
		t.Errorf("listeners not kept: %+v", lb.Listeners)
	}
	e := c.apiError(http.StatusConflict, "DELETE", "/v1/certificates/"+cert.ID, nil)
	if !strings.Contains(e.Message, "still used by 1 load balancer ("+lb.ID+")") {
		t.Errorf("409 message %q", e.Message)
	}

	// Rotation: the listener moves to the new certificate in place.
	upd := httpsLB("shop", next.ID)
	var updated exampleapi.LoadBalancer
	c.must(http.StatusOK, "PUT", "/v1/load-balancers/"+lb.ID, exampleapi.UpdateLoadBalancerRequest{
		Listeners: upd.Listeners, HealthCheck: upd.HealthCheck}, &updated)
	if updated.ID != lb.ID || updated.Version != 2 || updated.Listeners[1].CertificateIDs[0] != next.ID {
		t.Fatalf("rotated %+v", updated)
	}
	c.apiError(http.StatusPreconditionFailed, "DELETE", "/v1/certificates/"+cert.ID, nil, "If-Match", `"2"`)
	c.must(http.StatusNoContent, "DELETE", "/v1/certificates/"+cert.ID, nil, nil, "If-Match", `"1"`)
	c.apiError(http.StatusNotFound, "GET", "/v1/certificates/"+cert.ID, nil)
	c.apiError(http.StatusNotFound, "DELETE", "/v1/certificates/"+cert.ID, nil)
	c.must(http.StatusNoContent, "DELETE", "/v1/load-balancers/"+lb.ID, nil, nil)
	c.must(http.StatusNoContent, "DELETE", "/v1/certificates/"+next.ID, nil, nil)
}

// TestCertificateKeyNeverAnswered: the private key is in no answer (create,
// idempotent replay, get, list, errors) and in no request log line, though
// the cloud keeps it (see TestCertificateKeyIsStored).
func TestCertificateKeyNeverAnswered(t *testing.T) {
	var log syncbuf.Buffer
	sim := simtest.Start(t, simtest.WithLogger(slog.New(slog.NewJSONHandler(&log, nil))))
	c := control(t, sim)
	cc := simtest.NewCert(t, simtest.CertOptions{})
	secret := keyBody(t, cc.KeyPEM)

	var bodies []response
	req := certReq("web", cc)
	first := c.must(http.StatusCreated, "POST", "/v1/certificates", req, nil, "Idempotency-Key", "k1")
	replay := c.must(http.StatusCreated, "POST", "/v1/certificates", req, nil, "Idempotency-Key", "k1")
	if replay.header.Get("Idempotent-Replayed") != "true" || string(replay.body) != string(first.body) {
		t.Fatalf("replay: %v %s", replay.header, replay.body)
	}
	var cert exampleapi.Certificate
	if err := json.Unmarshal(first.body, &cert); err != nil {
		t.Fatal(err)
	}
	bodies = append(bodies, first, replay,
		c.must(http.StatusOK, "GET", "/v1/certificates/"+cert.ID, nil, nil),
		c.must(http.StatusOK, "GET", "/v1/certificates", nil, nil))
	// Errors about the key, and a key given where the certificate goes.
	other := simtest.NewCert(t, simtest.CertOptions{})
	mismatch := req
	mismatch.CertificatePEM = other.CertPEM
	swapped := req
	swapped.CertificatePEM = cc.KeyPEM
	doubled := req
	doubled.PrivateKeyPEM = cc.KeyPEM + cc.KeyPEM
	for _, bad := range []exampleapi.CreateCertificateRequest{mismatch, swapped, doubled} {
		bodies = append(bodies, c.do("POST", "/v1/certificates", bad))
	}
	renamed := req
	renamed.Name = "web2"
	bodies = append(bodies, c.do("POST", "/v1/certificates", req, "Idempotency-Key", "k2"),
		c.do("POST", "/v1/certificates", renamed, "Idempotency-Key", "k1"))
	sim.Stop()

	for i, r := range bodies {
		if strings.Contains(string(r.body), secret) || strings.Contains(string(r.body), "private_key_pem\":\"") {
			t.Errorf("answer %d (status %d) holds the private key: %s", i, r.status, r.body)
		}
	}
	if bodies[4].status != http.StatusBadRequest || bodies[5].status != http.StatusBadRequest || bodies[6].status != http.StatusBadRequest ||
		bodies[8].status != http.StatusConflict {
		t.Errorf("error answers: %d %d %d %d", bodies[4].status, bodies[5].status, bodies[6].status, bodies[8].status)
	}
	if log.String() == "" {
		t.Fatal("no request log captured; the check would prove nothing")
	}
	if strings.Contains(log.String(), secret) {
		t.Error("the request log holds the private key")
	}
}

// TestCertificateKeyIsStored: the cloud keeps the key (a load balancer
// needs it to end TLS), on disk in its database, across a restart.
func TestCertificateKeyIsStored(t *testing.T) {
	sim := simtest.Start(t)
	cc := simtest.NewCert(t, simtest.CertOptions{})
	cert := control(t, sim).createCert(certReq("web", cc))
	sim.Stop()

	db, err := bolt.Open(filepath.Join(sim.DataDir, "example-cloud.db"), 0o600, &bolt.Options{ReadOnly: true, Timeout: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	var stored struct {
		PrivateKeyPEM string `json:"private_key_pem"`
	}
	err = db.View(func(tx *bolt.Tx) error {
		return json.Unmarshal(tx.Bucket([]byte("certificates")).Get([]byte(cert.ID)), &stored)
	})
	if cerr := db.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		t.Fatal(err)
	}
	if stored.PrivateKeyPEM != cc.KeyPEM {
		t.Fatalf("stored key differs from the uploaded one (%d bytes stored)", len(stored.PrivateKeyPEM))
	}

	again := simtest.Start(t, simtest.WithDataDir(sim.DataDir), simtest.WithTokens(sim.Token, sim.ReadOnlyToken))
	var got exampleapi.Certificate
	control(t, again).must(http.StatusOK, "GET", "/v1/certificates/"+cert.ID, nil, &got)
	if got.Fingerprint != cc.Fingerprint {
		t.Errorf("after restart: %+v", got)
	}
}

// TestCertificateValidation: every refusal is a 400 naming the field, and
// none quotes the key.
func TestCertificateValidation(t *testing.T) {
	c := startControl(t)
	good := simtest.NewCert(t, simtest.CertOptions{})
	other := simtest.NewCert(t, simtest.CertOptions{})
	weak := simtest.NewCert(t, simtest.CertOptions{RSABits: 1024})
	ca := simtest.NewCert(t, simtest.CertOptions{CommonName: "Example Test CA", IsCA: true})
	leaf := simtest.NewCert(t, simtest.CertOptions{Issuer: &ca})
	with := func(mod func(*exampleapi.CreateCertificateRequest)) exampleapi.CreateCertificateRequest {
		r := certReq("web", good)
		mod(&r)
		return r
	}
	encrypted := "-----BEGIN RSA PRIVATE KEY-----\nProc-Type: 4,ENCRYPTED\nDEK-Info: AES-128-CBC,00000000000000000000000000000000\n\nAAAA\n-----END RSA PRIVATE KEY-----\n"
	tests := []struct {
		name  string
		body  any
		field string
		msg   string
	}{
		{"no name", with(func(r *exampleapi.CreateCertificateRequest) { r.Name = "" }), "name", "is required"},
		{"no region", with(func(r *exampleapi.CreateCertificateRequest) { r.Region = "" }), "region", "is required"},
		{"unknown region", with(func(r *exampleapi.CreateCertificateRequest) { r.Region = "ex-mars-1" }), "region", "unknown region"},
		{"no certificate", with(func(r *exampleapi.CreateCertificateRequest) { r.CertificatePEM = "" }), "certificate_pem", "is required"},
		{"garbage certificate", with(func(r *exampleapi.CreateCertificateRequest) { r.CertificatePEM = "hello" }), "certificate_pem", "holds no PEM CERTIFICATE block"},
		{"broken certificate", with(func(r *exampleapi.CreateCertificateRequest) {
			r.CertificatePEM = "-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n"
		}), "certificate_pem", "certificate 1 is not a valid X.509 certificate"},
		// Only PEM blocks: no text a tenant could aim at a reviewer's
		// terminal or at the plan text, quoted back escaped.
		{"text before the blocks", with(func(r *exampleapi.CreateCertificateRequest) { r.CertificatePEM = "subject=CN = web\n" + good.CertPEM }),
			"certificate_pem", `holds text outside its PEM blocks (16 bytes at byte 0: "subject=CN = web")`},
		{"escape sequence after the blocks", with(func(r *exampleapi.CreateCertificateRequest) {
			r.CertificatePEM = good.CertPEM + "\x1b[2J\x1b[HNo changes.\r\u202e"
		}), "certificate_pem", `holds text outside its PEM blocks (22 bytes at byte ` + fmt.Sprint(len(good.CertPEM)) + `: "\x1b[2J\x1b[HNo changes.\r\u202e")`},
		{"text between the blocks", with(func(r *exampleapi.CreateCertificateRequest) {
			r.CertificatePEM, r.PrivateKeyPEM = leaf.CertPEM+"\x1b]0;pwned\a\n"+ca.CertPEM, leaf.KeyPEM
		}), "certificate_pem", `(10 bytes at byte ` + fmt.Sprint(len(leaf.CertPEM)) + `: "\x1b]0;pwned\x07")`},
		{"key as certificate", with(func(r *exampleapi.CreateCertificateRequest) { r.CertificatePEM = good.CertPEM + good.KeyPEM }), "certificate_pem", "PEM block 2 is a private key (PRIVATE KEY)"},
		{"chain in the wrong order", with(func(r *exampleapi.CreateCertificateRequest) {
			r.CertificatePEM, r.PrivateKeyPEM = ca.CertPEM+leaf.CertPEM, ca.KeyPEM
		}), "certificate_pem", "certificate 1 was not issued by certificate 2"},
		{"unrelated chain", with(func(r *exampleapi.CreateCertificateRequest) { r.CertificatePEM = good.CertPEM + other.CertPEM }), "certificate_pem", "was not issued by"},
		{"no key", with(func(r *exampleapi.CreateCertificateRequest) { r.PrivateKeyPEM = "" }), "private_key_pem", "is required"},
		{"garbage key", with(func(r *exampleapi.CreateCertificateRequest) { r.PrivateKeyPEM = "hello" }), "private_key_pem", "holds no PEM block"},
		{"another certificate's key", with(func(r *exampleapi.CreateCertificateRequest) { r.PrivateKeyPEM = other.KeyPEM }), "private_key_pem", "does not match the certificate"},
		{"the issuer's key", with(func(r *exampleapi.CreateCertificateRequest) {
			r.CertificatePEM, r.PrivateKeyPEM = leaf.CertPEM+ca.CertPEM, ca.KeyPEM
		}), "private_key_pem", "does not match"},
		{"swapped", with(func(r *exampleapi.CreateCertificateRequest) { r.PrivateKeyPEM = good.CertPEM }), "private_key_pem", "holds a certificate, not a private key"},
		{"two keys", with(func(r *exampleapi.CreateCertificateRequest) { r.PrivateKeyPEM = good.KeyPEM + other.KeyPEM }), "private_key_pem", "more than one PEM block"},
		{"encrypted key", with(func(r *exampleapi.CreateCertificateRequest) { r.PrivateKeyPEM = encrypted }), "private_key_pem", "is encrypted"},
		{"weak RSA key", certReq("weak", weak), "private_key_pem", "is a 1024-bit RSA key (at least 2048 bits)"},
		{"too many tags", with(func(r *exampleapi.CreateCertificateRequest) { r.Tags = tagsN(51) }), "tags", "at most 50"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			e := c.apiError(http.StatusBadRequest, "POST", "/v1/certificates", tc.body)
			if e.Field != tc.field || !strings.Contains(e.Message, tc.msg) {
				t.Errorf("got %s: %q, want %s: ...%s...", e.Field, e.Message, tc.field, tc.msg)
			}
			if strings.ContainsAny(e.Message, "\x1b\r\a\u202e") {
				t.Errorf("message holds a control character raw: %q", e.Message)
			}
			for _, k := range []simtest.Cert{good, other, weak, ca} {
				if strings.Contains(e.Message, keyBody(t, k.KeyPEM)) {
					t.Errorf("message quotes a key: %q", e.Message)
				}
			}
		})
	}

	// Accepted: a chain, an RSA key, an expired certificate (shown).
	chain := c.createCert(exampleapi.CreateCertificateRequest{Name: "chain", Region: "ex-west-1",
		CertificatePEM: leaf.CertPEM + ca.CertPEM, PrivateKeyPEM: leaf.KeyPEM})
	if chain.Fingerprint != leaf.Fingerprint {
		t.Errorf("chain fingerprint %s, want the leaf's %s", chain.Fingerprint, leaf.Fingerprint)
	}
	c.createCert(certReq("rsa", simtest.NewCert(t, simtest.CertOptions{RSABits: 2048})))
	past := time.Now().Add(-48 * time.Hour)
	expired := c.createCert(certReq("expired", simtest.NewCert(t, simtest.CertOptions{NotBefore: past.Add(-time.Hour), NotAfter: past})))
	if !expired.NotAfter.Before(time.Now()) {
		t.Errorf("expired certificate shows not_after %v", expired.NotAfter)
	}
}

// TestHTTPListenerValidation: the rules of http and https listeners, each
// a 400 naming the field.
func TestHTTPListenerValidation(t *testing.T) {
	c := startControl(t)
	cc := simtest.NewCert(t, simtest.CertOptions{})
	cert := c.createCert(certReq("web", cc))
	eastReq := certReq("web", cc)
	eastReq.Region = "ex-east-1"
	east := c.createCert(eastReq)
	lb := c.lbs().create(lbSpec("existing"))

	with := func(mod func(s *exampleapi.LoadBalancerSpec)) exampleapi.LoadBalancerSpec {
		s := httpsLB("new", cert.ID)
		mod(&s)
		return s
	}
	https := func(mod func(l *exampleapi.Listener)) exampleapi.LoadBalancerSpec {
		return with(func(s *exampleapi.LoadBalancerSpec) { mod(&s.Listeners[1]) })
	}
	plain := func(mod func(l *exampleapi.Listener)) exampleapi.LoadBalancerSpec {
		return with(func(s *exampleapi.LoadBalancerSpec) { mod(&s.Listeners[0]) })
	}
	tests := []struct {
		name, method, path string
		body               any
		field, msg         string
	}{
		{"https without certificates", "POST", "/v1/load-balancers", https(func(l *exampleapi.Listener) { l.CertificateIDs = nil }),
			"listeners[1].certificate_ids", "is required for https listeners"},
		{"certificates on tcp", "POST", "/v1/load-balancers", plain(func(l *exampleapi.Listener) {
			l.Protocol, l.RedirectToHTTPSPort, l.CertificateIDs = "tcp", 0, []string{cert.ID}
		}), "listeners[0].certificate_ids", "is only allowed on https listeners, not tcp"},
		{"not a certificate id", "POST", "/v1/load-balancers", https(func(l *exampleapi.Listener) { l.CertificateIDs = []string{"tp-1"} }),
			"listeners[1].certificate_ids[0]", `"tp-1" is not a certificate id (cert-...)`},
		{"duplicate certificate", "POST", "/v1/load-balancers", https(func(l *exampleapi.Listener) { l.CertificateIDs = []string{cert.ID, cert.ID} }),
			"listeners[1].certificate_ids[1]", "duplicate certificate"},
		{"too many certificates", "POST", "/v1/load-balancers", https(func(l *exampleapi.Listener) { l.CertificateIDs = idsN("cert-", 26) }),
			"listeners[1].certificate_ids", "has 26 certificates (at most 25)"},
		{"unknown certificate", "POST", "/v1/load-balancers", https(func(l *exampleapi.Listener) { l.CertificateIDs = []string{cert.ID, "cert-gone"} }),
			"listeners[1].certificate_ids[1]", `certificate "cert-gone" does not exist`},
		{"certificate of another region", "POST", "/v1/load-balancers", https(func(l *exampleapi.Listener) { l.CertificateIDs = []string{east.ID} }),
			"listeners[1].certificate_ids[0]", "is in region ex-east-1, not ex-west-1"},
		{"update to an unknown certificate", "PUT", "/v1/load-balancers/" + lb.ID, exampleapi.UpdateLoadBalancerRequest{
			Listeners: https(func(l *exampleapi.Listener) { l.CertificateIDs = []string{"cert-gone"} }).Listeners},
			"listeners[1].certificate_ids[0]", "does not exist"},
		{"redirect on https", "POST", "/v1/load-balancers", https(func(l *exampleapi.Listener) { l.RedirectToHTTPSPort = 443 }),
			"listeners[1].redirect_to_https_port", "is only allowed on http listeners, not https"},
		{"redirect to no https listener", "POST", "/v1/load-balancers", plain(func(l *exampleapi.Listener) { l.RedirectToHTTPSPort = 8443 }),
			"listeners[0].redirect_to_https_port", "8443 is not the port of an https listener of this load balancer (https ports: 443)"},
		{"redirect without https", "POST", "/v1/load-balancers", with(func(s *exampleapi.LoadBalancerSpec) { s.Listeners = s.Listeners[:1] }),
			"listeners[0].redirect_to_https_port", "(it has none)"},
		{"redirect port out of range", "POST", "/v1/load-balancers", plain(func(l *exampleapi.Listener) { l.RedirectToHTTPSPort = -1 }),
			"listeners[0].redirect_to_https_port", "out of range"},
		{"sticky on udp", "POST", "/v1/load-balancers", plain(func(l *exampleapi.Listener) {
			l.Protocol, l.RedirectToHTTPSPort, l.StickySessions = "udp", 0, &exampleapi.StickySessions{CookieName: "a", TTLSeconds: 1}
		}), "listeners[0].sticky_sessions", "only allowed on http and https listeners, not udp"},
		{"sticky with redirect", "POST", "/v1/load-balancers", plain(func(l *exampleapi.Listener) {
			l.StickySessions = &exampleapi.StickySessions{CookieName: "a", TTLSeconds: 1}
		}), "listeners[0].sticky_sessions", "not allowed with redirect_to_https_port"},
		{"bad cookie name", "POST", "/v1/load-balancers", https(func(l *exampleapi.Listener) { l.StickySessions.CookieName = "a b" }),
			"listeners[1].sticky_sessions.cookie_name", `"a b" is not a cookie name`},
		{"no cookie name", "POST", "/v1/load-balancers", https(func(l *exampleapi.Listener) { l.StickySessions.CookieName = "" }),
			"listeners[1].sticky_sessions.cookie_name", "is not a cookie name"},
		{"cookie ttl", "POST", "/v1/load-balancers", https(func(l *exampleapi.Listener) { l.StickySessions.TTLSeconds = 0 }),
			"listeners[1].sticky_sessions.ttl_seconds", "0 is out of range (accepted: 1-604800)"},
		{"tcp and http on one port", "POST", "/v1/load-balancers", with(func(s *exampleapi.LoadBalancerSpec) {
			s.Listeners = append(s.Listeners, exampleapi.Listener{Protocol: "tcp", Port: 443, TargetPort: 1})
		}), "listeners[2].port", "port 443 is already used by listeners[1] (https/443); tcp, tls, http and https listeners share"},
		{"tls and https on one port", "POST", "/v1/load-balancers", with(func(s *exampleapi.LoadBalancerSpec) {
			s.Listeners = append(s.Listeners, exampleapi.Listener{Protocol: "tls", Port: 443, TargetPort: 1})
		}), "listeners[2].port", "port 443 is already used by listeners[1] (https/443)"},
		{"certificates on tls", "POST", "/v1/load-balancers", plain(func(l *exampleapi.Listener) {
			l.Protocol, l.Port, l.RedirectToHTTPSPort, l.CertificateIDs = "tls", 8443, 0, []string{cert.ID}
		}), "listeners[0].certificate_ids", "not tls: a tls listener passes TLS through"},
		{"redirect on tls", "POST", "/v1/load-balancers", plain(func(l *exampleapi.Listener) { l.Protocol, l.Port = "tls", 8443 }),
			"listeners[0].redirect_to_https_port", "is only allowed on http listeners, not tls"},
		{"sticky on tls", "POST", "/v1/load-balancers", plain(func(l *exampleapi.Listener) {
			l.Protocol, l.Port, l.RedirectToHTTPSPort, l.StickySessions = "tls", 8443, 0, &exampleapi.StickySessions{CookieName: "a", TTLSeconds: 1}
		}), "listeners[0].sticky_sessions", "only allowed on http and https listeners, not tls"},
		{"https health check without path", "POST", "/v1/load-balancers", with(func(s *exampleapi.LoadBalancerSpec) { s.HealthCheck.Path = "" }),
			"health_check.path", "required for http and https health checks"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			e := c.apiError(http.StatusBadRequest, tc.method, tc.path, tc.body)
			if e.Field != tc.field || !strings.Contains(e.Message, tc.msg) {
				t.Errorf("got %s: %q, want %s: ...%s...", e.Field, e.Message, tc.field, tc.msg)
			}
			if strings.ContainsAny(e.Message, "\x1b\r\a\u202e") {
				t.Errorf("message holds a control character raw: %q", e.Message)
			}
		})
	}
	// udp may share a port with the TCP protocols, tls among them; tls
	// takes the PROXY protocol as tcp does.
	ok := httpsLB("udp-too", cert.ID)
	ok.Listeners = append(ok.Listeners, exampleapi.Listener{Protocol: "udp", Port: 443, TargetPort: 30443},
		exampleapi.Listener{Protocol: "tls", Port: 8443, TargetPort: 30443, ProxyProtocol: true},
		exampleapi.Listener{Protocol: "udp", Port: 8443, TargetPort: 30443})
	c.lbs().create(ok)
}
