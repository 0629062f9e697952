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

// Redact keeps secret values (the API token) out of events and the audit
// log, for the controller's life.
func (b *Board) Redact(values ...string) {
	b.redactor.secrets.Add(values...)
	if b.audit != nil {
		b.audit.Redact(values...)
	}
}

// RedactFrom keeps source's secret values (a TLS Secret's private key, the
// backend's credentials) out of events and the audit log, in place of
// those source had (kept one generation more: a renewed key, a rotated
// credential); no values forget source. Each source holds at most two
// generations, so what is redacted is bounded by the sources that exist.
func (b *Board) RedactFrom(source string, values ...string) {
	b.redactor.secrets.Set(source, values...)
	if b.audit != nil {
		b.audit.RedactFrom(source, values...)
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
		b.RedactFrom("state backend credentials", r.credentials()...)
	}
}
