// Package echo is the backend that answers the tests' traffic: an HTTP
// server speaking the JSON contract of the Gateway API conformance suite's
// echo-basic (what request arrived, at which pod of which namespace), and
// TCP and UDP servers that send back what they get. The tests' pods and
// the data plane's tests run it.
package echo

import (
	"crypto/tls"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"

	"github.com/example/cloud-provider-example/internal/relay"
)

// Answer is what the HTTP server says of a request, by echo-basic's
// field names.
type Answer struct {
	Path      string              `json:"path"`
	Host      string              `json:"host"`
	Method    string              `json:"method"`
	Proto     string              `json:"proto"`
	Headers   map[string][]string `json:"headers"`
	Namespace string              `json:"namespace"`
	Pod       string              `json:"pod"`
	HTTPPort  string              `json:"httpPort,omitempty"`
	// RemoteAddr is the address the request came from (not in
	// echo-basic's contract; the tests of client addresses read it).
	RemoteAddr string   `json:"remoteAddr"`
	TLS        *TLSInfo `json:"tls,omitempty"`
}

// TLSInfo is the TLS connection a request came over.
type TLSInfo struct {
	Version    string `json:"version"`
	ServerName string `json:"serverName"`
}

// Handler answers every request with its Answer, as pod of namespace,
// after echo-basic's ?delay= and its /retry/ simulation.
func Handler(pod, namespace string) http.Handler {
	tries := &retries{}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		// echo-basic's simulations (simulate.go): a failing try, a slow
		// answer.
		if isRetryPath(r.URL.Path) && tries.fail(w, r) {
			return
		}
		if !delay(r, "delay") {
			http.Error(w, "bad delay", http.StatusInternalServerError)
			return
		}
		a := Answer{Path: r.RequestURI, Host: r.Host, Method: r.Method, Proto: r.Proto, Headers: r.Header,
			Namespace: namespace, Pod: pod, RemoteAddr: r.RemoteAddr}
		if _, port, err := net.SplitHostPort(localAddr(r)); err == nil {
			a.HTTPPort = port
		}
		if r.TLS != nil {
			a.TLS = &TLSInfo{Version: tls.VersionName(r.TLS.Version), ServerName: r.TLS.ServerName}
		}
		setHeaders(w, r)
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("X-Content-Type-Options", "nosniff")
		// A status the client asks for, as echo-basic's ?status= does not;
		// the tests of fixed answers use it.
		if s, err := strconv.Atoi(r.URL.Query().Get("status")); err == nil && s >= 200 && s < 600 {
			w.WriteHeader(s)
		}
		_ = json.NewEncoder(w).Encode(a)
	})
}

// setHeaders sets the response headers r asks for in X-Echo-Set-Header
// ("name:value,name:value"), as echo-basic does (what the suite's
// response header tests send): each name as written, a second value of a
// name appended to the first with ",".
func setHeaders(w http.ResponseWriter, r *http.Request) {
	for _, list := range r.Header.Values("X-Echo-Set-Header") {
		for kv := range strings.SplitSeq(list, ",") {
			name, value, _ := strings.Cut(strings.TrimSpace(kv), ":")
			switch vs := w.Header()[name]; {
			case name == "":
			case len(vs) == 0:
				w.Header()[name] = []string{value}
			default:
				vs[0] += "," + strings.TrimSpace(value)
			}
		}
	}
}

func localAddr(r *http.Request) string {
	if a, ok := r.Context().Value(http.LocalAddrContextKey).(net.Addr); ok {
		return a.String()
	}
	return ""
}

// ServeTCP sends back what each connection of ln sends, prefixed by
// prefix once per connection, until ln closes.
func ServeTCP(ln net.Listener, prefix string) {
	relay.Accept(ln, func(c net.Conn) {
		defer c.Close()
		if prefix != "" {
			if _, err := io.WriteString(c, prefix); err != nil {
				return
			}
		}
		_, _ = io.Copy(c, c)
	})
}

// ServeUDP sends each datagram of pc back to its sender, prefixed by
// prefix, until pc closes.
func ServeUDP(pc net.PacketConn, prefix string) {
	buf := make([]byte, 64*1024)
	for {
		n, from, err := pc.ReadFrom(buf)
		if err != nil {
			return
		}
		_, _ = pc.WriteTo([]byte(prefix+strings.TrimSpace(string(buf[:n]))), from)
	}
}
