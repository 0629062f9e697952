// Command example-echo is the backend the tests' and the demo's pods run:
// configured by environment as the Gateway API conformance suite's
// echo-basic is (POD_NAME, NAMESPACE, HTTP_PORT), it answers every HTTP
// request with what arrived, in echo-basic's JSON, and HTTP/2 without TLS
// (h2c, by prior knowledge) on H2C_PORT (3001); given a certificate and
// key (TLS_SERVER_CERT and TLS_SERVER_PRIVKEY: a Secret volume's files, as
// echo-basic reads them) it answers HTTPS too, on HTTPS_PORT (8443);
// with TCP_ECHO_PORT and UDP_ECHO_PORT it also echoes TCP connections and
// UDP datagrams. With TCP_ECHO_SERVER, UDP_ECHO_SERVER or GRPC_ECHO_SERVER
// it is instead echo-basic's TCP, UDP or gRPC (h2c, on HTTP_PORT or 3000)
// server, upstream's own code (what the suite's TCPRoute, UDPRoute and
// GRPCRoute tests speak to). With EXAMPLE_POD_EXEC it is
// none of these but that command, with its own arguments (CoreDNS, for a
// container of its image). It first mounts its pod's volumes where its
// container would see them (internal/podfs).
// Like echo-basic it binds every address: each pod has a network
// namespace of its own (internal/clustertraffic).
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/signal"
	"syscall"
	"time"

	"golang.org/x/net/websocket"
	"sigs.k8s.io/gateway-api/conformance/echo-basic/grpc"
	"sigs.k8s.io/gateway-api/conformance/echo-basic/tcpserver"
	"sigs.k8s.io/gateway-api/conformance/echo-basic/udpechoserver"

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

// opened opens the command bin ("": none) before the pod's volumes are
// mounted, which may hide it (a volume at /root): its path through the
// open file (not closed on exec), to exec once they are.
func opened(bin string) (string, error) {
	if bin == "" {
		return "", nil
	}
	fd, err := syscall.Open(bin, syscall.O_RDONLY, 0)
	if err != nil {
		return "", fmt.Errorf("%s: %w", bin, err)
	}
	return fmt.Sprintf("/proc/self/fd/%d", fd), nil
}

// handler answers as echo-basic: /ws echoes WebSocket frames back (what
// the suite's WebSocket test sends through the load balancer), the rest
// with what arrived.
func handler(pod, ns string) http.Handler {
	mux := http.NewServeMux()
	mux.Handle("/ws", websocket.Handler(func(ws *websocket.Conn) { _, _ = io.Copy(ws, ws) }))
	mux.Handle("/", echo.Handler(pod, ns))
	return mux
}

// upstreamMode is echo-basic's server for its TCP_ECHO_SERVER,
// UDP_ECHO_SERVER or GRPC_ECHO_SERVER mode, nil for its HTTP one.
func upstreamMode() func() {
	switch {
	case os.Getenv("TCP_ECHO_SERVER") != "":
		return tcpserver.Main
	case os.Getenv("UDP_ECHO_SERVER") != "":
		return udpechoserver.Main
	case os.Getenv("GRPC_ECHO_SERVER") != "":
		return grpc.Main
	}
	return nil
}

func env(name, def string) string {
	if v := os.Getenv(name); v != "" {
		return v
	}
	return def
}

func run(ctx context.Context) error {
	exec, err := opened(os.Getenv(podfs.Exec))
	if err != nil {
		return err
	}
	if err := podfs.FromEnv(); err != nil {
		return err
	}
	if exec != "" {
		return syscall.Exec(exec, append([]string{os.Getenv(podfs.Exec)}, os.Args[1:]...), os.Environ()) //nolint:gosec // the command the pod runner chose for the pod's image
	}
	if serve := upstreamMode(); serve != nil {
		// They serve until the process ends, and exit it on an error.
		go serve()
		<-ctx.Done()
		return nil
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
	// As echo-basic: h2c beside HTTP, on H2C_PORT or 3001.
	h2cLn, err := net.Listen("tcp", ":"+env("H2C_PORT", "3001"))
	if err != nil {
		return err
	}
	srv := &http.Server{Handler: handler(pod, ns), ReadHeaderTimeout: 10 * time.Second}
	h2cSrv := echo.H2CServer(echo.Handler(pod, ns))
	errc := make(chan error, 3)
	go func() { errc <- srv.Serve(ln) }()
	go func() { errc <- h2cSrv.Serve(h2cLn) }()
	// As echo-basic: HTTPS once it has a certificate and key, on
	// HTTPS_PORT or 8443.
	if cert, key := os.Getenv("TLS_SERVER_CERT"), os.Getenv("TLS_SERVER_PRIVKEY"); cert != "" && key != "" {
		tlsLn, err := net.Listen("tcp", ":"+env("HTTPS_PORT", "8443"))
		if err != nil {
			return err
		}
		tlsSrv := &http.Server{Handler: handler(pod, ns), ReadHeaderTimeout: 10 * time.Second}
		defer tlsSrv.Close()
		go func() { errc <- tlsSrv.ServeTLS(tlsLn, cert, key) }()
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
	h2cDone := make(chan error, 1)
	go func() { h2cDone <- h2cSrv.Shutdown(shutdown) }()
	if err := srv.Shutdown(shutdown); err != nil && !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	if err := <-h2cDone; err != nil && !errors.Is(err, http.ErrServerClosed) {
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
