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
// It is safe for concurrent use. Its values are bounded by their sources:
// a value added with Add stays for the Scrubber's life (the API token);
// a source's values given with Set replace that source's previous ones
// (a TLS Secret renewed, a credential rotated), which are kept one
// generation more for texts made before the change, and go with Forget.
type Scrubber struct {
	mu      sync.RWMutex
	sources map[string]generation
	// forms caches each value's forms (Forms), for the values held.
	forms map[string][]string
	r     *strings.Replacer
}

// generation is a source's values now and before the last Set.
type generation struct{ cur, prev []string }

// permanent is the source of the values added with Add.
const permanent = "\x00permanent"

// New returns a Scrubber for secrets (values shorter than MinLen are
// ignored), kept for its life.
func New(secrets ...string) *Scrubber {
	s := &Scrubber{sources: map[string]generation{}, forms: map[string][]string{}}
	s.Add(secrets...)
	return s
}

// Add registers secrets for the Scrubber's life and reports whether any
// was new. Adding known values is cheap.
func (s *Scrubber) Add(secrets ...string) bool {
	secrets = usable(secrets)
	s.mu.RLock()
	have := s.sources[permanent].cur
	fresh := slices.ContainsFunc(secrets, func(v string) bool { return !slices.Contains(have, v) })
	s.mu.RUnlock()
	if !fresh {
		return false
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	g := s.sources[permanent]
	for _, v := range secrets {
		if !slices.Contains(g.cur, v) {
			g.cur = append(g.cur, v)
		}
	}
	s.sources[permanent] = g
	s.rebuild()
	return true
}

// Set makes secrets source's values (a Secret's key, a workspace's
// credentials), in place of those it had, which stay one generation
// more; it reports whether anything changed. Setting the same values is
// cheap; setting none is Forget.
func (s *Scrubber) Set(source string, secrets ...string) bool {
	if len(secrets) == 0 {
		s.Forget(source)
		return true
	}
	secrets = usable(secrets)
	slices.Sort(secrets)
	secrets = slices.Compact(secrets)
	s.mu.RLock()
	same := slices.Equal(s.sources[source].cur, secrets)
	s.mu.RUnlock()
	if same {
		return false
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	g := s.sources[source]
	if slices.Equal(g.cur, secrets) {
		return false
	}
	s.sources[source] = generation{cur: secrets, prev: g.cur}
	s.rebuild()
	return true
}

// Forget drops source's values: the object they belong to is gone.
func (s *Scrubber) Forget(source string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.sources[source]; !ok {
		return
	}
	delete(s.sources, source)
	s.rebuild()
}

// Len is how many distinct values the Scrubber holds.
func (s *Scrubber) Len() int {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return len(s.forms)
}

func usable(values []string) []string {
	var out []string
	for _, v := range values {
		if len(v) >= MinLen {
			out = append(out, v)
		}
	}
	return out
}

// rebuild makes the replacer of the values held (s.mu held).
func (s *Scrubber) rebuild() {
	held := map[string]bool{}
	for _, g := range s.sources {
		for _, v := range slices.Concat(g.cur, g.prev) {
			held[v] = true
		}
	}
	for v := range s.forms {
		if !held[v] {
			delete(s.forms, v)
		}
	}
	var forms []string
	for v := range held {
		f, ok := s.forms[v]
		if !ok {
			f = Forms(v)
			s.forms[v] = f
		}
		forms = append(forms, f...)
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
	s.r = nil
	if len(pairs) > 0 {
		s.r = strings.NewReplacer(pairs...)
	}
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
