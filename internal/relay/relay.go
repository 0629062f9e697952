// Package relay passes a connection on to another, as a proxy that does
// not read what it carries: the simulator's load balancers and the test
// cluster's nodes (internal/clustertraffic) both relay with it.
package relay

import (
	"io"
	"net"
	"sync"
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
