package echo

import (
	"fmt"
	"net/http"
	"time"
)

// H2CServer is echo-basic's h2c port (H2C_PORT, 3001): h answers HTTP/2
// without TLS, by prior knowledge. Like echo-basic's, it refuses any
// other request (400, "Expected h2c request") unless it asks for the
// h2c upgrade, which it does not perform: so a load balancer that
// forwards HTTP/1.1 to an h2c backend is seen failing.
func H2CServer(h http.Handler) *http.Server {
	var p http.Protocols
	p.SetHTTP1(true)
	p.SetUnencryptedHTTP2(true)
	return &http.Server{Protocols: &p, ReadHeaderTimeout: 10 * time.Second,
		Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.ProtoMajor != 2 && r.Header.Get("Upgrade") != "h2c" {
				w.WriteHeader(http.StatusBadRequest)
				_, _ = fmt.Fprint(w, "Expected h2c request")
				return
			}
			h.ServeHTTP(w, r)
		})}
}
