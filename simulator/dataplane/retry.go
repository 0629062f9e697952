package dataplane

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"slices"
	"time"

	"github.com/example/cloud-provider-example/exampleapi"
	"github.com/example/cloud-provider-example/internal/sleep"
	"github.com/example/cloud-provider-example/simulator/routing"
)

// forwardTries forwards r by decision d of listener l under the rule's
// timeouts and retry (exampleapi.Timeouts, exampleapi.Retry): the
// request's timeout over every try and backoff, the backend's over each;
// a failed try is sent again, to a target picked anew, while attempts
// are left and the request is replayable. The first try goes to the
// target of the client's session, if the rule keeps one (session.go).
func (s *Server) forwardTries(w http.ResponseWriter, r *http.Request, v *view, lb *LoadBalancer, l exampleapi.Listener, d routing.Decision) {
	var backendTimeout time.Duration
	if t := d.Timeouts; t != nil {
		backendTimeout = ms(t.BackendRequestMS)
		if t.RequestMS > 0 {
			ctx, cancel := context.WithTimeout(r.Context(), ms(t.RequestMS))
			defer cancel()
			r = r.WithContext(ctx)
		}
	}
	tries, body := 1, []byte(nil)
	if rt := d.Retry; rt != nil {
		var ok bool
		if body, ok = replayable(r); ok {
			tries += rt.Attempts
		}
	}
	for try := 1; ; try++ {
		t, b, ok := s.choose(w, r, v, lb, l, d, try == 1)
		if !ok {
			http.Error(w, http.StatusText(http.StatusServiceUnavailable), http.StatusServiceUnavailable)
			return
		}
		if body != nil {
			r.Body = io.NopCloser(bytes.NewReader(body))
		}
		again := func(status int) bool {
			return try < tries && r.Context().Err() == nil && (status == 0 || slices.Contains(d.Retry.StatusCodes, status))
		}
		if !s.forward(w, r, lb.ID, t, b, d, backendTimeout, again) {
			return
		}
		if !sleep.For(r.Context(), ms(d.Retry.BackoffMS)) {
			http.Error(w, http.StatusText(http.StatusGatewayTimeout), http.StatusGatewayTimeout)
			return
		}
	}
}

// replayable reads r's body to send it again, when it is at most
// exampleapi.MaxRetryBodyBytes and r is no upgrade (a WebSocket's
// connection cannot be replayed); ok false leaves r to be sent once, its
// body as it was.
func replayable(r *http.Request) (body []byte, ok bool) {
	if r.Header.Get("Upgrade") != "" {
		return nil, false
	}
	if r.Body == nil || r.Body == http.NoBody {
		return []byte{}, true
	}
	body, err := io.ReadAll(io.LimitReader(r.Body, exampleapi.MaxRetryBodyBytes+1))
	if err == nil && len(body) <= exampleapi.MaxRetryBodyBytes {
		return body, true
	}
	// Too long (or cut short): what was read goes first, once.
	r.Body = struct {
		io.Reader
		io.Closer
	}{io.MultiReader(bytes.NewReader(body), r.Body), r.Body}
	return nil, false
}

func ms(n int) time.Duration { return time.Duration(n) * time.Millisecond }
