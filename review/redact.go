package review

import (
	"sync/atomic"
	"time"

	"github.com/example/cloud-provider-example/redact"
)

// Events are read by whoever may read the object's namespace, and an
// error's text may quote a credential (a connection string, a private key
// read from a TLS Secret): events are scrubbed as the audit log is.

// credentialsRefresh is how often rotated backend credentials are added
// to the audit log's redactor.
const credentialsRefresh = time.Minute

// redactor holds the secret values to scrub from events (the audit log
// keeps its own list, fed by the same calls).
type redactor struct {
	// credentials reads the state backend's credentials now; at is when
	// they were last read.
	credentials func() []string
	at          atomic.Int64
	secrets     *redact.Scrubber
}

// Redact keeps secret values (the API token, a TLS private key) out of
// events and the audit log.
func (b *Board) Redact(values ...string) {
	b.redactor.secrets.Add(values...)
	if b.audit != nil {
		b.audit.Redact(values...)
	}
}

// RedactCredentials keeps the state backend's credentials out of events
// and the audit log: read reads them now; they are read again, for
// rotated ones, at most once per credentialsRefresh as outcomes are
// reported.
func (b *Board) RedactCredentials(read func() []string) {
	b.redactor.credentials = read
	b.redactCredentials()
}

// redactCredentials registers the backend's current credentials with the
// redactors, at most once per credentialsRefresh.
func (b *Board) redactCredentials() {
	r := &b.redactor
	last := r.at.Load()
	if r.credentials == nil || (last != 0 && time.Since(time.Unix(0, last)) < credentialsRefresh) {
		return
	}
	if r.at.CompareAndSwap(last, time.Now().UnixNano()) {
		b.Redact(r.credentials()...)
	}
}
