package dataplane_test

import (
	"io"
	"net/http"
	"net/netip"
	"testing"
	"time"

	"golang.org/x/net/websocket"

	"github.com/example/cloud-provider-example/exampleapi"
	"github.com/example/cloud-provider-example/internal/echo"
	"github.com/example/cloud-provider-example/simulator/dataplane"
)

// h2cClient speaks HTTP/2 without TLS by prior knowledge, as the
// conformance suite's h2c test does.
var h2cClient = func() *http.Client {
	var p http.Protocols
	p.SetUnencryptedHTTP2(true)
	return &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{Protocols: &p}}
}()

// h2cBackend serves echo answers as pod at addr, h2c only (echo-basic's
// h2c port).
func h2cBackend(t *testing.T, addr, pod string) {
	t.Helper()
	serve(t, addr, echo.H2CServer(echo.Handler(pod, "test")))
}

// protoGet is GET url through c: the status, the protocol the client
// got its answer in, and the one the backend saw.
func protoGet(t *testing.T, c *http.Client, url string) (status int, client, backend string) {
	t.Helper()
	r, a := get(t, c, url, "")
	return r.StatusCode, r.Proto, a.Proto
}

// An http listener takes HTTP/1.1 and h2c by prior knowledge alike, and
// forwards in its backend's protocol whatever the client spoke: HTTP/2
// to an h2c backend, HTTP/1.1 to the others; a WebSocket's upgrade still
// goes through.
func TestHTTPSpeaksEachBackendsProtocol(t *testing.T) {
	h2cBackend(t, "10.0.0.1:30081", "h2")
	mux := http.NewServeMux()
	mux.Handle("/ws", websocket.Handler(func(c *websocket.Conn) { _, _ = io.Copy(c, c) }))
	mux.Handle("/", echo.Handler("h1", "test"))
	serve(t, "10.0.0.2:30080", server(mux))
	lb := newLB("lb-1", []exampleapi.Listener{{Protocol: "http", Port: 80, TargetPort: 30080}},
		[]exampleapi.Rule{
			{ListenerPort: 80, Priority: 1, PathType: exampleapi.PathPrefix, Path: "/h2c",
				Backends: []exampleapi.RuleBackend{{TargetPoolID: "tp-a", Port: 30081, Weight: 1, Protocol: exampleapi.BackendH2C}}},
			// The h2c port as an HTTP/1.1 backend: it refuses.
			{ListenerPort: 80, Priority: 2, PathType: exampleapi.PathPrefix, Path: "/h1-to-h2c",
				Backends: []exampleapi.RuleBackend{{TargetPoolID: "tp-a", Port: 30081, Weight: 1}}},
			{ListenerPort: 80, Priority: 3, Backends: []exampleapi.RuleBackend{{TargetPoolID: "tp-b", Port: 30080, Weight: 1, Protocol: exampleapi.BackendHTTP}}},
		})
	start(t, &dataplane.Plane{LoadBalancers: []dataplane.LoadBalancer{{LoadBalancer: lb, Addrs: []netip.Addr{lbAddr},
		Pools: map[string][]dataplane.Target{"tp-a": {target("i-1", "10.0.0.1")}, "tp-b": {target("i-2", "10.0.0.2")}}}}})

	for _, tc := range []struct {
		name            string
		c               *http.Client
		path            string
		status          int
		client, backend string
	}{
		{"h2c to an h2c backend", h2cClient, "/h2c", http.StatusOK, "HTTP/2.0", "HTTP/2.0"},
		{"HTTP/1.1 to an h2c backend", noRedirects, "/h2c", http.StatusOK, "HTTP/1.1", "HTTP/2.0"},
		{"h2c to an HTTP/1.1 backend", h2cClient, "/", http.StatusOK, "HTTP/2.0", "HTTP/1.1"},
		{"HTTP/1.1 to an h2c port as HTTP/1.1", noRedirects, "/h1-to-h2c", http.StatusBadRequest, "HTTP/1.1", ""},
	} {
		status, client, backend := protoGet(t, tc.c, "http://203.0.113.10"+tc.path)
		if status != tc.status || client != tc.client || backend != tc.backend {
			t.Errorf("%s: %d in %s, the backend saw %q; want %d in %s, %q", tc.name, status, client, backend, tc.status, tc.client, tc.backend)
		}
	}

	conn, err := websocket.Dial("ws://203.0.113.10/ws", "", "http://203.0.113.10/")
	if err != nil {
		t.Fatalf("WebSocket through the listener: %v", err)
	}
	defer conn.Close()
	if err := websocket.Message.Send(conn, "ping"); err != nil {
		t.Fatal(err)
	}
	var got string
	if err := websocket.Message.Receive(conn, &got); err != nil || got != "ping" {
		t.Errorf("WebSocket echo: %q, %v", got, err)
	}
}
