package simulator

import (
	"bytes"
	"io"
	"math"
	"math/rand/v2"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/time/rate"

	"github.com/example/cloud-provider-example/exampleapi"
	"github.com/example/cloud-provider-example/internal/sleep"
)

// faultStats counts what the switches did.
type faultStats struct {
	requests, rateLimited, errors, dropped atomic.Int64
}

func (s *faultStats) get() exampleapi.FaultStats {
	return exampleapi.FaultStats{Requests: s.requests.Load(), RateLimited: s.rateLimited.Load(), Errors: s.errors.Load(), Dropped: s.dropped.Load()}
}

// faultState holds the realism switches. A change swaps in a new
// faultConfig atomically, so a request sees either the old or the new
// switches, never a mix.
type faultState struct {
	cur atomic.Pointer[faultConfig]
	mu  sync.Mutex // serialises set
}

// faultConfig is one generation of switches with the rate limiters that
// enforce them.
type faultConfig struct {
	exampleapi.Faults
	limiters *limiterSet
}

func newFaultState(f exampleapi.Faults) *faultState {
	s := &faultState{}
	s.set(f)
	return s
}

func (s *faultState) get() exampleapi.Faults { return s.cur.Load().Faults }

func (s *faultState) set(f exampleapi.Faults) {
	s.mu.Lock()
	defer s.mu.Unlock()
	old := s.cur.Load()
	next := &faultConfig{Faults: f}
	if old != nil && old.RateLimit == f.RateLimit && old.RateBurst == f.RateBurst {
		next.limiters = old.limiters // unchanged limits keep the buckets' state
	} else {
		next.limiters = newLimiterSet(f.RateLimit, f.RateBurst)
	}
	s.cur.Store(next)
}

// limiterSet is a token bucket per caller token.
type limiterSet struct {
	limit rate.Limit
	burst int
	mu    sync.Mutex
	m     map[string]*rate.Limiter
}

func newLimiterSet(perSecond float64, burst int) *limiterSet {
	if burst <= 0 {
		burst = max(1, int(math.Ceil(perSecond)))
	}
	return &limiterSet{limit: rate.Limit(perSecond), burst: burst, m: map[string]*rate.Limiter{}}
}

// allow takes one token from the caller's bucket. When the bucket is empty
// it reports how long until a request would be allowed.
func (l *limiterSet) allow(tokenID string) (bool, time.Duration) {
	if l.limit <= 0 {
		return true, 0
	}
	l.mu.Lock()
	lim, ok := l.m[tokenID]
	if !ok {
		lim = rate.NewLimiter(l.limit, l.burst)
		l.m[tokenID] = lim
	}
	l.mu.Unlock()
	now := time.Now()
	res := lim.ReserveN(now, 1)
	if !res.OK() {
		return false, time.Second
	}
	if d := res.DelayFrom(now); d > 0 {
		res.CancelAt(now)
		return false, d
	}
	return true, 0
}

// injectFaults applies the switches to an API request, in this order: rate
// limit (per token), added latency, error injection before the handler, and
// dropping the connection after the handler has done its work.
func (s *Server) injectFaults(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ri := infoFrom(r.Context())
		cfg := s.faults.cur.Load()
		s.stats.requests.Add(1)
		if ok, wait := cfg.limiters.allow(ri.tokenID); !ok {
			s.stats.rateLimited.Add(1)
			writeError(w, nil, &APIError{Status: http.StatusTooManyRequests, Code: exampleapi.CodeRateLimited,
				Message: "rate limit exceeded; retry later", RetryAfter: retryAfterSeconds(wait)})
			return
		}
		f := cfg.Faults
		if f.LatencyMs > 0 {
			// Read the body first: net/http only notices a client that hangs
			// up (and cancels the context) once the body has been consumed.
			body, err := readBody(w, r)
			if err != nil {
				writeError(w, s.log, err)
				return
			}
			r.Body = io.NopCloser(bytes.NewReader(body))
			if !sleep.For(r.Context(), time.Duration(f.LatencyMs)*time.Millisecond) {
				return // the client gave up; nobody is listening for an answer
			}
		}
		if f.ErrorRate > 0 && rand.Float64() < f.ErrorRate { //nolint:gosec // fault injection, not a secret
			s.stats.errors.Add(1)
			if rand.IntN(2) == 0 { //nolint:gosec // fault injection, not a secret
				writeError(w, nil, &APIError{Status: http.StatusServiceUnavailable, Code: exampleapi.CodeUnavailable,
					Message: "injected fault: service unavailable", RetryAfter: 1})
			} else {
				writeError(w, nil, &APIError{Status: http.StatusInternalServerError, Code: exampleapi.CodeInternal,
					Message: "injected fault: internal error"})
			}
			return
		}
		if f.DropRate > 0 && rand.Float64() < f.DropRate { //nolint:gosec // fault injection, not a secret
			// Process the request for real, then lose the answer: the
			// client cannot tell whether its write happened.
			next.ServeHTTP(&discardWriter{header: http.Header{}}, r)
			s.stats.dropped.Add(1)
			ri.dropped = true
			dropConnection(w)
			return
		}
		next.ServeHTTP(w, r)
	})
}

func retryAfterSeconds(d time.Duration) int {
	return max(1, int(math.Ceil(d.Seconds())))
}

// dropConnection closes the client connection without writing anything.
func dropConnection(w http.ResponseWriter) {
	conn, _, err := http.NewResponseController(w).Hijack()
	if err != nil {
		// Not hijackable (e.g. HTTP/2): abort the response instead.
		panic(http.ErrAbortHandler)
	}
	_ = conn.Close()
}

// discardWriter swallows the answer of a request whose connection is dropped.
type discardWriter struct{ header http.Header }

func (d *discardWriter) Header() http.Header         { return d.header }
func (d *discardWriter) Write(b []byte) (int, error) { return len(b), nil }
func (d *discardWriter) WriteHeader(int)             {}

// Admin endpoints: read and replace the switches at runtime. A PUT body may
// omit fields, which keep their current value.
func (s *Server) handleGetFaults(w http.ResponseWriter, _ *http.Request) {
	writeJSON(w, http.StatusOK, s.faults.get())
}

func (s *Server) handleGetFaultStats(w http.ResponseWriter, _ *http.Request) {
	writeJSON(w, http.StatusOK, s.stats.get())
}

func (s *Server) handlePutFaults(w http.ResponseWriter, r *http.Request) {
	f := s.faults.get()
	body, err := readBody(w, r)
	if err == nil {
		err = decodeJSON(body, &f)
	}
	if err == nil {
		err = s.SetFaults(f)
	}
	if err != nil {
		writeError(w, s.log, err)
		return
	}
	writeJSON(w, http.StatusOK, s.faults.get())
}
