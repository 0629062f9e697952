package dataplane

import (
	"cmp"
	"context"
	"crypto/tls"
	"errors"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"strings"
	"time"

	"github.com/example/cloud-provider-example/exampleapi"
	"github.com/example/cloud-provider-example/simulator/routing"
)

// drainTimeout bounds how long a closed socket's open requests may run.
const drainTimeout = 30 * time.Second

// transports are the load balancers' connections to their targets, by
// backend protocol: HTTP/1.1 (what a WebSocket's upgrade needs), or
// HTTP/2 with prior knowledge for an h2c backend.
var transports = map[string]*http.Transport{
	exampleapi.BackendHTTP: newTransport(func(p *http.Protocols) { p.SetHTTP1(true) }),
	exampleapi.BackendH2C:  newTransport(func(p *http.Protocols) { p.SetUnencryptedHTTP2(true) }),
}

func newTransport(set func(*http.Protocols)) *http.Transport {
	var p http.Protocols
	set(&p)
	return &http.Transport{
		DialContext:           (&net.Dialer{Timeout: 5 * time.Second}).DialContext,
		MaxIdleConnsPerHost:   64,
		IdleConnTimeout:       30 * time.Second,
		ResponseHeaderTimeout: time.Minute,
		Protocols:             &p,
	}
}

// listenerProtocols are what an http or https listener's clients may
// speak: HTTP/1.1, and on cleartext HTTP/2 with prior knowledge (h2c).
// HTTPS offers no h2 (its TLS has no ALPN): HTTP/1.1 there.
var listenerProtocols = func() *http.Protocols {
	var p http.Protocols
	p.SetHTTP1(true)
	p.SetUnencryptedHTTP2(true)
	return &p
}()

type httpSocket struct {
	srv *http.Server
	ln  net.Listener
}

// close stops accepting at once (the port may be bound again right away)
// and lets the open requests finish.
func (h httpSocket) close() {
	_ = h.ln.Close()
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), drainTimeout)
		defer cancel()
		if h.srv.Shutdown(ctx) != nil {
			_ = h.srv.Close() // the drain ran out: cut what is left
		}
	}()
}

// serveHTTP serves an http or https listener's socket.
func (s *Server) serveHTTP(k socketKey, ln net.Listener) httpSocket {
	srv := &http.Server{Handler: s.handler(k), ReadHeaderTimeout: 10 * time.Second, Protocols: listenerProtocols}
	if k.protocol == exampleapi.ProtocolHTTPS {
		ln = tls.NewListener(ln, &tls.Config{GetCertificate: s.certificate(k), MinVersion: tls.VersionTLS12})
	}
	go func() { _ = srv.Serve(ln) }() // ends when the socket closes
	return httpSocket{srv: srv, ln: ln}
}

// handler answers each request by the plane of the moment.
func (s *Server) handler(k socketKey) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		v := s.cur.Load()
		lb, l, ok := v.listener(k.addr.Addr(), int(k.addr.Port()), k.protocol)
		if !ok {
			w.Header().Set("Connection", "close")
			http.Error(w, "no such listener", http.StatusServiceUnavailable)
			return
		}
		req := exampleapi.SimulatedRequest{ListenerPort: l.Port, Protocol: l.Protocol,
			Host: r.Host, Path: r.URL.Path, Query: r.URL.RawQuery, Method: r.Method, Headers: flatten(r.Header)}
		d, err := routing.Decide(lb.LoadBalancer, lb.RuleSets, l, req, v.targets(lb))
		if err == nil && cors(w, r, d.CORS) {
			return // a preflight, the load balancer's to answer
		}
		if d.Status != http.StatusOK {
			// The rule's own answer (a redirect, a fixed response); the
			// load balancer's errors have no changes.
			routing.ModifyHeaders(w.Header(), d.ResponseModifier)
		}
		switch {
		case err != nil:
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		case d.Location != "":
			// The evaluator matched the decoded path and ended the
			// Location with it, or with the rule's: a path kept stays as
			// sent, a new one is escaped.
			path := r.URL.EscapedPath()
			if d.LocationPath != r.URL.Path {
				path = (&url.URL{Path: d.LocationPath}).EscapedPath()
			}
			loc := strings.TrimSuffix(d.Location, d.LocationPath) + path
			if r.URL.RawQuery != "" {
				loc += "?" + r.URL.RawQuery
			}
			// The rule's own target: the load balancer redirects where
			// it was told to (http.Redirect would rewrite a relative one).
			w.Header().Set("Location", loc)
			w.WriteHeader(d.Status)
			return
		case d.Status != http.StatusOK:
			http.Error(w, http.StatusText(d.Status), d.Status)
			return
		}
		s.forwardTries(w, r, v, lb, l, d)
	})
}

