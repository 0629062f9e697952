// Package relay passes connections and datagrams on, as a proxy that
// does not read what it carries (Pipe, Datagrams), from the accept loop
// they start at (Accept): the simulator's load balancers and the test
// cluster's nodes (internal/clustertraffic) both relay with it.
package relay

import (
	"io"
	"net"
	"net/netip"
	"sync"
	"time"
)

// Pipe copies both ways until both directions end; each end's close is
// passed on as a half-close, so a client that stops sending still gets
// the rest of the answer.
func Pipe(a, b net.Conn) {
	var wg sync.WaitGroup
	one := func(dst, src net.Conn) {
		defer wg.Done()
		_, _ = io.Copy(dst, src)
		if cw, ok := dst.(interface{ CloseWrite() error }); ok {
			_ = cw.CloseWrite()
		} else {
			_ = dst.Close()
		}
	}
	wg.Add(2)
	go one(a, b)
	go one(b, a)
	wg.Wait()
}

// DialFrom dials to from client's own address (port any), as a proxy
// that keeps the client's address does (a load balancer to its instance
// targets, kube-proxy for a Service with externalTrafficPolicy: Local);
// where that address cannot be bound here, from the host's own.
func DialFrom(client net.Addr, network, to string, timeout time.Duration) (net.Conn, error) {
	d := net.Dialer{Timeout: timeout}
	if ap, err := netip.ParseAddrPort(client.String()); err == nil {
		local := netip.AddrPortFrom(ap.Addr().Unmap(), 0)
		if network == "udp" {
			d.LocalAddr = net.UDPAddrFromAddrPort(local)
		} else {
			d.LocalAddr = net.TCPAddrFromAddrPort(local)
		}
		if c, err := d.Dial(network, to); err == nil {
			return c, nil
		}
		d.LocalAddr = nil
	}
	return d.Dial(network, to)
}
