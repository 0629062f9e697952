package gateway

import (
	"cmp"
	"strings"
)

// intersect is the host names a route's hostnames leave of a listener's
// hostname ("" for none: any host), as the Gateway API defines it: a
// listener without a hostname takes the route's as they are; a route
// without hostnames takes the listener's; otherwise each route hostname
// that matches the listener's, or that the listener's wildcard covers,
// gives the narrower of the two. No result with both set: the route does
// not attach to that listener (NoMatchingListenerHostname).
func intersect(listener string, route []string) []string {
	switch {
	case len(route) == 0:
		return []string{listener}
	case listener == "":
		return route
	}
	var out []string
	for _, h := range route {
		switch {
		case covers(listener, h):
			out = append(out, h)
		case covers(h, listener):
			out = append(out, listener)
		}
	}
	return out
}

// covers tells whether pattern matches every name name does: equal names,
// or a wildcard ("*.example.com") over a name or narrower wildcard with
// one or more labels before its suffix.
func covers(pattern, name string) bool {
	if pattern == name {
		return true
	}
	suffix, ok := strings.CutPrefix(pattern, "*")
	name = strings.TrimPrefix(name, "*")
	return ok && len(name) > len(suffix) && strings.HasSuffix(name, suffix)
}

// hostRank orders host names by the Gateway API's precedence: names
// without a wildcard first, longer first; then wildcards, longer first;
// then "" (any host). Lower ranks first.
func hostRank(h string) (wildcard, length int) {
	switch {
	case h == "":
		return 2, 0
	case strings.HasPrefix(h, "*"):
		return 1, -len(h)
	}
	return 0, -len(h)
}

// compareHosts orders host names by hostRank.
func compareHosts(a, b string) int {
	aw, al := hostRank(a)
	bw, bl := hostRank(b)
	return cmp.Or(cmp.Compare(aw, bw), cmp.Compare(al, bl))
}
