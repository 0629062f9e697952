package routing

import (
	"strings"

	"github.com/example/cloud-provider-example/exampleapi"
)

// replacedPath is path with full in its place, or prefix in place of
// what rulePath (a prefix match) matched of it; path when neither is set.
// A prefix match is by whole elements, so the rest is "" or starts with
// "/": "/" in place of "/strip" makes "/strip/a" "/a", and "/strip" "/".
func replacedPath(path, rulePath, full, prefix string) string {
	switch {
	case full != "":
		return full
	case prefix == "":
		return path
	}
	rest := strings.TrimPrefix(path, strings.TrimSuffix(rulePath, "/"))
	if rest == "" {
		return prefix
	}
	return strings.TrimSuffix(prefix, "/") + rest
}

// redirect makes d rule r's redirect of a request for host and path on
// listener l.
func redirect(d *Decision, l exampleapi.Listener, r exampleapi.Rule, host, path string) {
	rd := r.Redirect
	scheme, port := rd.Scheme, rd.Port
	if scheme == "" {
		scheme = l.Protocol
	}
	if port == 0 {
		port = l.Port
		if rd.Scheme != "" {
			port = defaultPort(rd.Scheme)
		}
	}
	if rd.Hostname != "" {
		host = rd.Hostname
	}
	p := replacedPath(path, r.Path, rd.Path, rd.PathPrefix)
	d.Status, d.Location, d.LocationPath, d.ResponseModifier = rd.StatusCode, location(scheme, host, port, p), p, r.ResponseHeaders
}

// rewrite is the host and path rule r forwards a request for path with
// ("" for those it keeps).
func rewrite(r exampleapi.Rule, path string) (host, newPath string) {
	rw := r.Rewrite
	if rw == nil {
		return "", ""
	}
	if rw.Path != "" || rw.PathPrefix != "" {
		newPath = replacedPath(path, r.Path, rw.Path, rw.PathPrefix)
	}
	return rw.Hostname, newPath
}
