package dataplane

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"maps"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/example/cloud-provider-example/exampleapi"
	"github.com/example/cloud-provider-example/simulator/routing"
)

// Session persistence (exampleapi.SessionPersistence): a rule's answer
// carries a token naming the target it came from, and a request bringing
// it back goes to that target while it is a healthy target of one of the
// rule's backends.
//
// A token is base64url(mac | target | issued): target is a digest of the
// target's backend (pool and port) and id, keyed (12 bytes), so the
// client learns no pod or node address and cannot name a target it was
// not given; issued is when it was made, in Unix milliseconds (a varint,
// for the rule's absolute timeout); mac signs both and the rule's name
// (16 bytes), so a token is the rule's alone. Both are HMAC-SHA256
// under a key of the load balancer's, random and held by the data plane
// only: a token changed, expired, of another rule or of another load
// balancer (or of before the simulator restarted) does not verify, and
// is ignored for a new one.

const (
	sessionTargetLen = 12
	sessionMACLen    = 16
)

// sessionKeys are the load balancers' session keys, made when first
// needed; they outlive swaps, as sessions do.
type sessionKeys struct {
	mu   sync.Mutex
	keys map[string][]byte // by load balancer id
}

// key is load balancer lbID's key.
func (k *sessionKeys) key(lbID string) []byte {
	k.mu.Lock()
	defer k.mu.Unlock()
	if key, ok := k.keys[lbID]; ok {
		return key
	}
	if k.keys == nil {
		k.keys = map[string][]byte{}
	}
	key := make([]byte, 32)
	_, _ = rand.Read(key) // crypto/rand.Read never fails on supported platforms
	k.keys[lbID] = key
	return key
}

// forget drops the keys of load balancers p does not have: a load
// balancer made again under an id has other sessions.
func (k *sessionKeys) forget(p *Plane) {
	have := p.ids()
	k.mu.Lock()
	defer k.mu.Unlock()
	maps.DeleteFunc(k.keys, func(id string, _ []byte) bool { return !have[id] })
}

// sessionTarget is target t of backend b as a token names it.
func sessionTarget(key []byte, b exampleapi.RuleBackend, t Target) []byte {
	m := hmac.New(sha256.New, key)
	m.Write([]byte("target\x00" + b.TargetPoolID + "\x00" + strconv.Itoa(b.Port) + "\x00" + t.ID))
	return m.Sum(nil)[:sessionTargetLen]
}

// sessionMAC signs a token's target and issue time for rule.
func sessionMAC(key []byte, rule string, targetAndIssued []byte) []byte {
	m := hmac.New(sha256.New, key)
	m.Write([]byte("session\x00" + rule + "\x00"))
	m.Write(targetAndIssued)
	return m.Sum(nil)[:sessionMACLen]
}

// newSessionToken is the token of target t of backend b for rule, issued
// at now.
func newSessionToken(key []byte, rule string, b exampleapi.RuleBackend, t Target, now time.Time) string {
	body := binary.AppendVarint(sessionTarget(key, b, t), now.UnixMilli())
	return base64.RawURLEncoding.EncodeToString(append(sessionMAC(key, rule, body), body...))
}

// sessionTokenTarget is the target digest of token, if it is rule's,
// unchanged, and within timeout (0: none) at now.
func sessionTokenTarget(key []byte, rule, token string, timeout time.Duration, now time.Time) ([]byte, bool) {
	raw, err := base64.RawURLEncoding.DecodeString(token)
	if err != nil || len(raw) <= sessionMACLen+sessionTargetLen {
		return nil, false
	}
	mac, body := raw[:sessionMACLen], raw[sessionMACLen:]
	if !hmac.Equal(mac, sessionMAC(key, rule, body)) {
		return nil, false
	}
	ms, n := binary.Varint(body[sessionTargetLen:])
	if n != len(body)-sessionTargetLen || (timeout > 0 && !now.Before(time.UnixMilli(ms).Add(timeout))) {
		return nil, false
	}
	return body[:sessionTargetLen], true
}

// sessionToken is the token request r carries for session s: its
// cookie's value, or its header's.
func sessionToken(r *http.Request, s *routing.Session) string {
	if s.TypeOrDefault() == exampleapi.SessionHeader {
		return r.Header.Get(s.NameOrDefault())
	}
	c, err := r.Cookie(s.NameOrDefault())
	if err != nil {
		return ""
	}
	return c.Value
}

// setSessionToken puts token on the answer's headers h: a cookie of the
// rule's path (kept for the timeout when permanent), or a header the
// client sends back. The cookie is HttpOnly, SameSite=Lax (Strict would
// lose the session of a client arriving by a link from another site),
// and Secure when the request came over TLS: a browser drops a Secure
// cookie that a cleartext answer sets.
func setSessionToken(h http.Header, r *http.Request, s *routing.Session, token string) {
	if s.TypeOrDefault() == exampleapi.SessionHeader {
		h.Set(s.NameOrDefault(), token)
		return
	}
	c := &http.Cookie{Name: s.NameOrDefault(), Value: token, Path: s.Path, HttpOnly: true, SameSite: http.SameSiteLaxMode, //nolint:gosec // Secure over TLS only, as said
		Secure: r.TLS != nil}
	if s.Lifetime == exampleapi.PermanentLifetime {
		c.MaxAge = s.AbsoluteTimeoutSeconds
	}
	h.Set("Set-Cookie", c.String())
}

// pinned is the target of decision d that r's session token names, and
// the backend it is reached by: ok false when the token does not hold
// (none, changed, expired, another rule's) or its target is no longer a
// healthy target of one of the rule's backends with weight.
func (v *view) pinned(lb *LoadBalancer, key []byte, d routing.Decision, r *http.Request, now time.Time) (Target, exampleapi.RuleBackend, bool) {
	s := d.Session
	token := sessionToken(r, s)
	if token == "" {
		return Target{}, exampleapi.RuleBackend{}, false
	}
	want, ok := sessionTokenTarget(key, s.Rule, token, time.Duration(s.AbsoluteTimeoutSeconds)*time.Second, now)
	if !ok {
		return Target{}, exampleapi.RuleBackend{}, false
	}
	for _, b := range d.Backends {
		for _, t := range v.live(lb, lb.Pools[b.TargetPoolID]) {
			if hmac.Equal(want, sessionTarget(key, b, t)) {
				return t, b, true
			}
		}
	}
	return Target{}, exampleapi.RuleBackend{}, false
}

// choose is the target of decision d a try of r goes to: on the first,
// the one its session token names, if the rule keeps sessions and the
// token holds; else one picked by weight (view.pick), whose new token the
// answer (w) carries when the rule keeps sessions.
func (s *Server) choose(w http.ResponseWriter, r *http.Request, v *view, lb *LoadBalancer, l exampleapi.Listener, d routing.Decision,
	first bool) (Target, exampleapi.RuleBackend, bool) {
	if d.Session == nil {
		return v.pick(lb, l, d)
	}
	key, now := s.sessions.key(lb.ID), time.Now()
	if first {
		if t, b, ok := v.pinned(lb, key, d, r, now); ok {
			return t, b, true
		}
	}
	t, b, ok := v.pick(lb, l, d)
	if ok {
		setSessionToken(w.Header(), r, d.Session, newSessionToken(key, d.Session.Rule, b, t, now))
	}
	return t, b, ok
}
