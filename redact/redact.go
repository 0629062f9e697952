// Package redact scrubs secret values from text that leaves the process:
// errors shown in Service events, the audit log, logs and plan records.
//
// A secret rarely appears verbatim where it leaks: terraform quotes a
// connection string into an error (Go %q: `"` becomes `\"`), JSON escapes
// it, HCL escapes `${`, an HTTP client URL-encodes it. A Scrubber knows a
// set of secret values and replaces every such form of each (see Forms);
// it also removes the password of any connection URL
// (scheme://user:PASSWORD@host) and of any key=value connection string
// (password=PASSWORD), even one it was never told about.
package redact

import (
	"cmp"
	"regexp"
	"slices"
	"strings"
	"sync"
)

// Marker replaces every secret.
const Marker = "[redacted]"

// MinLen is the shortest value a Scrubber redacts: replacing shorter ones
// would mangle ordinary words and still protect nothing worth the name.
const MinLen = 4

// Scrubber replaces known secret values and connection-string passwords.
// It is safe for concurrent use.
type Scrubber struct {
	mu     sync.RWMutex
	values map[string]bool // as added
	r      *strings.Replacer
}

// New returns a Scrubber for secrets (values shorter than MinLen are
// ignored).
func New(secrets ...string) *Scrubber {
	s := &Scrubber{values: map[string]bool{}}
	s.Add(secrets...)
	return s
}

// Add registers more secrets (a rotated token) and reports whether any was
// new. Adding known values is cheap.
func (s *Scrubber) Add(secrets ...string) bool {
	s.mu.RLock()
	fresh := false
	for _, v := range secrets {
		if len(v) >= MinLen && !s.values[v] {
			fresh = true
			break
		}
	}
	s.mu.RUnlock()
	if !fresh {
		return false
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, v := range secrets {
		if len(v) >= MinLen {
			s.values[v] = true
		}
	}
	var forms []string
	for v := range s.values {
		forms = append(forms, Forms(v)...)
	}
	slices.Sort(forms)
	forms = slices.Compact(forms)
	// Longest first: at one position the replacer takes the first pattern
	// that matches, so a secret containing another goes whole.
	slices.SortStableFunc(forms, func(a, b string) int { return cmp.Compare(len(b), len(a)) })
	pairs := make([]string, 0, 2*len(forms))
	for _, f := range forms {
		pairs = append(pairs, f, Marker)
	}
	s.r = strings.NewReplacer(pairs...)
	return true
}

// String returns text without any form of the known secrets and without
// connection-string passwords.
func (s *Scrubber) String(text string) string {
	if s != nil {
		s.mu.RLock()
		r := s.r
		s.mu.RUnlock()
		if r != nil {
			text = r.Replace(text)
		}
	}
	return Text(text)
}

var (
	// scheme://user:PASSWORD@: the password runs to the last '@' of the
	// token, since an unescaped password may itself hold '@', ':' or '/'.
	urlPassword = regexp.MustCompile(`(?i)\b([a-z][a-z0-9+.\-]*://[^\s:@/]*:)\S*@`)
	// password=VALUE in a libpq key=value string ('quoted' with \-escapes,
	// or up to the next white space), sslpassword included.
	kvPassword = regexp.MustCompile(`(?i)\b((?:ssl)?password\s*=\s*)(?:'(?:[^'\\]|\\.)*'|[^\s']+)`)
	// "password": "VALUE" in JSON.
	jsonPassword = regexp.MustCompile(`(?i)("(?:ssl)?password"\s*:\s*")(?:[^"\\]|\\.)*"`)
)

// Text removes passwords of connection URLs and key=value connection
// strings from text, without knowing them.
func Text(text string) string {
	if !strings.Contains(text, "://") && !containsFold(text, "password") {
		return text
	}
	text = urlPassword.ReplaceAllString(text, "${1}"+Marker+"@")
	text = kvPassword.ReplaceAllString(text, "${1}"+Marker)
	return jsonPassword.ReplaceAllString(text, "${1}"+Marker+`"`)
}

func containsFold(s, sub string) bool {
	return strings.Contains(strings.ToLower(s), sub)
}
