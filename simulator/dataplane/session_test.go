package dataplane_test

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"net/netip"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/example/cloud-provider-example/exampleapi"
	"github.com/example/cloud-provider-example/internal/echo"
	"github.com/example/cloud-provider-example/simulator/dataplane"
)

// A rule with session persistence keeps a client on the target its first
// answer came from: the cookie (of the rule's path, HttpOnly,
// SameSite=Lax, no target address in it) pins every request bringing it back; a changed cookie,
// one past its absolute timeout, or one whose target has left the pool
// is no error: the request goes by weight and gets a fresh cookie. A
// header session goes alike, through a response header sent back as a
// request header; a permanent cookie has the timeout as Max-Age.
func TestSessionPersistence(t *testing.T) {
	pool := []dataplane.Target{target("i-1", "10.0.0.11"), target("i-2", "10.0.0.21"), target("i-3", "10.0.0.31")}
	for _, tg := range pool {
		httpBackend(t, tg.Addr.String()+":30080", tg.ID) // each answers as its target
	}
	backends := []exampleapi.RuleBackend{{TargetPoolID: "tp-s", Port: 30080, Weight: 1}}
	lb := newLB("lb-session", []exampleapi.Listener{{Protocol: "http", Port: 80, TargetPort: 30080}}, []exampleapi.Rule{
		{Name: "cart", ListenerPort: 80, Priority: 1, PathType: exampleapi.PathPrefix, Path: "/cart", Backends: backends,
			SessionPersistence: &exampleapi.SessionPersistence{Name: "cart-session"}},
		{Name: "brief", ListenerPort: 80, Priority: 2, PathType: exampleapi.PathPrefix, Path: "/brief", Backends: backends,
			SessionPersistence: &exampleapi.SessionPersistence{AbsoluteTimeoutSeconds: 1, Lifetime: exampleapi.PermanentLifetime}},
		{Name: "api", ListenerPort: 80, Priority: 3, Backends: backends,
			SessionPersistence: &exampleapi.SessionPersistence{Type: exampleapi.SessionHeader, Name: "X-Session"}},
	})
	plane := func(ts []dataplane.Target) *dataplane.Plane {
		return &dataplane.Plane{LoadBalancers: []dataplane.LoadBalancer{{LoadBalancer: lb, Addrs: []netip.Addr{lbAddr},
			Pools: map[string][]dataplane.Target{"tp-s": ts}}}}
	}
	s := start(t, plane(pool))
	// ask is the pod that answers GET path with header h (a Cookie or
	// X-Session) set to v, and the answer's headers.
	ask := func(path, h, v string) (string, http.Header) {
		t.Helper()
		req, err := http.NewRequest(http.MethodGet, "http://"+lbAddr.String()+path, nil)
		if err != nil {
			t.Fatal(err)
		}
		if v != "" {
			req.Header.Set(h, v)
		}
		res, err := noRedirects.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		var a echo.Answer
		if err := json.NewDecoder(res.Body).Decode(&a); err != nil || res.StatusCode != http.StatusOK {
			t.Fatalf("GET %s: %d, %v", path, res.StatusCode, err)
		}
		return a.Pod, res.Header
	}
	// cookie is the answer's session cookie, checked as the rule says.
	cookie := func(h http.Header, name, path string, maxAge int) string {
		t.Helper()
		res := http.Response{Header: h}
		cs := res.Cookies()
		if len(cs) != 1 || cs[0].Name != name || cs[0].Path != path || !cs[0].HttpOnly || cs[0].SameSite != http.SameSiteLaxMode || cs[0].Secure || cs[0].MaxAge != maxAge || cs[0].Value == "" {
			t.Fatalf("Set-Cookie %q: want one %s of path %s, HttpOnly, SameSite=Lax, not Secure (cleartext), Max-Age %d", h.Values("Set-Cookie"), name, path, maxAge)
		}
		if raw, err := base64.RawURLEncoding.DecodeString(cs[0].Value); err != nil || bytes.Contains(raw, []byte("10.0.0.")) {
			t.Fatalf("cookie %q (%q, %v): want base64url naming no target", cs[0].Value, raw, err)
		}
		return name + "=" + cs[0].Value
	}

	// Without a cookie, the pool's targets in turn, each answer a cookie.
	seen := map[string]bool{}
	var first, firstPod string
	for range 3 {
		pod, h := ask("/cart/items", "", "")
		c := cookie(h, "cart-session", "/cart", 0)
		if first == "" {
			first, firstPod = c, pod
		}
		seen[pod] = true
	}
	if len(seen) != 3 {
		t.Fatalf("3 requests without a cookie reached %v, want the 3 targets", seen)
	}
	// With it: always the first's target, and no new cookie.
	for range 10 {
		if pod, h := ask("/cart/items", "Cookie", "other=1; "+first); pod != firstPod || h.Get("Set-Cookie") != "" {
			t.Fatalf("with the cookie: %s (Set-Cookie %q), want %s and no new cookie", pod, h.Get("Set-Cookie"), firstPod)
		}
	}
	// Changed (one letter of its signature), or another rule's: no error,
	// a fresh cookie.
	raw, _ := base64.RawURLEncoding.DecodeString(strings.TrimPrefix(first, "cart-session="))
	raw[len(raw)-1] ^= 1
	for _, c := range []string{"cart-session=" + base64.RawURLEncoding.EncodeToString(raw), "cart-session=" + strings.Repeat("x", 48), "cart-session=not base64!"} {
		_, h := ask("/cart/items", "Cookie", c)
		if got := cookie(h, "cart-session", "/cart", 0); got == c {
			t.Fatalf("a forged cookie %q was kept", c)
		}
	}
	// Another rule's cookie names its target to that rule only.
	_, h := ask("/brief", "", "")
	brief := cookie(h, exampleapi.DefaultSessionName, "/brief", 1)
	if _, h := ask("/cart/items", "Cookie", "cart-session="+strings.TrimPrefix(brief, exampleapi.DefaultSessionName+"=")); h.Get("Set-Cookie") == "" {
		t.Fatal("the brief rule's token was taken by the cart rule")
	}
	// Past its absolute timeout (1 s), the cookie is ignored.
	briefPod, _ := ask("/brief", "Cookie", brief)
	if pod, h := ask("/brief", "Cookie", brief); pod != briefPod || h.Get("Set-Cookie") != "" {
		t.Fatalf("a fresh brief cookie: %s, Set-Cookie %q", pod, h.Get("Set-Cookie"))
	}
	time.Sleep(1100 * time.Millisecond)
	if _, h := ask("/brief", "Cookie", brief); h.Get("Set-Cookie") == "" {
		t.Fatal("an expired cookie was kept")
	}

	// Its target gone from the pool: another, and a new cookie.
	rest := slices.DeleteFunc(slices.Clone(pool), func(tg dataplane.Target) bool { return tg.ID == firstPod })
	if err := s.Swap(plane(rest)); err != nil {
		t.Fatal(err)
	}
	pod, h := ask("/cart/items", "Cookie", first)
	if pod == firstPod || cookie(h, "cart-session", "/cart", 0) == first {
		t.Fatalf("target of the cookie gone: %s, Set-Cookie %q", pod, h.Get("Set-Cookie"))
	}

	// A header session: the answer's X-Session, sent back, pins.
	pod, h = ask("/api", "", "")
	token := h.Get("X-Session")
	if token == "" || h.Get("Set-Cookie") != "" {
		t.Fatalf("header session: X-Session %q, Set-Cookie %q", token, h.Get("Set-Cookie"))
	}
	for range 5 {
		if p, h := ask("/api", "X-Session", token); p != pod || h.Get("X-Session") != "" {
			t.Fatalf("with X-Session: %s (new %q), want %s", p, h.Get("X-Session"), pod)
		}
	}
}
