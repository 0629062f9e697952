package dataplane

import (
	"cmp"
	"net/http"
	"slices"
	"strconv"
	"strings"

	"github.com/example/cloud-provider-example/exampleapi"
)

// cors does what rule CORS c asks of request r: a preflight from an
// allowed origin is answered here (204 with the Access-Control-Allow-*
// headers; answered is true, nothing is forwarded); one from another
// origin gets 204 without them. Any other request from an allowed origin
// has its answer marked (w's headers, kept under the backend's), and is
// served as the rule says.
func cors(w http.ResponseWriter, r *http.Request, c *exampleapi.CORS) (answered bool) {
	origin := r.Header.Get("Origin")
	if c == nil || origin == "" {
		return false
	}
	h := w.Header()
	h.Add("Vary", "Origin")
	allowed := slices.ContainsFunc(c.AllowOrigins, func(o string) bool { return originMatches(o, origin) })
	preflight := r.Method == http.MethodOptions && r.Header.Get("Access-Control-Request-Method") != ""
	if allowed {
		h.Set("Access-Control-Allow-Origin", origin)
		if c.AllowCredentials {
			h.Set("Access-Control-Allow-Credentials", "true")
		}
		if len(c.ExposeHeaders) > 0 {
			h.Set("Access-Control-Expose-Headers", strings.Join(c.ExposeHeaders, ", "))
		}
	}
	if !preflight {
		return false
	}
	if allowed {
		// "*" answers what the preflight asks for: with credentials a
		// browser takes no "*".
		h.Set("Access-Control-Allow-Methods", anyOr(c.AllowMethods, r.Header.Get("Access-Control-Request-Method")))
		if v := anyOr(c.AllowHeaders, r.Header.Get("Access-Control-Request-Headers")); v != "" {
			h.Set("Access-Control-Allow-Headers", v)
		}
		h.Set("Access-Control-Max-Age", strconv.Itoa(cmp.Or(c.MaxAgeSeconds, exampleapi.DefaultCORSMaxAgeSeconds)))
	}
	w.WriteHeader(http.StatusNoContent)
	return true
}

// anyOr is vals joined, or asked where vals is "*".
func anyOr(vals []string, asked string) string {
	if slices.Equal(vals, []string{"*"}) {
		return asked
	}
	return strings.Join(vals, ", ")
}

// originMatches tells whether a request's origin is allowed by one of a
// rule's: "*", the same origin (scheme and host compared without case),
// or one whose host begins with "*." and ends as the request's, after
// one or more labels.
func originMatches(allowed, origin string) bool {
	origin = strings.ToLower(origin)
	if allowed == "*" || allowed == origin {
		return true
	}
	scheme, host, ok := strings.Cut(allowed, "://*.")
	if !ok || !strings.HasPrefix(origin, scheme+"://") {
		return false
	}
	rest := strings.TrimPrefix(origin, scheme+"://")
	return strings.HasSuffix(rest, "."+host) && !strings.HasPrefix(rest, ".")
}
