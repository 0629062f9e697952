package routing

import (
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"strings"

	"k8s.io/utils/lru"

	"github.com/example/cloud-provider-example/exampleapi"
)

// matches tells whether every condition of r holds for req to host, its
// query parsed.
func matches(r exampleapi.Rule, host string, req exampleapi.SimulatedRequest, query url.Values) bool {
	if len(r.Hostnames) > 0 && !slices.ContainsFunc(r.Hostnames, func(h string) bool { return HostMatches(h, host) }) {
		return false
	}
	switch r.PathType {
	case exampleapi.PathExact:
		if req.Path != r.Path {
			return false
		}
	case exampleapi.PathPrefix:
		p := strings.TrimSuffix(r.Path, "/")
		if p != "" && req.Path != p && !strings.HasPrefix(req.Path, p+"/") {
			return false
		}
	case exampleapi.PathRegex:
		if re := pathRegex(r.Path); re == nil || !re.MatchString(req.Path) {
			return false
		}
	}
	if r.Method != "" && r.Method != req.Method {
		return false
	}
	for _, h := range r.Headers {
		if v, ok := header(req.Headers, h.Name); !ok || v != h.Value {
			return false
		}
	}
	for _, p := range r.QueryParams {
		if vs := query[p.Name]; len(vs) == 0 || vs[0] != p.Value {
			return false
		}
	}
	return true
}

// HostMatches: a name matches itself; "*.example.com" matches a name of
// one or more labels before ".example.com". A tls listener's rules match
// the SNI name by it.
func HostMatches(pattern, host string) bool {
	if suffix, ok := strings.CutPrefix(pattern, "*"); ok {
		return len(host) > len(suffix) && strings.HasSuffix(host, suffix)
	}
	return host == pattern
}

// header is the value of the header called name (any case) in hs.
func header(hs map[string]string, name string) (string, bool) {
	for k, v := range hs {
		if strings.EqualFold(k, name) {
			return v, true
		}
	}
	return "", false
}

// forwarded are the request's headers after m, by canonical name.
func forwarded(in map[string]string, m *exampleapi.HeaderModifier) map[string]string {
	h := make(http.Header, len(in))
	for k, v := range in {
		h.Set(k, v)
	}
	ModifyHeaders(h, m)
	out := make(map[string]string, len(h))
	for k, vs := range h {
		out[k] = strings.Join(vs, ", ")
	}
	return out
}

// ModifyHeaders changes h as m says: set replaces, add appends a value
// (a header line of its own, after those the header has: the backend
// reads "a" and "b", as from Envoy's append; Gateway API's "a,b"),
// remove drops.
func ModifyHeaders(h http.Header, m *exampleapi.HeaderModifier) {
	if m == nil {
		return
	}
	for _, s := range m.Set {
		h.Set(s.Name, s.Value)
	}
	for _, a := range m.Add {
		h.Add(a.Name, a.Value)
	}
	for _, name := range m.Remove {
		h.Del(name)
	}
}

// pathRegexes are the compiled regex paths of the rules requests met
// lately: a request is not the place to compile its rule's.
var pathRegexes = lru.New(1024)

// pathRegex is regex path expr compiled (nil if it does not compile: the
// cloud checked it, so never).
func pathRegex(expr string) *regexp.Regexp {
	if re, ok := pathRegexes.Get(expr); ok {
		return re.(*regexp.Regexp)
	}
	re, err := exampleapi.CompilePathRegex(expr)
	if err != nil {
		return nil
	}
	pathRegexes.Add(expr, re)
	return re
}
