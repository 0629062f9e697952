package simulator

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"log/slog"
	"net/http"
	"runtime/debug"
	"strings"
	"time"

	"github.com/example/cloud-provider-example/exampleapi"
)

// requestInfo travels in the request context so inner middleware can tell
// the request log what happened (who called, whether the answer was
// dropped) without ever handing it the token itself.
type requestInfo struct {
	id      string
	tokenID string // hash of the caller's token, set by auth
	dropped bool
}

type requestInfoKey struct{}

func infoFrom(ctx context.Context) *requestInfo {
	if ri, ok := ctx.Value(requestInfoKey{}).(*requestInfo); ok {
		return ri
	}
	return &requestInfo{}
}

// statusRecorder remembers the status for the request log.
type statusRecorder struct {
	http.ResponseWriter
	status int
}

func (r *statusRecorder) WriteHeader(code int) {
	if r.status == 0 {
		r.status = code
	}
	r.ResponseWriter.WriteHeader(code)
}

func (r *statusRecorder) Write(b []byte) (int, error) {
	if r.status == 0 {
		r.status = http.StatusOK
	}
	return r.ResponseWriter.Write(b)
}

// Unwrap lets http.ResponseController reach the connection (for drops).
func (r *statusRecorder) Unwrap() http.ResponseWriter { return r.ResponseWriter }

// logRequests assigns a request id (answered as X-Request-Id), turns
// handler panics into 500s, and logs one structured line per request. It
// logs no header, so neither the Authorization header nor a token can end
// up in the log.
func logRequests(logger *slog.Logger, listener string, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		ri := &requestInfo{id: newRequestID()}
		w.Header().Set("X-Request-Id", ri.id)
		rec := &statusRecorder{ResponseWriter: w}
		defer func() {
			p := recover()
			if p != nil && p != http.ErrAbortHandler { //nolint:errorlint // sentinel panic value
				logger.Error("handler panic", "request_id", ri.id, "panic", p, "stack", string(debug.Stack()))
				if rec.status == 0 {
					writeError(rec, nil, errors.New("panic"))
				}
			}
			if p == http.ErrAbortHandler { //nolint:errorlint // sentinel panic value
				ri.dropped = true
				defer panic(p) // let net/http abort the connection
			}
			attrs := []any{
				"listener", listener, "method", r.Method, "path", r.URL.Path,
				"status", rec.status, "duration_ms", float64(time.Since(start).Microseconds()) / 1000,
				"request_id", ri.id,
			}
			if ri.dropped {
				attrs = append(attrs, "dropped", true)
			}
			logger.Info("request", attrs...)
		}()
		next.ServeHTTP(rec, r.WithContext(context.WithValue(r.Context(), requestInfoKey{}, ri)))
	})
}

func newRequestID() string {
	var b [8]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// withJSONNotFound answers requests no route matches with the contract's
// JSON 404 instead of ServeMux's plain text. A known path used with the
// wrong method is a 404 too (the contract has no 405), whose message names
// the methods the path supports.
func withJSONNotFound(mux *http.ServeMux) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if _, pattern := mux.Handler(r); pattern != "" {
			mux.ServeHTTP(w, r)
			return
		}
		var allowed []string
		for _, m := range []string{http.MethodGet, http.MethodPost, http.MethodPut, http.MethodDelete} {
			probe := r.Clone(r.Context())
			probe.Method = m
			if _, pattern := mux.Handler(probe); pattern != "" {
				allowed = append(allowed, m)
			}
		}
		msg := "no such endpoint: " + r.Method + " " + r.URL.Path
		if len(allowed) > 0 {
			msg += " (supported methods: " + strings.Join(allowed, ", ") + ")"
		}
		writeError(w, nil, &APIError{Status: http.StatusNotFound, Code: exampleapi.CodeNotFound, Message: msg})
	})
}
