package reviewpage

import (
	"context"
	"embed"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"sync"
	"time"

	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"

	"github.com/example/cloud-provider-example/records"
)

//go:embed templates/*.html static/*
var assets embed.FS

// Actions are the changes a reviewer makes from the page, as themselves
// (examplectl implements them as approve, unlock and release do). An
// error is shown on the page as the refusal it is.
type Actions interface {
	// Approve approves plan planID of workspace's object; the text says
	// what was created and what happens next.
	Approve(ctx context.Context, workspace, planID, comment string) (string, error)
	// Unlock asks the controller to force open lock lockID of workspace.
	Unlock(ctx context.Context, workspace, lockID, comment string) (string, error)
	// Release asks the controller to release workspace's reserved
	// address, which the page showed at ip.
	Release(ctx context.Context, workspace, ip, comment string) (string, error)
}

// Config is what a Server reads and acts through: the user's clients.
type Config struct {
	Client  kubernetes.Interface
	Dynamic dynamic.Interface
	Store   *records.Store
	// Namespace is the controller's, where its records are.
	Namespace string
	Actions   Actions
	// User is the user as the API server authenticates them.
	User string
}

// Server serves the review page on a loopback address.
type Server struct {
	cfg   Config
	cache *cache
	guard *guard
	ln    net.Listener
	token string
	pages *pages

	notesMu sync.Mutex
	notes   map[string]note
}

// note is the outcome of an action, shown on the page it returns to.
type note struct {
	Refused bool
	Text    string
}

// Listen starts listening on addr, which must be a loopback address
// ("127.0.0.1:0" picks a port), and reads every record once.
func Listen(ctx context.Context, cfg Config, addr string) (*Server, error) {
	if !loopback(addr) {
		return nil, fmt.Errorf("listen on %s: the review page listens on loopback only (127.0.0.1, ::1)", addr)
	}
	p, err := parsePages()
	if err != nil {
		return nil, err
	}
	s := &Server{cfg: cfg, cache: newCache(cfg.Store, cfg.Client, cfg.Namespace), token: newToken(), pages: p, notes: map[string]note{}}
	if err := s.cache.start(ctx); err != nil {
		return nil, err
	}
	ln, err := (&net.ListenConfig{}).Listen(ctx, "tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("listen on %s: %w", addr, err)
	}
	s.ln = ln
	s.guard = newGuard(s.token, ln.Addr().String())
	return s, nil
}

// URL is the page's address with its token: the only way in.
func (s *Server) URL() string {
	return "http://" + s.ln.Addr().String() + "/?token=" + url.QueryEscape(s.token)
}

// Serve serves until ctx ends.
func (s *Server) Serve(ctx context.Context) error {
	srv := &http.Server{Handler: s.Handler(), ReadHeaderTimeout: 10 * time.Second, BaseContext: func(net.Listener) context.Context { return ctx }}
	go func() {
		<-ctx.Done()
		sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 2*time.Second)
		defer cancel()
		_ = srv.Shutdown(sctx)
	}()
	if err := srv.Serve(s.ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}

// Handler is the page's routes behind the guard.
func (s *Server) Handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /{$}", s.serveQueue)
	mux.HandleFunc("GET /objects", s.serveObjects)
	mux.HandleFunc("GET /object", s.serveObject)
	mux.HandleFunc("GET /plan", s.servePlan)
	mux.HandleFunc("GET /confirm", s.serveConfirm)
	mux.HandleFunc("POST /approve", s.approve)
	mux.HandleFunc("POST /unlock", s.unlock)
	mux.HandleFunc("POST /release", s.release)
	mux.HandleFunc("GET /live", s.serveLive)
	mux.Handle("GET /static/", http.FileServerFS(assets))
	return s.guard.wrap(mux)
}

// keep stores n for the next page and returns its id.
func (s *Server) keep(n note) string {
	id := newToken()[:16]
	s.notesMu.Lock()
	defer s.notesMu.Unlock()
	if len(s.notes) > 100 {
		clear(s.notes) // notes are read at once; a pile is abandoned tabs
	}
	s.notes[id] = n
	return id
}

// noteOf is the note id names (kept: a live refresh shows it again).
func (s *Server) noteOf(id string) *note {
	s.notesMu.Lock()
	defer s.notesMu.Unlock()
	n, ok := s.notes[id]
	if !ok {
		return nil
	}
	return &n
}
