package webhook

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"log"
	"net"
	"net/http"
	"strings"
	"time"

	"k8s.io/klog/v2"
)

// CertSource gives the serving certificate for each TLS handshake, so a
// renewed certificate is served without a restart.
type CertSource interface {
	GetCertificate(*tls.ClientHelloInfo) (*tls.Certificate, error)
}

// Options configure Serve and Start.
type Options struct {
	// Addr is the listen address, e.g. ":10260" ("127.0.0.1:0" in tests).
	Addr string
	// Handlers maps request paths to handlers (see Handler); /healthz is
	// added.
	Handlers map[string]http.Handler
	// Certificates serves the TLS certificate.
	Certificates CertSource
}

// shutdownTimeout bounds the wait for in-flight reviews on shutdown; the
// API server's own webhook timeout is at most 30s, usually 10s.
const shutdownTimeout = 10 * time.Second

// Serve serves o until ctx is done, then shuts down gracefully. A listen
// error (port in use) is returned at once.
func Serve(ctx context.Context, o Options) error {
	_, done, err := Start(ctx, o)
	if err != nil {
		return err
	}
	return <-done
}

// Start listens on o.Addr and serves in the background until ctx is done.
// It returns the address listened on and a channel that receives the
// serving error (nil after a graceful shutdown) once serving has stopped.
func Start(ctx context.Context, o Options) (addr string, done <-chan error, err error) {
	if o.Certificates == nil {
		return "", nil, errors.New("webhook server: no certificate source")
	}
	mux := http.NewServeMux()
	mux.HandleFunc("/healthz", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/plain")
		_, _ = w.Write([]byte("ok"))
	})
	for path, h := range o.Handlers {
		mux.Handle(path, h)
	}
	srv := &http.Server{
		Handler: mux,
		TLSConfig: &tls.Config{
			MinVersion:     tls.VersionTLS12,
			GetCertificate: o.Certificates.GetCertificate,
		},
		ReadHeaderTimeout: 10 * time.Second,
		ReadTimeout:       30 * time.Second,
		WriteTimeout:      30 * time.Second,
		IdleTimeout:       90 * time.Second,
		MaxHeaderBytes:    64 << 10,
		ErrorLog:          log.New(serverLog{}, "", 0),
	}
	ln, err := net.Listen("tcp", o.Addr)
	if err != nil {
		return "", nil, fmt.Errorf("webhook server: listen on %s: %w", o.Addr, err)
	}
	addr = ln.Addr().String()
	klog.InfoS("Serving admission webhooks", "addr", addr, "paths", len(o.Handlers))

	errc := make(chan error, 1)
	stopped := make(chan struct{})
	go func() {
		defer close(stopped)
		err := srv.ServeTLS(ln, "", "")
		if errors.Is(err, http.ErrServerClosed) {
			err = nil
		} else if err != nil {
			err = fmt.Errorf("webhook server on %s: %w", addr, err)
		}
		errc <- err
	}()
	out := make(chan error, 1)
	go func() {
		select {
		case <-ctx.Done():
		case <-stopped:
		}
		sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), shutdownTimeout)
		defer cancel()
		shutErr := srv.Shutdown(sctx)
		err := <-errc
		if err == nil && shutErr != nil {
			err = fmt.Errorf("webhook server on %s: shutdown: %w", addr, shutErr)
		}
		klog.InfoS("Stopped serving admission webhooks", "addr", addr, "err", err)
		out <- err
	}()
	return addr, out, nil
}

// serverLog sends net/http's own messages (TLS handshake errors, mostly
// clients that do not trust the CA yet) to klog at low verbosity.
type serverLog struct{}

func (serverLog) Write(p []byte) (int, error) {
	klog.V(2).InfoS("Webhook server", "msg", strings.TrimSpace(string(p)))
	return len(p), nil
}
