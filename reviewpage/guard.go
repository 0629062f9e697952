package reviewpage

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"net"
	"net/http"
	"net/url"
	"strings"
)

// The page holds no credentials of its own: every read and action is the
// user's, through their kubeconfig. What it guards is that only the person
// who started it drives it: a random token (in the URL it prints, then a
// cookie), the Host it listens on (no DNS rebinding), and no request from
// another origin (CSRF), with a form token on every change besides.

// newToken is 32 random bytes, hex.
func newToken() string {
	b := make([]byte, 32)
	_, _ = rand.Read(b) // crypto/rand.Read never fails (Go 1.24+)
	return hex.EncodeToString(b)
}

// guard checks every request against the server's token and address.
type guard struct {
	token string
	// host is "127.0.0.1:port", the only Host accepted (and "localhost:port").
	host   string
	cookie string
	origin *http.CrossOriginProtection
}

func newGuard(token, host string) *guard {
	_, port, _ := net.SplitHostPort(host)
	return &guard{token: token, host: host, cookie: "examplectl-review-" + port, origin: http.NewCrossOriginProtection()}
}

// formToken is what forms send back: derived from the token, so it is
// not the token (which a page's HTML then never shows).
func (g *guard) formToken() string {
	m := hmac.New(sha256.New, []byte(g.token))
	m.Write([]byte("form"))
	return hex.EncodeToString(m.Sum(nil))
}

func equal(a, b string) bool { return subtle.ConstantTimeCompare([]byte(a), []byte(b)) == 1 }

// refusal is why a request is refused, "" for none.
func (g *guard) refusal(r *http.Request) string {
	_, port, _ := net.SplitHostPort(g.host)
	if r.Host != g.host && r.Host != "localhost:"+port {
		return "wrong host " + r.Host + ": open the address examplectl printed"
	}
	// Sec-Fetch-Site, else Origin against Host (net/http's CSRF check).
	if err := g.origin.Check(r); err != nil {
		return "request from another origin refused"
	}
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		if !equal(r.PostFormValue("form"), g.formToken()) {
			return "the form's token is missing or wrong: reload the page"
		}
	}
	if c, err := r.Cookie(g.cookie); err == nil && equal(c.Value, g.token) {
		return ""
	}
	if equal(r.URL.Query().Get("token"), g.token) {
		return ""
	}
	return "no valid token: open the address examplectl printed (it holds the token)"
}

// wrap refuses what refusal refuses (403), trades a token in the URL for a
// cookie (then redirects to the URL without it, so it stays out of history
// and Referer), and sets the headers every answer carries.
func (g *guard) wrap(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		h.Set("Content-Security-Policy", "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; connect-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'")
		h.Set("Referrer-Policy", "no-referrer")
		h.Set("X-Content-Type-Options", "nosniff")
		h.Set("X-Frame-Options", "DENY")
		h.Set("Cache-Control", "no-store")
		if why := g.refusal(r); why != "" {
			http.Error(w, "examplectl review: "+why, http.StatusForbidden)
			return
		}
		if q := r.URL.Query(); q.Has("token") && r.Method == http.MethodGet {
			// Not Secure: the page is plain HTTP on loopback, and a browser
			// would not send a Secure cookie back there.
			http.SetCookie(w, &http.Cookie{Name: g.cookie, Value: g.token, Path: "/", HttpOnly: true, SameSite: http.SameSiteStrictMode}) //nolint:gosec // see above
			q.Del("token")
			http.Redirect(w, r, samePage(r.URL.Path, q.Encode()), http.StatusSeeOther) //nolint:gosec // samePage keeps it on this server
			return
		}
		next.ServeHTTP(w, r)
	})
}

// loopback says whether addr (host:port) is a loopback address.
func loopback(addr string) bool {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return false
	}
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// samePage is a path on this server: never "//host" (or "/\\host"),
// which a browser would follow to another site.
func samePage(path, query string) string {
	u := url.URL{Path: "/" + strings.TrimLeft(path, `/\`), RawQuery: query}
	return u.RequestURI()
}
