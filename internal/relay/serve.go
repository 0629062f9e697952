package relay

import (
	"errors"
	"net"
	"sync"
	"time"
)

// acceptBackoff is how long Accept waits after a failed accept.
const acceptBackoff = 5 * time.Millisecond

// Accept hands each connection of ln to handle, in a goroutine of its
// own, until ln closes. A failed accept (out of files, a client that gave
// up) is waited out, never spun on.
func Accept(ln net.Listener, handle func(net.Conn)) {
	for {
		c, err := ln.Accept()
		if errors.Is(err, net.ErrClosed) {
			return
		}
		if err != nil {
			time.Sleep(acceptBackoff)
			continue
		}
		go handle(c)
	}
}

// FlowIdle ends a datagram flow that has carried nothing either way for
// this long.
const FlowIdle = 60 * time.Second

// Datagrams relays pc's datagrams until it closes, a flow per client as
// a connection is: open dials the client's upstream when its first
// datagram comes (nil: dropped) and gives what to call when the flow
// ends; the upstream's replies go back to the client.
func Datagrams(pc net.PacketConn, open func(client net.Addr) (upstream net.Conn, ended func())) {
	var mu sync.Mutex
	flows := map[string]net.Conn{}
	buf := make([]byte, 64*1024)
	for {
		n, from, err := pc.ReadFrom(buf)
		if err != nil {
			mu.Lock()
			for _, f := range flows {
				_ = f.Close()
			}
			mu.Unlock()
			return
		}
		mu.Lock()
		f := flows[from.String()]
		if f == nil {
			var ended func()
			if f, ended = open(from); f != nil {
				flows[from.String()] = f
				go func() {
					replies(pc, f, from)
					mu.Lock()
					if flows[from.String()] == f {
						delete(flows, from.String())
					}
					mu.Unlock()
					_ = f.Close()
					if ended != nil {
						ended()
					}
				}()
			}
		}
		mu.Unlock()
		if f != nil {
			_ = f.SetReadDeadline(time.Now().Add(FlowIdle)) // the client's datagrams keep the flow too
			_, _ = f.Write(buf[:n])
		}
	}
}

// replies passes f's datagrams back to client until the flow idles or
// either side closes.
func replies(pc net.PacketConn, f net.Conn, client net.Addr) {
	buf := make([]byte, 64*1024)
	_ = f.SetReadDeadline(time.Now().Add(FlowIdle))
	for {
		n, err := f.Read(buf)
		if err != nil {
			return
		}
		if _, err := pc.WriteTo(buf[:n], client); err != nil {
			return
		}
		_ = f.SetReadDeadline(time.Now().Add(FlowIdle))
	}
}
