package gateway

import (
	"regexp"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"
)

// KindGRPCRoute is the route kind of gRPC: served as the HTTPRoute it
// reads as (GRPCRoute), on HTTP and HTTPS listeners.
const KindGRPCRoute gatewayv1.Kind = "GRPCRoute"

// A gRPC call is an HTTP/2 POST to /<service>/<method>, its metadata the
// request's headers: a GRPCRoute's matches are path and header matches,
// and the HTTPRoute machinery (attachment, host names and their claims,
// precedence, admission, the rule budget, statuses) serves it whole. The
// Gateway API's GRPCRoute precedence (host name, then the longest service,
// then the longest method, then the most headers) orders the rules of one
// request as the HTTPRoute one does: /<service>/<method> exact before the
// prefix /<service>/ of its service, each before a rule of any method.

// grpcFilters are the GRPCRoute filters the Example load balancer has.
var grpcFilters = []gatewayv1.HTTPRouteFilterType{gatewayv1.HTTPRouteFilterRequestHeaderModifier, gatewayv1.HTTPRouteFilterResponseHeaderModifier}

// GRPCRoute reads r as the HTTPRoute it is served as: each method match a
// path (service and method: "/<service>/<method>" exact; a service alone:
// the prefix "/<service>/"), its headers and filters as an HTTPRoute's.
// A RegularExpression method, and a method without its service, are
// RegularExpression paths. What the cloud lacks is kept in the
// HTTPRoute's own terms for the translation to refuse, rules and matches
// in place so a refusal names the GRPCRoute's field. Its TypeMeta says GRPCRoute
// (KindOf): the kind its statuses, rule names and references go by.
func GRPCRoute(r *gatewayv1.GRPCRoute) *gatewayv1.HTTPRoute {
	out := &gatewayv1.HTTPRoute{TypeMeta: metav1.TypeMeta{APIVersion: gatewayv1.GroupVersion.String(), Kind: string(KindGRPCRoute)},
		ObjectMeta: r.ObjectMeta, Status: gatewayv1.HTTPRouteStatus{RouteStatus: r.Status.RouteStatus},
		Spec: gatewayv1.HTTPRouteSpec{CommonRouteSpec: r.Spec.CommonRouteSpec, Hostnames: r.Spec.Hostnames}}
	for _, rule := range r.Spec.Rules {
		hr := gatewayv1.HTTPRouteRule{Name: rule.Name, Filters: httpFilters(rule.Filters), SessionPersistence: rule.SessionPersistence}
		for _, m := range rule.Matches {
			hr.Matches = append(hr.Matches, grpcMatch(m))
		}
		for _, b := range rule.BackendRefs {
			hr.BackendRefs = append(hr.BackendRefs, gatewayv1.HTTPBackendRef{BackendRef: b.BackendRef, Filters: httpFilters(b.Filters)})
		}
		out.Spec.Rules = append(out.Spec.Rules, hr)
	}
	return out
}

// KindOf is the kind of route: GRPCRoute for a GRPCRoute read as an
// HTTPRoute (GRPCRoute), HTTPRoute for any other.
func KindOf(route *gatewayv1.HTTPRoute) gatewayv1.Kind {
	if route.Kind == string(KindGRPCRoute) {
		return KindGRPCRoute
	}
	return KindHTTPRoute
}

// grpcMatch is m as an HTTPRoute match: its method as a path (every path
// without one), its headers as headers.
func grpcMatch(m gatewayv1.GRPCRouteMatch) gatewayv1.HTTPRouteMatch {
	var out gatewayv1.HTTPRouteMatch
	for _, h := range m.Headers {
		t := gatewayv1.HeaderMatchExact
		if h.Type != nil && *h.Type != gatewayv1.GRPCHeaderMatchExact {
			t = gatewayv1.HeaderMatchType(*h.Type)
		}
		out.Headers = append(out.Headers, gatewayv1.HTTPHeaderMatch{Type: &t, Name: gatewayv1.HTTPHeaderName(h.Name), Value: h.Value})
	}
	if m.Method == nil {
		return out
	}
	service, method := "", ""
	if m.Method.Service != nil {
		service = *m.Method.Service
	}
	if m.Method.Method != nil {
		method = *m.Method.Method
	}
	pathType, path := gatewayv1.PathMatchExact, "/"+service+"/"+method
	switch {
	case m.Method.Type != nil && *m.Method.Type == gatewayv1.GRPCMethodMatchRegularExpression:
		// Each a pattern of its part; one unset is any (the API sets one).
		pathType, path = gatewayv1.PathMatchRegularExpression, "/"+anyPart(service)+"/"+anyPart(method)
	case service == "":
		// Any service's method: a pattern, which the cloud's paths are not.
		pathType, path = gatewayv1.PathMatchRegularExpression, "/[^/]+/"+regexp.QuoteMeta(method)
	case method == "":
		pathType = gatewayv1.PathMatchPathPrefix
	}
	out.Path = &gatewayv1.HTTPPathMatch{Type: &pathType, Value: &path}
	return out
}

// anyPart is pattern p of a path part, any part when empty: grouped, so
// an alternation stays in its part. One that is no pattern alone
// ("Get)|(.*") is left ungrouped: grouped, it would match beyond its part
// (every path); left, the path is no pattern, and the cloud's check
// refuses the route.
func anyPart(p string) string {
	switch _, err := regexp.Compile(p); {
	case p == "":
		return "[^/]+"
	case err != nil:
		return p
	}
	return "(?:" + p + ")"
}

// httpFilters are fs as HTTPRoute filters: a GRPCRoute filter's types are
// HTTPRoute ones (grpcFilters those the cloud has).
func httpFilters(fs []gatewayv1.GRPCRouteFilter) []gatewayv1.HTTPRouteFilter {
	var out []gatewayv1.HTTPRouteFilter
	for _, f := range fs {
		out = append(out, gatewayv1.HTTPRouteFilter{Type: gatewayv1.HTTPRouteFilterType(f.Type), RequestHeaderModifier: f.RequestHeaderModifier,
			ResponseHeaderModifier: f.ResponseHeaderModifier, RequestMirror: f.RequestMirror, ExtensionRef: f.ExtensionRef})
	}
	return out
}

// routeFilters are the filters the cloud serves of a route of kind.
func routeFilters(kind gatewayv1.Kind) []gatewayv1.HTTPRouteFilterType {
	if kind == KindGRPCRoute {
		return grpcFilters
	}
	return supportedFilters
}

// routeName is the name route's cloud rules go by: a GRPCRoute's is
// marked, an HTTPRoute may have its name.
func routeName(route *gatewayv1.HTTPRoute) string {
	if KindOf(route) == KindGRPCRoute {
		return route.Name + "/" + string(KindGRPCRoute)
	}
	return route.Name
}
