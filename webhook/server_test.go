package webhook

import (
	"context"
	"crypto/tls"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	admissionv1 "k8s.io/api/admission/v1"
)

func TestServer(t *testing.T) {
	crt, key, pool := testPair(t)
	src := &swappable{}
	src.set(t, crt, key)
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	addr, done, err := Start(ctx, Options{
		Addr:         "127.0.0.1:0",
		Certificates: src,
		Handlers: map[string]http.Handler{"/validate": Handler("validate",
			func(context.Context, *admissionv1.AdmissionRequest) *admissionv1.AdmissionResponse {
				return &admissionv1.AdmissionResponse{Allowed: true, Warnings: []string{"seen"}}
			})},
	})
	if err != nil {
		t.Fatal(err)
	}
	client := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}}}
	defer client.CloseIdleConnections()

	resp, err := client.Get("https://" + addr + "/healthz")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || string(body) != "ok" {
		t.Fatalf("/healthz: %d %q", resp.StatusCode, body)
	}
	resp, err = client.Post("https://"+addr+"/validate", "application/json", strings.NewReader(reviewJSON))
	if err != nil {
		t.Fatal(err)
	}
	body, _ = io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || !strings.Contains(string(body), `"warnings":["seen"]`) {
		t.Fatalf("/validate: %d %s", resp.StatusCode, body)
	}

	// TLS 1.1 is refused.
	if c, err := tls.Dial("tcp", addr, &tls.Config{RootCAs: pool, MaxVersion: tls.VersionTLS11}); err == nil {
		c.Close()
		t.Fatal("TLS 1.1 handshake succeeded")
	}

	// A new certificate is served without a restart.
	before := servedSerial(t, addr, pool)
	crt2, key2, pool2 := testPair(t)
	src.set(t, crt2, key2)
	if after := servedSerial(t, addr, pool2); after == before {
		t.Fatal("old certificate still served")
	}

	// The port is taken: Start fails at once.
	if _, _, err := Start(ctx, Options{Addr: addr, Certificates: src}); err == nil || !strings.Contains(err.Error(), "listen") {
		t.Fatalf("second Start on %s: %v", addr, err)
	}

	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("shutdown: %v", err)
		}
	case <-time.After(15 * time.Second):
		t.Fatal("server did not stop")
	}
	if c, err := net.DialTimeout("tcp", addr, time.Second); err == nil {
		c.Close()
		t.Fatal("still listening after shutdown")
	}
}

func TestServeReturnsListenError(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	errc := make(chan error, 1)
	go func() { errc <- Serve(t.Context(), Options{Addr: ln.Addr().String(), Certificates: &swappable{}}) }()
	select {
	case err := <-errc:
		if err == nil {
			t.Fatal("Serve on a used port returned nil")
		}
	case <-time.After(5 * time.Second):
		t.Fatal("Serve on a used port did not return")
	}
	if _, _, err := Start(t.Context(), Options{Addr: "127.0.0.1:0"}); err == nil {
		t.Fatal("Start without certificates succeeded")
	}
}
