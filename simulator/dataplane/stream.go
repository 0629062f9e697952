package dataplane

import (
	"fmt"
	"io"
	"net"
	"net/netip"
	"sync"
	"time"

	"github.com/example/cloud-provider-example/exampleapi"
	"github.com/example/cloud-provider-example/internal/relay"
	"github.com/example/cloud-provider-example/simulator/routing"
)

// dialTimeout bounds a connection to a target.
const dialTimeout = 5 * time.Second

// streamSocket is a tcp or tls listener's socket: its connections are
// relayed, and live on after it closes until they end.
type streamSocket struct{ ln net.Listener }

func (st streamSocket) close() { _ = st.ln.Close() }

// serveStream relays each connection of a tcp listener, or of a tls one
// (passthrough: routed by the ClientHello's SNI name, never decrypted).
func (s *Server) serveStream(k socketKey, ln net.Listener, passthrough bool) streamSocket {
	go relay.Accept(ln, func(c net.Conn) { s.relay(k, c, passthrough) })
	return streamSocket{ln}
}

// relay takes one connection to its target by the plane of the moment
// (read after a passthrough's ClientHello, which may take a while).
func (s *Server) relay(k socketKey, c net.Conn, passthrough bool) {
	var sni string
	if passthrough {
		name, replay, err := peekSNI(c)
		if err != nil {
			_ = c.Close()
			return
		}
		sni, c = name, replay
	}
	v := s.cur.Load()
	lb, l, ok := v.listener(k.addr.Addr(), int(k.addr.Port()), k.protocol)
	if !ok {
		_ = c.Close()
		return
	}
	d, err := routing.Decide(lb.LoadBalancer, lb.RuleSets, l, exampleapi.SimulatedRequest{ListenerPort: l.Port, Protocol: l.Protocol, Host: sni}, v.targets(lb))
	if err != nil || d.Status != 200 {
		_ = c.Close()
		return
	}
	t, b, ok := v.pick(lb, l, d)
	if !ok {
		_ = c.Close()
		return
	}
	var mu sync.Mutex
	var up net.Conn
	cut := func() {
		mu.Lock()
		defer mu.Unlock()
		_ = c.Close()
		if up != nil {
			_ = up.Close()
		}
	}
	done, kept := s.track(lb.ID, t, cut)
	if !kept {
		_ = c.Close()
		return
	}
	defer done()
	// Instance targets see the client's address, as behind a network
	// load balancer.
	conn, err := relay.DialFrom(c.RemoteAddr(), "tcp", t.at(b.Port), dialTimeout)
	mu.Lock()
	up = conn
	mu.Unlock()
	if err != nil {
		cut()
		return
	}
	if l.ProxyProtocol {
		if _, err := io.WriteString(up, proxyHeader(c.RemoteAddr(), c.LocalAddr())); err != nil {
			cut()
			return
		}
	}
	relay.Pipe(c, up)
	cut()
}

// proxyHeader is the PROXY protocol's version 1 line for a connection
// from client to the load balancer's address.
func proxyHeader(client, lb net.Addr) string {
	c, _ := netip.ParseAddrPort(client.String())
	d, _ := netip.ParseAddrPort(lb.String())
	family := "TCP4"
	if c.Addr().Unmap().Is6() {
		family = "TCP6"
	}
	return fmt.Sprintf("PROXY %s %s %s %d %d\r\n", family, c.Addr().Unmap(), d.Addr().Unmap(), c.Port(), d.Port())
}
