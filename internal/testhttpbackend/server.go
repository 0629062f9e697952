// Package testhttpbackend is an in-memory server for Terraform's "http"
// state backend, for tests.
//
// Every URL path is a separate state: point address, lock_address and
// unlock_address at Server.Address(key) (or set TF_HTTP_ADDRESS,
// TF_HTTP_LOCK_ADDRESS, TF_HTTP_UNLOCK_ADDRESS). The protocol is the one of
// terraform's internal/backend/remote-state/http client:
//
//	GET     200 + state, or 404 when there is none
//	POST    store the body; when the state is locked the ?ID= query must
//	        name the lock, else 423 Locked + the lock's JSON
//	DELETE  200, forget the state
//	LOCK    body = lock info JSON; 200, or 423 Locked + the current
//	        lock's JSON (terraform prints it as "Lock Info")
//	UNLOCK  200; an empty body or ID (terraform force-unlock) always
//	        unlocks, another holder's ID gets 409 Conflict + the lock's JSON
//
// With WithBasicAuth, requests without those credentials get 401.
package testhttpbackend

import (
	"bytes"
	"crypto/md5"
	"crypto/subtle"
	"encoding/base64"
	"encoding/json"
	"io"
	"maps"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"
)

// LockInfo is terraform's lock information (statemgr.LockInfo), in the
// same JSON shape.
type LockInfo struct {
	ID        string    `json:"ID"`
	Operation string    `json:"Operation"` // e.g. "OperationTypeApply"
	Info      string    `json:"Info"`
	Who       string    `json:"Who"` // user@host
	Version   string    `json:"Version"`
	Created   time.Time `json:"Created"`
	Path      string    `json:"Path"`
}

// Option configures a Server.
type Option func(*Server)

// WithBasicAuth makes the server answer 401 to requests without these
// HTTP basic auth credentials.
func WithBasicAuth(user, password string) Option {
	return func(s *Server) { s.user, s.password = user, password }
}

// Server is a running http backend. Its accessors return copies.
type Server struct {
	// URL is the base URL, without a trailing slash.
	URL string

	user, password string

	mu       sync.Mutex
	states   map[string][]byte
	locks    map[string]LockInfo
	requests []string
	// failWrites answers every state write 503, as a backend that is down.
	failWrites bool
	// loseAnswers is how many more state writes to store, then answer 503.
	loseAnswers int
}

// FailWrites makes the server refuse (503) every state write until called
// with false: the backend going down in the middle of an apply.
func (s *Server) FailWrites(fail bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.failWrites = fail
}

// LoseWriteAnswers makes the server store the next n state writes and
// still answer them 503: writes that landed, whose answers a dropped
// connection lost.
func (s *Server) LoseWriteAnswers(n int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.loseAnswers = n
}

// Start starts a server and closes it in t.Cleanup.
func Start(t testing.TB, opts ...Option) *Server {
	t.Helper()
	s := &Server{states: map[string][]byte{}, locks: map[string]LockInfo{}}
	for _, o := range opts {
		o(s)
	}
	hs := httptest.NewServer(http.HandlerFunc(s.serveHTTP))
	t.Cleanup(hs.Close)
	s.URL = hs.URL
	t.Logf("testhttpbackend: listening on %s (basic auth: %t)", s.URL, s.user != "")
	return s
}

// Address returns the state URL for key: URL + "/" + key.
func (s *Server) Address(key string) string { return s.URL + "/" + strings.TrimPrefix(key, "/") }

// States returns the stored states by key (URL path without the leading "/").
func (s *Server) States() map[string][]byte {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make(map[string][]byte, len(s.states))
	for k, v := range s.states {
		out[k] = bytes.Clone(v)
	}
	return out
}

// Locks returns the held locks by key.
func (s *Server) Locks() map[string]LockInfo {
	s.mu.Lock()
	defer s.mu.Unlock()
	return maps.Clone(s.locks)
}

// Requests returns "METHOD /path" for every request so far, in order
// (including rejected ones; never the query or credentials).
func (s *Server) Requests() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.requests...)
}

// InjectLock makes key locked by info, as if a terraform run holding the
// lock had crashed.
func (s *Server) InjectLock(key string, info LockInfo) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.locks[strings.TrimPrefix(key, "/")] = info
}

func (s *Server) serveHTTP(w http.ResponseWriter, r *http.Request) {
	key := strings.TrimPrefix(r.URL.Path, "/")
	body, err := io.ReadAll(r.Body)
	s.mu.Lock()
	defer s.mu.Unlock()
	s.requests = append(s.requests, r.Method+" "+r.URL.Path)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	if s.user != "" {
		u, p, ok := r.BasicAuth()
		if !ok || subtle.ConstantTimeCompare([]byte(u), []byte(s.user)) != 1 ||
			subtle.ConstantTimeCompare([]byte(p), []byte(s.password)) != 1 {
			w.Header().Set("WWW-Authenticate", `Basic realm="terraform state"`)
			http.Error(w, "unauthorized", http.StatusUnauthorized)
			return
		}
	}
	lock, locked := s.locks[key]

	switch r.Method {
	case http.MethodGet:
		st, ok := s.states[key]
		if !ok {
			http.Error(w, "no state", http.StatusNotFound)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write(st)

	case http.MethodPost:
		if s.failWrites {
			http.Error(w, "backend unavailable", http.StatusServiceUnavailable)
			return
		}
		if locked && r.URL.Query().Get("ID") != lock.ID {
			writeLock(w, http.StatusLocked, lock)
			return
		}
		if sum := r.Header.Get("Content-MD5"); sum != "" {
			h := md5.Sum(body)
			if sum != base64.StdEncoding.EncodeToString(h[:]) {
				http.Error(w, "Content-MD5 mismatch", http.StatusBadRequest)
				return
			}
		}
		if !json.Valid(body) {
			http.Error(w, "state is not JSON", http.StatusBadRequest)
			return
		}
		s.states[key] = body
		if s.loseAnswers > 0 {
			s.loseAnswers--
			http.Error(w, "connection lost", http.StatusServiceUnavailable)
			return
		}

	case http.MethodDelete:
		delete(s.states, key)

	case "LOCK":
		var info LockInfo
		if err := json.Unmarshal(body, &info); err != nil || info.ID == "" {
			http.Error(w, "lock body must be lock info JSON with an ID", http.StatusBadRequest)
			return
		}
		if locked {
			writeLock(w, http.StatusLocked, lock)
			return
		}
		s.locks[key] = info

	case "UNLOCK":
		var info LockInfo
		if len(bytes.TrimSpace(body)) > 0 {
			if err := json.Unmarshal(body, &info); err != nil {
				http.Error(w, "unlock body must be empty or lock info JSON", http.StatusBadRequest)
				return
			}
		}
		if locked && info.ID != "" && info.ID != lock.ID {
			writeLock(w, http.StatusConflict, lock)
			return
		}
		delete(s.locks, key)

	default:
		http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
	}
}

func writeLock(w http.ResponseWriter, code int, info LockInfo) {
	b, _ := json.Marshal(info)
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	_, _ = w.Write(b)
}
