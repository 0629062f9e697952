package dataplane

import (
	"bytes"
	"crypto/tls"
	"errors"
	"io"
	"net"
	"time"
)

// helloTimeout bounds how long a passthrough connection may take to send
// its ClientHello.
const helloTimeout = 10 * time.Second

var errPeeked = errors.New("client hello read")

// peekSNI reads the ClientHello of a TLS connection for its server name,
// and returns a connection that replays what was read: the target sees
// the handshake from its first byte.
func peekSNI(c net.Conn) (string, net.Conn, error) {
	var read bytes.Buffer
	var name string
	_ = c.SetReadDeadline(time.Now().Add(helloTimeout))
	err := tls.Server(peekConn{Conn: c, r: io.TeeReader(c, &read)}, &tls.Config{
		GetConfigForClient: func(h *tls.ClientHelloInfo) (*tls.Config, error) {
			name = h.ServerName
			return nil, errPeeked
		},
	}).Handshake()
	_ = c.SetReadDeadline(time.Time{})
	if !errors.Is(err, errPeeked) {
		return "", nil, err
	}
	return name, &replayConn{Conn: c, r: io.MultiReader(&read, c)}, nil
}

// peekConn reads through r and writes nothing: the TLS server's alert
// never reaches the client.
type peekConn struct {
	net.Conn
	r io.Reader
}

func (p peekConn) Read(b []byte) (int, error)  { return p.r.Read(b) }
func (p peekConn) Write(b []byte) (int, error) { return len(b), nil }

// replayConn reads what was peeked, then the connection.
type replayConn struct {
	net.Conn
	r io.Reader
}

func (p *replayConn) Read(b []byte) (int, error) { return p.r.Read(b) }

// CloseWrite passes a half-close on to the connection.
func (p *replayConn) CloseWrite() error {
	if cw, ok := p.Conn.(interface{ CloseWrite() error }); ok {
		return cw.CloseWrite()
	}
	return p.Close()
}