// forward proxies r to target t's port of backend b, in b's protocol
// (over TLS if b says so),
// its host, path and headers and the response's headers changed as d
// says; the request is cut if t leaves the plane without draining, or
// when backendTimeout (0: none) runs out. A failed try that again says
// to retry (its status, or 0 for no answer) is not answered: forward
// tells so, and the caller tries again.
func (s *Server) forward(w http.ResponseWriter, r *http.Request, lbID string, t Target, b exampleapi.RuleBackend, d routing.Decision,
	backendTimeout time.Duration, again func(status int) bool) (retry bool) {
	ctx, cancel := context.WithCancel(r.Context())
	if backendTimeout > 0 {
		ctx, cancel = context.WithTimeout(r.Context(), backendTimeout)
	}
	defer cancel()
	done, kept := s.track(lbID, t, cancel)
	if !kept {
		http.Error(w, http.StatusText(http.StatusServiceUnavailable), http.StatusServiceUnavailable)
		return false
	}
	defer done()
	to, transport := &url.URL{Scheme: "http", Host: t.at(b.Port)}, transports[cmp.Or(b.Protocol, exampleapi.BackendHTTP)]
	if b.TLS != nil {
		// Re-encrypted, verified (backendtls.go): a failed handshake is
		// the ErrorHandler's 502.
		to.Scheme, transport = "https", s.tls.transport(b.TLS)
	}
	rp := &httputil.ReverseProxy{
		Rewrite: func(pr *httputil.ProxyRequest) {
			pr.SetURL(to)
			pr.Out.Host = cmp.Or(d.RewriteHost, pr.In.Host)
			if d.RewritePath != "" {
				pr.Out.URL.Path, pr.Out.URL.RawPath = d.RewritePath, ""
			}
			pr.SetXForwarded()
			routing.ModifyHeaders(pr.Out.Header, d.Modifier)
		},
		ModifyResponse: func(res *http.Response) error {
			if again(res.StatusCode) {
				return errRetry // the proxy closes its body and answers nothing
			}
			routing.ModifyHeaders(res.Header, d.ResponseModifier)
			return nil
		},
		Transport: transport,
		ErrorHandler: func(w http.ResponseWriter, _ *http.Request, err error) {
			status := failedStatus(r.Context(), ctx, err)
			if errors.Is(err, errRetry) || again(status) {
				retry = true
				return
			}
			status = cmp.Or(status, http.StatusBadGateway)
			http.Error(w, http.StatusText(status), status)
		},
	}
	rp.ServeHTTP(w, r.WithContext(ctx))
	return retry
}

// errRetry is a try's answer that is sent again instead.
var errRetry = errors.New("retried")

// failedStatus is the answer to a try that failed with err, under the
// request's context and the try's own: 504 past a timeout, 503 for a
// target cut from the plane (or a client gone), and 0 (no answer) when
// the target did not answer.
func failedStatus(request, try context.Context, err error) int {
	switch {
	case errors.Is(request.Err(), context.DeadlineExceeded), errors.Is(try.Err(), context.DeadlineExceeded):
		return http.StatusGatewayTimeout
	case errors.Is(err, context.Canceled):
		return http.StatusServiceUnavailable
	}
	return 0
}

// certificate picks an https listener's certificate by the client's SNI
// name: the first of the listener's that covers it, else its first.
func (s *Server) certificate(k socketKey) func(*tls.ClientHelloInfo) (*tls.Certificate, error) {
	return func(hello *tls.ClientHelloInfo) (*tls.Certificate, error) {
		v := s.cur.Load()
		lb, l, ok := v.listener(k.addr.Addr(), int(k.addr.Port()), k.protocol)
		if !ok {
			return nil, errors.New("no such listener")
		}
		var first *tls.Certificate
		for _, id := range l.CertificateIDs {
			c := lb.Certificates[id]
			if c == nil {
				continue
			}
			if first == nil {
				first = c
			}
			if hello.ServerName != "" && c.Leaf != nil && c.Leaf.VerifyHostname(hello.ServerName) == nil {
				return c, nil
			}
		}
		if first == nil {
			return nil, errors.New("the listener has no certificate")
		}
		return first, nil
	}
}

// flatten is h as the evaluator reads headers: one value a name.
func flatten(h http.Header) map[string]string {
	out := make(map[string]string, len(h))
	for k, vs := range h {
		out[k] = strings.Join(vs, ", ")
	}
	return out
}
