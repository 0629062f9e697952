package reviewpage

import (
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
)

func TestGuard(t *testing.T) {
	g := newGuard("secret-token", "127.0.0.1:4242")
	ok := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { _, _ = w.Write([]byte("page")) })
	h := g.wrap(ok)
	cookie := &http.Cookie{Name: "examplectl-review-4242", Value: "secret-token"}
	form := url.Values{"form": {g.formToken()}}.Encode()
	for _, c := range []struct {
		name   string
		req    func() *http.Request
		status int
	}{
		{"no token", func() *http.Request { return get("/") }, http.StatusForbidden},
		{"wrong token", func() *http.Request { return get("/?token=nope") }, http.StatusForbidden},
		{"token traded for a cookie", func() *http.Request { return get("/plan?id=x&token=secret-token") }, http.StatusSeeOther},
		{"cookie", func() *http.Request { r := get("/"); r.AddCookie(cookie); return r }, http.StatusOK},
		{"wrong cookie", func() *http.Request {
			r := get("/")
			r.AddCookie(&http.Cookie{Name: cookie.Name, Value: "nope"})
			return r
		}, http.StatusForbidden},
		{"localhost", func() *http.Request { r := get("/"); r.Host = "localhost:4242"; r.AddCookie(cookie); return r }, http.StatusOK},
		{"another host (DNS rebinding)", func() *http.Request { r := get("/"); r.Host = "evil.example:4242"; r.AddCookie(cookie); return r }, http.StatusForbidden},
		{"post", func() *http.Request { return post(form, "http://127.0.0.1:4242", "same-origin", cookie) }, http.StatusOK},
		{"post without the form token", func() *http.Request { return post("", "http://127.0.0.1:4242", "same-origin", cookie) }, http.StatusForbidden},
		{"post from another site", func() *http.Request { return post(form, "http://evil.example", "cross-site", cookie) }, http.StatusForbidden},
		{"post with another Origin only", func() *http.Request { return post(form, "http://evil.example", "", cookie) }, http.StatusForbidden},
		{"post without the cookie", func() *http.Request { return post(form, "http://127.0.0.1:4242", "same-origin", nil) }, http.StatusForbidden},
	} {
		t.Run(c.name, func(t *testing.T) {
			w := httptest.NewRecorder()
			h.ServeHTTP(w, c.req())
			if w.Code != c.status {
				t.Fatalf("status %d; want %d (%s)", w.Code, c.status, w.Body)
			}
			if csp := w.Header().Get("Content-Security-Policy"); !strings.Contains(csp, "frame-ancestors 'none'") {
				t.Errorf("CSP %q", csp)
			}
			if c.status == http.StatusSeeOther {
				if loc := w.Header().Get("Location"); loc != "/plan?id=x" {
					t.Errorf("redirect to %q; want the URL without the token", loc)
				}
				ck := w.Result().Cookies()
				if len(ck) != 1 || ck[0].Value != "secret-token" || !ck[0].HttpOnly || ck[0].SameSite != http.SameSiteStrictMode {
					t.Errorf("cookies %v", ck)
				}
			}
		})
	}
	if strings.Contains(g.formToken(), "secret-token") || g.formToken() == "secret-token" {
		t.Error("the form token shows the token")
	}
}

func get(target string) *http.Request {
	r := httptest.NewRequest(http.MethodGet, target, nil)
	r.Host = "127.0.0.1:4242"
	return r
}

func post(form, origin, site string, c *http.Cookie) *http.Request {
	r := httptest.NewRequest(http.MethodPost, "/approve", strings.NewReader(form))
	r.Host = "127.0.0.1:4242"
	r.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	r.Header.Set("Origin", origin)
	if site != "" {
		r.Header.Set("Sec-Fetch-Site", site)
	}
	if c != nil {
		r.AddCookie(c)
	}
	return r
}

func TestSamePage(t *testing.T) {
	for in, want := range map[string]string{"/plan": "/plan?id=x", "//evil.example/x": "/evil.example/x?id=x", "/\\evil.example": "/evil.example?id=x"} {
		if got := samePage(in, "id=x"); got != want {
			t.Errorf("samePage(%q) = %q; want %q", in, got, want)
		}
	}
}

func TestLoopback(t *testing.T) {
	for addr, want := range map[string]bool{
		"127.0.0.1:0": true, "[::1]:8080": true, "localhost:1": true,
		"0.0.0.0:8080": false, ":8080": false, "192.0.2.1:80": false, "nonsense": false,
	} {
		if got := loopback(addr); got != want {
			t.Errorf("loopback(%q) = %v; want %v", addr, got, want)
		}
	}
}
