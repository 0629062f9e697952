package echo

import (
	"errors"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"
)

// What echo-basic simulates for the suite's timeout and retry tests: a
// slow answer (?delay=1s) and a backend failing its first tries of a
// request (/retry/...?uuid=&succeedAfter=&responseCode=).

// delay waits the duration r's query parameter key names (none: no
// wait), false when it does not parse (echo-basic answers 500 then) or
// the request ends first.
func delay(r *http.Request, key string) bool {
	v := r.URL.Query().Get(key)
	if v == "" {
		return true
	}
	d, err := time.ParseDuration(v)
	if err != nil {
		return false
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-r.Context().Done():
		return false
	}
}

// retries counts the tries of each request (by its uuid) a /retry/ path
// got, as echo-basic's retry simulation.
type retries struct {
	mu    sync.Mutex
	tries map[string]int
}

// fail answers a try of a /retry/ request that must still fail, true if
// it did: 400 without uuid or succeedAfter; for the first succeedAfter
// tries of a uuid, after delayRetry, the responseCode, or without one a
// connection reset. A later try is echoed as any request.
func (s *retries) fail(w http.ResponseWriter, r *http.Request) bool {
	q := r.URL.Query()
	id := q.Get("uuid")
	after, err := strconv.Atoi(q.Get("succeedAfter"))
	if id == "" || err != nil {
		http.Error(w, "uuid and succeedAfter are required", http.StatusBadRequest)
		return true
	}
	s.mu.Lock()
	defer s.mu.Unlock() // one try at a time, as echo-basic
	if s.tries[id] >= after {
		return false
	}
	if s.tries == nil {
		s.tries = map[string]int{}
	}
	s.tries[id]++
	if !delay(r, "delayRetry") {
		http.Error(w, "bad delayRetry", http.StatusInternalServerError)
		return true
	}
	if code, err := strconv.Atoi(q.Get("responseCode")); err == nil {
		w.WriteHeader(code)
		return true
	}
	if err := reset(w); err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
	}
	return true
}

// reset cuts the request's connection with a TCP RST.
func reset(w http.ResponseWriter) error {
	h, ok := w.(http.Hijacker)
	if !ok {
		return errors.New("the connection cannot be taken over")
	}
	c, _, err := h.Hijack()
	if err != nil {
		return err
	}
	if tc, ok := c.(*net.TCPConn); ok {
		_ = tc.SetLinger(0)
	}
	return c.Close()
}

func isRetryPath(p string) bool { return strings.HasPrefix(p, "/retry/") }
