package gateway

import (
	"cmp"
	"net/http"
	"slices"
	"strings"

	"k8s.io/utils/ptr"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/example/cloud-provider-example/exampleapi"
	"github.com/example/cloud-provider-example/lbmodel"
)

// What one HTTPRoute rule and match become in the cloud: the rule's
// filters and the match's conditions on a cloud rule.

// supportedFilters are the HTTPRoute filters the Example load balancer
// has.
var supportedFilters = []gatewayv1.HTTPRouteFilterType{gatewayv1.HTTPRouteFilterRequestHeaderModifier,
	gatewayv1.HTTPRouteFilterResponseHeaderModifier, gatewayv1.HTTPRouteFilterRequestRedirect, gatewayv1.HTTPRouteFilterURLRewrite,
	gatewayv1.HTTPRouteFilterCORS}

func filterList(fs []gatewayv1.HTTPRouteFilterType) string {
	names := make([]string, len(fs))
	for i, f := range fs {
		names[i] = string(f)
	}
	return strings.Join(names, ", ")
}

// withFilters is base with the filters of its route rule: the request's
// and the response's header changes, a redirect, a rewrite, CORS.
func withFilters(base lbmodel.Rule, fs []gatewayv1.HTTPRouteFilter) lbmodel.Rule {
	for _, f := range fs {
		switch f.Type {
		case gatewayv1.HTTPRouteFilterRequestHeaderModifier:
			base.RequestHeaders = headerChanges(f.RequestHeaderModifier)
		case gatewayv1.HTTPRouteFilterResponseHeaderModifier:
			base.ResponseHeaders = headerChanges(f.ResponseHeaderModifier)
		case gatewayv1.HTTPRouteFilterRequestRedirect:
			base.Redirect = redirect(f.RequestRedirect)
		case gatewayv1.HTTPRouteFilterURLRewrite:
			base.Rewrite = rewrite(f.URLRewrite)
		case gatewayv1.HTTPRouteFilterCORS:
			base.CORS = corsOf(f.CORS)
		}
	}
	return base
}

// withMatch is base with m's conditions: its path (every path by
// default), method, headers (by canonical name) and query parameters (by
// name as written).
func withMatch(base lbmodel.Rule, m gatewayv1.HTTPRouteMatch) lbmodel.Rule {
	r := base
	pathType, path := gatewayv1.PathMatchPathPrefix, "/"
	if m.Path != nil {
		if m.Path.Type != nil {
			pathType = *m.Path.Type
		}
		if m.Path.Value != nil {
			path = *m.Path.Value
		}
	}
	r.PathType, r.Path = cloudPathType(pathType), path
	if m.Method != nil {
		r.Method = string(*m.Method)
	}
	for _, h := range m.Headers {
		setFirst(&r.Headers, http.CanonicalHeaderKey(string(h.Name)), h.Value)
	}
	for _, q := range m.QueryParams {
		setFirst(&r.QueryParams, string(q.Name), q.Value)
	}
	return r
}

// setFirst sets name in *m unless it is there: of a match's entries of
// one name, the Gateway API counts the first.
func setFirst(m *map[string]string, name, value string) {
	if _, dup := (*m)[name]; dup {
		return
	}
	if *m == nil {
		*m = map[string]string{}
	}
	(*m)[name] = value
}

func cloudPathType(t gatewayv1.PathMatchType) string {
	switch t {
	case gatewayv1.PathMatchExact:
		return exampleapi.PathExact
	case gatewayv1.PathMatchRegularExpression:
		return exampleapi.PathRegex
	}
	return exampleapi.PathPrefix
}

func headerChanges(f *gatewayv1.HTTPHeaderFilter) *lbmodel.HeaderChanges {
	if f == nil {
		return nil
	}
	out := &lbmodel.HeaderChanges{Remove: slices.Clone(f.Remove)}
	for _, h := range f.Set {
		if out.Set == nil {
			out.Set = map[string]string{}
		}
		out.Set[string(h.Name)] = h.Value
	}
	for _, h := range f.Add {
		if out.Add == nil {
			out.Add = map[string]string{}
		}
		out.Add[string(h.Name)] = h.Value
	}
	return out
}

func redirect(f *gatewayv1.HTTPRequestRedirectFilter) *lbmodel.HTTPRedirect {
	if f == nil {
		return nil
	}
	out := &lbmodel.HTTPRedirect{StatusCode: http.StatusFound}
	if f.StatusCode != nil {
		out.StatusCode = *f.StatusCode
	}
	if f.Scheme != nil {
		out.Scheme = strings.ToLower(*f.Scheme)
	}
	if f.Hostname != nil {
		out.Hostname = string(*f.Hostname)
	}
	if f.Port != nil {
		out.Port = int(*f.Port)
	}
	out.Path, out.PathPrefix = pathModifier(f.Path)
	return out
}

func rewrite(f *gatewayv1.HTTPURLRewriteFilter) *lbmodel.URLRewrite {
	if f == nil {
		return nil
	}
	out := &lbmodel.URLRewrite{}
	if f.Hostname != nil {
		out.Hostname = string(*f.Hostname)
	}
	out.Path, out.PathPrefix = pathModifier(f.Path)
	return out
}

// pathModifier is the full path or the prefix m puts in place of the
// request's; an empty one is "/" (Gateway API: "" in place of /foo makes
// /foo/bar /bar).
func pathModifier(m *gatewayv1.HTTPPathModifier) (path, prefix string) {
	switch {
	case m == nil:
		return "", ""
	case m.Type == gatewayv1.FullPathHTTPPathModifier:
		return cmp.Or(ptr.Deref(m.ReplaceFullPath, ""), "/"), ""
	case m.Type == gatewayv1.PrefixMatchHTTPPathModifier:
		return "", cmp.Or(ptr.Deref(m.ReplacePrefixMatch, ""), "/")
	}
	return "", ""
}
