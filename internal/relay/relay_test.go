package relay

import (
	"io"
	"net"
	"testing"
	"time"
)

// A client that stops sending (a half-close) still gets the rest of the
// answer: the target sees the end of the request, answers, and only then
// is the connection done.
func TestPipePassesHalfCloses(t *testing.T) {
	target := serve(t, func(c net.Conn) {
		defer c.Close()
		req, _ := io.ReadAll(c) // until the client's half-close arrives
		_, _ = io.WriteString(c, "got "+string(req))
	})
	front := serve(t, func(c net.Conn) {
		up, err := DialFrom(c.RemoteAddr(), "tcp", target.Addr().String(), time.Second)
		if err != nil {
			_ = c.Close()
			return
		}
		Pipe(c, up)
		_ = c.Close()
		_ = up.Close()
	})
	c, err := net.Dial("tcp", front.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(5 * time.Second))
	if _, err := io.WriteString(c, "ping"); err != nil {
		t.Fatal(err)
	}
	if err := c.(*net.TCPConn).CloseWrite(); err != nil {
		t.Fatal(err)
	}
	answer, err := io.ReadAll(c)
	if err != nil || string(answer) != "got ping" {
		t.Fatalf("answer %q, %v", answer, err)
	}
}

// serve hands each connection to a loopback listener to handle (with
// Accept) until the test ends.
func serve(t *testing.T, handle func(net.Conn)) net.Listener {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = ln.Close() })
	go Accept(ln, handle)
	return ln
}
