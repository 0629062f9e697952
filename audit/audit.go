// Package audit writes the CCM's audit log: one JSON line per plan,
// approval, apply, destroy, forced unlock or drift finding, appended to a
// file (or stdout) that log shippers can tail. Entries name plans; they
// never hold a plan's text, and configured secret values are replaced by
// [redacted] wherever they appear.
package audit

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"sync"
	"time"

	"github.com/example/cloud-provider-example/termsafe"
)

// Actions.
const (
	ActionPlan        = "plan"
	ActionApprove     = "approve"
	ActionApply       = "apply"
	ActionDestroy     = "destroy"
	ActionForceUnlock = "force-unlock"
	ActionDrift       = "drift"
	// ActionDeregister: a node left the target pools (Details: node,
	// reason, pool, until).
	ActionDeregister = "deregister"
	// ActionShardMove: a shard of the objects moved between replicas
	// (Details: shard, from, to; "" for none).
	ActionShardMove = "shard-move"
	// ActionRelease: a request to release a kept reserved address was
	// taken up or refused (Outcome; Details: request, comment).
	ActionRelease = "release"
)

// Entry is one line of the log.
type Entry struct {
	Time   time.Time `json:"time"`
	Action string    `json:"action"`
	// Object is what the action is about: "Service default/web",
	// "RouteSet cluster".
	Object    string `json:"object"`
	Workspace string `json:"workspace,omitempty"`
	PlanID    string `json:"planID,omitempty"`
	Policy    string `json:"policy,omitempty"`
	Outcome   string `json:"outcome,omitempty"`
	Summary   string `json:"summary,omitempty"`
	Error     string `json:"error,omitempty"`
	Actor     string `json:"actor,omitempty"`
	// Replica is the controller replica that wrote the line (sharding:
	// docs/adr/0017); empty for a controller that runs alone.
	Replica string            `json:"replica,omitempty"`
	Details map[string]string `json:"details,omitempty"`
}

// ErrClosed is returned by Write after Close.
var ErrClosed = errors.New("audit: log closed")

// Log appends entries; it is safe for concurrent use.
type Log struct {
	mu     sync.Mutex
	w      io.Writer
	file   *os.File // nil for stdout
	scrub  *scrubber
	closed bool
	// replica: SetReplica.
	replica string
}

// Option configures Open.
type Option func(*Log)

// Redact replaces values (a token, a password, a connection string) with
// [redacted] in every string of every entry, in every quoted or encoded
// form (see package redact); a connection string's password goes too.
// Values shorter than redact.MinLen are ignored. Passwords of connection
// URLs and key=value strings are redacted even when never registered.
func Redact(values ...string) Option {
	return func(l *Log) { l.scrub.add(values...) }
}

// Open appends to the file at path, created 0600 if missing; "" or "-"
// writes to stdout.
func Open(path string, opts ...Option) (*Log, error) {
	l := &Log{w: os.Stdout, scrub: newScrubber()}
	if path != "" && path != "-" {
		// O_APPEND: each line is one write(2) at the end of the file, so
		// lines from another process appending to it do not overlap.
		f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
		if err != nil {
			return nil, fmt.Errorf("audit: %w", err)
		}
		l.w, l.file = f, f
	}
	for _, o := range opts {
		o(l)
	}
	return l, nil
}

// Redact adds values to redact from now on, for the Log's life (the API
// token).
func (l *Log) Redact(values ...string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.scrub.add(values...)
}

// RedactFrom makes values source's to redact (a TLS Secret's key, a
// rotated credential), in place of those source had, which are redacted
// one generation more; no values forget source (it is gone).
func (l *Log) RedactFrom(source string, values ...string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.scrub.set(source, values...)
}

// Redacted is how many values the Log redacts.
func (l *Log) Redacted() int { return l.scrub.s.Len() }

// SetReplica names the replica in every line written from now on.
func (l *Log) SetReplica(name string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.replica = name
}

// Replica is the replica named in the lines (SetReplica), "" for a nil
// log or none named.
func (l *Log) Replica() string {
	if l == nil {
		return ""
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.replica
}

// Write appends e as one line (Time defaults to now) and, for a file,
// syncs it: an audit line must survive a crash right after the apply it
// records, and there are only a few per plan.
func (l *Log) Write(e Entry) error {
	if e.Action == "" {
		return errors.New("audit: entry without action")
	}
	if e.Time.IsZero() {
		e.Time = time.Now()
	}
	e.Time = e.Time.UTC()
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed {
		return ErrClosed
	}
	if e.Replica == "" {
		e.Replica = l.replica
	}
	line, err := json.Marshal(l.scrub.entry(e))
	if err != nil {
		return fmt.Errorf("audit: %w", err)
	}
	// encoding/json leaves DEL, C1 and bidi controls raw: escaped, the
	// line decodes to the same values and cannot drive a terminal that
	// shows it (tail -f).
	line = termsafe.JSON(line)
	if _, err := l.w.Write(append(line, '\n')); err != nil {
		return fmt.Errorf("audit: %w", err)
	}
	if l.file != nil {
		if err := l.file.Sync(); err != nil {
			return fmt.Errorf("audit: %w", err)
		}
	}
	return nil
}

// Close closes the file (not stdout); later Writes fail.
func (l *Log) Close() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed {
		return nil
	}
	l.closed = true
	if l.file != nil {
		return l.file.Close()
	}
	return nil
}
