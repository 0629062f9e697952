package dataplane

import (
	"net"
	"net/netip"

	"github.com/example/cloud-provider-example/exampleapi"
	"github.com/example/cloud-provider-example/internal/relay"
	"github.com/example/cloud-provider-example/simulator/routing"
)

// udpSocket is a udp listener's socket: each client address is a flow to
// one target, as a connection is (relay.Datagrams).
type udpSocket struct{ pc net.PacketConn }

func (u udpSocket) close() { _ = u.pc.Close() }

// serveUDP relays the datagrams of a udp listener.
func (s *Server) serveUDP(k socketKey, pc net.PacketConn) udpSocket {
	go relay.Datagrams(pc, func(from net.Addr) (net.Conn, func()) { return s.flow(k, from) })
	return udpSocket{pc}
}

// flow opens client's flow to a target by the plane of the moment; nil
// when the listener sends it nowhere.
func (s *Server) flow(k socketKey, from net.Addr) (net.Conn, func()) {
	client, err := netip.ParseAddrPort(from.String())
	if err != nil {
		return nil, nil
	}
	v := s.cur.Load()
	lb, l, ok := v.listener(k.addr.Addr(), int(k.addr.Port()), k.protocol)
	if !ok || !lb.admits(client.Addr()) {
		return nil, nil
	}
	d, err := routing.Decide(lb.LoadBalancer, lb.RuleSets, l, exampleapi.SimulatedRequest{ListenerPort: l.Port, Protocol: l.Protocol}, v.targets(lb))
	if err != nil || d.Status != 200 {
		return nil, nil
	}
	t, b, ok := v.pick(lb, l, d)
	if !ok {
		return nil, nil
	}
	f, err := relay.DialFrom(from, "udp", t.at(b.Port), dialTimeout)
	if err != nil {
		return nil, nil
	}
	done, kept := s.track(lb.ID, t, func() { _ = f.Close() })
	if !kept {
		_ = f.Close()
		return nil, nil
	}
	return f, done
}
