package simtest

import (
	"context"
	"fmt"
	"log/slog"
	"sync"
)

// Request is one request the simulator has finished (answered, dropped or
// abandoned by its client), as its request log records it.
type Request struct {
	Listener string // "control" or "metadata"
	Method   string
	Path     string
	Status   int // 0 when nothing was written (the client gave up)
	Dropped  bool
}

// Requests records the requests a simulator finishes, so that a test can
// wait for one to have happened (the provider has polled, an abandoned
// request is over) instead of sleeping. Pass it to WithRequests.
type Requests struct {
	mu      sync.Mutex
	done    []Request
	changed chan struct{} // closed and replaced whenever a request is added
}

// NewRequests returns an empty record.
func NewRequests() *Requests { return &Requests{changed: make(chan struct{})} }

// WithRequests records every request the simulator finishes in r. It
// reads the request log, so it works alongside WithLogger.
func WithRequests(r *Requests) Option { return func(o *options) { o.requests = r } }

// All returns the requests finished so far, in order.
func (r *Requests) All() []Request {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]Request(nil), r.done...)
}

// Wait returns the first finished request (since the simulator started)
// that match accepts, waiting for one until ctx ends.
func (r *Requests) Wait(ctx context.Context, match func(Request) bool) (Request, error) {
	for {
		r.mu.Lock()
		for _, req := range r.done {
			if match(req) {
				r.mu.Unlock()
				return req, nil
			}
		}
		changed := r.changed
		r.mu.Unlock()
		select {
		case <-changed:
		case <-ctx.Done():
			return Request{}, fmt.Errorf("simtest: no matching request among %d finished: %w", len(r.All()), ctx.Err())
		}
	}
}

func (r *Requests) add(req Request) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.done = append(r.done, req)
	close(r.changed)
	r.changed = make(chan struct{})
}

// requestsHandler feeds the simulator's "request" log lines to a Requests
// and passes every record on to next (nil: none).
type requestsHandler struct {
	r    *Requests
	next slog.Handler
}

func (h requestsHandler) Enabled(ctx context.Context, l slog.Level) bool {
	return l >= slog.LevelInfo || (h.next != nil && h.next.Enabled(ctx, l))
}

func (h requestsHandler) Handle(ctx context.Context, rec slog.Record) error {
	if rec.Message == "request" && rec.Level == slog.LevelInfo {
		var req Request
		rec.Attrs(func(a slog.Attr) bool {
			v := a.Value.Resolve()
			switch a.Key {
			case "listener":
				req.Listener = v.String()
			case "method":
				req.Method = v.String()
			case "path":
				req.Path = v.String()
			case "status":
				if v.Kind() == slog.KindInt64 {
					req.Status = int(v.Int64())
				}
			case "dropped":
				req.Dropped = v.Kind() == slog.KindBool && v.Bool()
			}
			return true
		})
		h.r.add(req)
	}
	if h.next != nil && h.next.Enabled(ctx, rec.Level) {
		return h.next.Handle(ctx, rec)
	}
	return nil
}

func (h requestsHandler) WithAttrs(attrs []slog.Attr) slog.Handler {
	if h.next != nil {
		h.next = h.next.WithAttrs(attrs)
	}
	return h
}

func (h requestsHandler) WithGroup(name string) slog.Handler {
	if h.next != nil {
		h.next = h.next.WithGroup(name)
	}
	return h
}
