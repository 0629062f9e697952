// Command example-echo is the backend the tests' and the demo's pods run:
// configured by environment as the Gateway API conformance suite's
// echo-basic is (POD_NAME, NAMESPACE, HTTP_PORT), it answers every HTTP
// request with what arrived, in echo-basic's JSON; with HTTPS_PORT it
// answers HTTPS too, with the certificate and key at TLS_SERVER_CERT and
// TLS_SERVER_PRIVKEY (a Secret volume's files, as echo-basic reads them);
// with TCP_ECHO_PORT and UDP_ECHO_PORT it also echoes TCP connections and
// UDP datagrams. It first mounts its pod's volumes where its container
// would see them (internal/podfs).
// Like echo-basic it binds every address: each pod has a network
// namespace of its own (internal/clustertraffic).
package main

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/example/cloud-provider-example/internal/echo"
	"github.com/example/cloud-provider-example/internal/podfs"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	if err := run(ctx); err != nil {
		fmt.Fprintln(os.Stderr, "example-echo:", err)
		os.Exit(1)
	}
}

func env(name, def string) string {
	if v := os.Getenv(name); v != "" {
		return v
	}
	return def
}

func run(ctx context.Context) error {
	if err := podfs.FromEnv(); err != nil {
		return err
	}
	pod, ns := env("POD_NAME", "example-echo"), env("NAMESPACE", "default")
	ln, err := net.Listen("tcp", ":"+env("HTTP_PORT", "3000"))
	if err != nil {
		return err
	}
	closeEchoes, err := echoes()
	if err != nil {
		return err
	}
	defer closeEchoes()
	srv := &http.Server{Handler: echo.Handler(pod, ns), ReadHeaderTimeout: 10 * time.Second}
	errc := make(chan error, 2)
	go func() { errc <- srv.Serve(ln) }()
	if p := os.Getenv("HTTPS_PORT"); p != "" {
		tlsLn, err := net.Listen("tcp", ":"+p)
		if err != nil {
			return err
		}
		tlsSrv := &http.Server{Handler: echo.Handler(pod, ns), ReadHeaderTimeout: 10 * time.Second}
		defer tlsSrv.Close()
		go func() { errc <- tlsSrv.ServeTLS(tlsLn, os.Getenv("TLS_SERVER_CERT"), os.Getenv("TLS_SERVER_PRIVKEY")) }()
	}
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	// Terminating: finish the requests in flight, as a pod's grace period
	// lets it.
	shutdown, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := srv.Shutdown(shutdown); err != nil && !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}

// echoes serves TCP_ECHO_PORT and UDP_ECHO_PORT, where set, until the
// returned close.
func echoes() (func(), error) {
	var closers []func() error
	closeAll := func() {
		for _, c := range closers {
			_ = c()
		}
	}
	if p := os.Getenv("TCP_ECHO_PORT"); p != "" {
		tcp, err := net.Listen("tcp", ":"+p)
		if err != nil {
			return nil, err
		}
		closers = append(closers, tcp.Close)
		go echo.ServeTCP(tcp, "")
	}
	if p := os.Getenv("UDP_ECHO_PORT"); p != "" {
		udp, err := net.ListenPacket("udp", ":"+p)
		if err != nil {
			closeAll()
			return nil, err
		}
		closers = append(closers, udp.Close)
		go echo.ServeUDP(udp, "")
	}
	return closeAll, nil
}
