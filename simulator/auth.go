package simulator

import (
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"net/http"
	"strings"
)

// Token roles. The read-write token may use both listeners; the read-only
// token only the metadata API.
type role int

const (
	roleNone role = iota
	roleReadOnly
	roleReadWrite
)

// tokens holds the configured tokens; comparisons are constant-time.
type tokens struct {
	readWrite, readOnly []byte
}

func (t tokens) roleOf(r *http.Request) (role, string) {
	h := r.Header.Get("Authorization")
	tok, ok := strings.CutPrefix(h, "Bearer ")
	if !ok || tok == "" {
		return roleNone, ""
	}
	switch {
	case subtle.ConstantTimeCompare([]byte(tok), t.readWrite) == 1:
		return roleReadWrite, tokenID(tok)
	case len(t.readOnly) > 0 && subtle.ConstantTimeCompare([]byte(tok), t.readOnly) == 1:
		return roleReadOnly, tokenID(tok)
	}
	return roleNone, ""
}

// tokenID identifies a token (for rate limiting and idempotency scopes)
// without keeping the token itself anywhere.
func tokenID(tok string) string {
	sum := sha256.Sum256([]byte(tok))
	return hex.EncodeToString(sum[:8])
}

// requireToken answers 401 without a valid token and 403 for a token whose
// role is below min.
func (t tokens) requireToken(min role, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got, id := t.roleOf(r)
		switch {
		case got == roleNone:
			w.Header().Set("WWW-Authenticate", `Bearer realm="example-cloud"`)
			writeError(w, nil, errUnauthorized)
			return
		case got < min:
			writeError(w, nil, errForbidden)
			return
		}
		infoFrom(r.Context()).tokenID = id
		next.ServeHTTP(w, r)
	})
}
