package dataplane

import (
	"net"
	"net/netip"
	"sync"
	"time"

	"github.com/example/cloud-provider-example/exampleapi"
	"github.com/example/cloud-provider-example/internal/relay"
	"github.com/example/cloud-provider-example/simulator/routing"
)

// udpIdle ends a UDP flow that has carried nothing for this long.
const udpIdle = 60 * time.Second

// udpSocket is a udp listener's socket: each client address is a flow to
// one target, as a connection is.
type udpSocket struct {
	pc    net.PacketConn
	mu    sync.Mutex
	flows map[netip.AddrPort]*net.UDPConn
}

func (u *udpSocket) close() { _ = u.pc.Close() }

// serveUDP relays the datagrams of a udp listener.
func (s *Server) serveUDP(k socketKey, pc net.PacketConn) *udpSocket {
	u := &udpSocket{pc: pc, flows: map[netip.AddrPort]*net.UDPConn{}}
	go func() {
		buf := make([]byte, 64*1024)
		for {
			n, from, err := pc.ReadFrom(buf)
			if err != nil {
				u.mu.Lock()
				for _, f := range u.flows {
					_ = f.Close()
				}
				u.mu.Unlock()
				return
			}
			client, _ := netip.ParseAddrPort(from.String())
			if f := s.flow(k, u, client); f != nil {
				_ = f.SetReadDeadline(time.Now().Add(udpIdle)) // a flow idles when neither side sends
				_, _ = f.Write(buf[:n])
			}
		}
	}()
	return u
}

// flow is client's flow, opened to a target by the plane of the moment if
// it has none; nil when the listener sends it nowhere.
func (s *Server) flow(k socketKey, u *udpSocket, client netip.AddrPort) *net.UDPConn {
	u.mu.Lock()
	defer u.mu.Unlock()
	if f := u.flows[client]; f != nil {
		return f
	}
	v := s.cur.Load()
	lb, l, ok := v.listener(k.addr.Addr(), int(k.addr.Port()), k.protocol)
	if !ok || !lb.admits(client.Addr()) {
		return nil
	}
	d, err := routing.Decide(lb.LoadBalancer, l, exampleapi.SimulatedRequest{ListenerPort: l.Port, Protocol: l.Protocol}, v.targets(lb))
	if err != nil || d.Status != 200 {
		return nil
	}
	t, port, ok := v.pick(lb, l, d)
	if !ok {
		return nil
	}
	conn, err := relay.DialFrom(net.UDPAddrFromAddrPort(client), "udp", t.at(port), dialTimeout)
	if err != nil {
		return nil
	}
	f := conn.(*net.UDPConn)
	done, kept := s.track(lb.ID, t, func() { _ = f.Close() })
	if !kept {
		_ = f.Close()
		return nil
	}
	u.flows[client] = f
	go func() {
		defer done()
		defer func() {
			u.mu.Lock()
			if u.flows[client] == f {
				delete(u.flows, client)
			}
			u.mu.Unlock()
			_ = f.Close()
		}()
		buf := make([]byte, 64*1024)
		_ = f.SetReadDeadline(time.Now().Add(udpIdle))
		for {
			n, err := f.Read(buf)
			if err != nil {
				return
			}
			if _, err := u.pc.WriteTo(buf[:n], net.UDPAddrFromAddrPort(client)); err != nil {
				return
			}
			_ = f.SetReadDeadline(time.Now().Add(udpIdle))
		}
	}()
	return f
}
