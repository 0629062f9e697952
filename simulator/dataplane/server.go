package dataplane

import (
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/netip"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"

	"github.com/example/cloud-provider-example/exampleapi"
	"github.com/example/cloud-provider-example/internal/sockets"
	"github.com/example/cloud-provider-example/simulator/routing"
)

// Server serves the planes it is handed: one socket per listener address.
type Server struct {
	log      *slog.Logger
	cur      atomic.Pointer[view]
	robins   robins
	tls      tlsTransports
	sessions sessionKeys
	open     tracker
	health   prober

	mu      sync.Mutex
	sockets sockets.Set[socketKey]
	closed  bool
}

// socketKey is one listening socket: a listener of a load balancer on one
// of its addresses. The protocol is in the key, so a listener whose
// protocol changes gets a new socket.
type socketKey struct {
	addr     netip.AddrPort
	protocol string
}

func (k socketKey) String() string { return k.protocol + "://" + k.addr.String() }

// network is the socket's: udp, or tcp for the TCP protocols.
func (k socketKey) network() string {
	if k.protocol == exampleapi.ProtocolUDP {
		return "udp"
	}
	return "tcp"
}

// New is a data plane serving nothing yet; log receives bind failures
// (nil: discarded).
func New(log *slog.Logger) *Server {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	s := &Server{log: log}
	s.robins = robins{wrr: map[string]*routing.WRR{}, rr: map[string]int{}}
	s.cur.Store(newView(&Plane{}, s.health.healthy, &s.robins))
	return s
}

// Swap serves p from now on: requests read it whole, sockets of removed
// listeners stop taking connections, new ones are bound, and open
// connections to targets p no longer keeps are closed. It returns the
// sockets it could not bind (they are tried again by the next Swap).
func (s *Server) Swap(p *Plane) error {
	v := newView(p, s.health.healthy, &s.robins)
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return errors.New("dataplane: closed")
	}
	s.health.reconcile(p)
	s.robins.forget(p)
	s.tls.forget(p)
	s.sessions.forget(p)
	s.cur.Store(v)
	want := map[socketKey]bool{}
	for _, lb := range p.LoadBalancers {
		for _, a := range lb.Addrs {
			for _, l := range lb.Listeners {
				if l.Port < 1 || l.Port > 65535 {
					continue // the cloud takes none: a plane made by hand
				}
				want[socketKey{netip.AddrPortFrom(a, uint16(l.Port)), l.Protocol}] = true
			}
		}
	}
	errs := s.sockets.Reconcile(want, s.bind, func(k socketKey, err error) {
		s.log.Error("data plane: cannot bind a listener", "listener", k.String(), "err", err)
	})
	s.open.sweep(func(lbID, target string) bool {
		lb := v.byID[lbID]
		return lb != nil && lb.keeps(target)
	})
	if len(errs) > 0 {
		return fmt.Errorf("dataplane: listeners not bound: %w", errors.Join(errs...))
	}
	return nil
}

// track registers a connection (or request) to t of load balancer lbID,
// closed by cut if t leaves without draining, and reports whether the
// plane of now still keeps t: a swap between the pick and the
// registration would otherwise miss it (the swap stores its plane before
// it sweeps, so one of the two sees the other).
func (s *Server) track(lbID string, t Target, cut func()) (done func(), kept bool) {
	done = s.open.add(lbID, t.ID, cut)
	if lb := s.cur.Load().byID[lbID]; lb == nil || !lb.keeps(t.ID) {
		done()
		return nil, false
	}
	return done, true
}

// bind opens the socket of k and serves it; what it returns stops taking
// new connections (or datagrams) and lets open ones end.
func (s *Server) bind(k socketKey) (func(), error) {
	addr := k.addr.String()
	if k.network() == "udp" {
		pc, err := net.ListenPacket("udp", addr)
		if err != nil {
			return nil, err
		}
		return s.serveUDP(k, pc).close, nil
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, err
	}
	ln = admitting{Listener: ln, s: s, k: k}
	switch k.protocol {
	case exampleapi.ProtocolHTTP, exampleapi.ProtocolHTTPS:
		return s.serveHTTP(k, ln).close, nil
	case exampleapi.ProtocolTLS:
		return s.serveStream(k, ln, true).close, nil
	default:
		return s.serveStream(k, ln, false).close, nil
	}
}

// Close stops every socket and closes every open connection.
func (s *Server) Close() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.closed = true
	s.health.stopAll()
	s.sockets.CloseAll()
	s.open.sweep(func(string, string) bool { return false })
}

// Listening is the sockets bound now, as "protocol://addr:port", sorted.
func (s *Server) Listening() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []string
	for _, k := range s.sockets.Keys() {
		out = append(out, k.String())
	}
	slices.Sort(out)
	return out
}

func itoa(n int) string { return strconv.Itoa(n) }

// admitting drops the connections of clients outside the load balancer's
// allowed source CIDRs, as a cloud's firewall does: they are closed
// before a byte is read.
type admitting struct {
	net.Listener
	s *Server
	k socketKey
}

func (a admitting) Accept() (net.Conn, error) {
	for {
		c, err := a.Listener.Accept()
		if err != nil {
			return nil, err
		}
		if a.s.cur.Load().admits(a.k.addr.Addr(), c.RemoteAddr()) {
			return c, nil
		}
		_ = c.Close()
	}
}
