package gateway

import (
	"cmp"
	"fmt"
	"maps"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/example/cloud-provider-example/lbmodel"
	"github.com/example/cloud-provider-example/objectref"
)

func gateway(ls ...gatewayv1.Listener) *gatewayv1.Gateway {
	return &gatewayv1.Gateway{ObjectMeta: metav1.ObjectMeta{Namespace: "infra", Name: "gw"},
		Spec: gatewayv1.GatewaySpec{GatewayClassName: "example", Listeners: ls}}
}

func httpListener(name string, port int32, host string, from gatewayv1.FromNamespaces) gatewayv1.Listener {
	l := gatewayv1.Listener{Name: gatewayv1.SectionName(name), Port: port, Protocol: gatewayv1.HTTPProtocolType,
		AllowedRoutes: &gatewayv1.AllowedRoutes{Namespaces: &gatewayv1.RouteNamespaces{From: &from}}}
	if host != "" {
		l.Hostname = ptr.To(gatewayv1.Hostname(host))
	}
	if from == gatewayv1.NamespacesFromSelector {
		l.AllowedRoutes.Namespaces.Selector = &metav1.LabelSelector{MatchLabels: map[string]string{"gateway-access": "yes"}}
	}
	return l
}

// route is an HTTPRoute of ns/name created age ago, attached to the
// Gateway (section, if not "").
func route(ns, name string, age time.Duration, section string, hosts []string, rules ...gatewayv1.HTTPRouteRule) *gatewayv1.HTTPRoute {
	ref := gatewayv1.ParentReference{Name: "gw", Namespace: ptr.To(gatewayv1.Namespace("infra"))}
	if section != "" {
		ref.SectionName = ptr.To(gatewayv1.SectionName(section))
	}
	r := &gatewayv1.HTTPRoute{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name,
		CreationTimestamp: metav1.NewTime(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC).Add(-age))},
		Spec: gatewayv1.HTTPRouteSpec{CommonRouteSpec: gatewayv1.CommonRouteSpec{ParentRefs: []gatewayv1.ParentReference{ref}}, Rules: rules}}
	for _, h := range hosts {
		r.Spec.Hostnames = append(r.Spec.Hostnames, gatewayv1.Hostname(h))
	}
	return r
}

func prefix(p string) gatewayv1.HTTPRouteMatch {
	return gatewayv1.HTTPRouteMatch{Path: &gatewayv1.HTTPPathMatch{Type: ptr.To(gatewayv1.PathMatchPathPrefix), Value: ptr.To(p)}}
}

func exact(p string) gatewayv1.HTTPRouteMatch {
	return gatewayv1.HTTPRouteMatch{Path: &gatewayv1.HTTPPathMatch{Type: ptr.To(gatewayv1.PathMatchExact), Value: ptr.To(p)}}
}

func to(svc string, weight int32) gatewayv1.HTTPBackendRef {
	return gatewayv1.HTTPBackendRef{BackendRef: gatewayv1.BackendRef{Weight: &weight,
		BackendObjectReference: gatewayv1.BackendObjectReference{Name: gatewayv1.ObjectName(svc), Port: ptr.To(gatewayv1.PortNumber(80))}}}
}

func rule(matches []gatewayv1.HTTPRouteMatch, backends ...gatewayv1.HTTPBackendRef) gatewayv1.HTTPRouteRule {
	return gatewayv1.HTTPRouteRule{Matches: matches, BackendRefs: backends}
}

// services resolves backends named svc-* to pool tp-1 on a node port
// per name; any other name is not found.
func services(_ objectref.Ref, ref gatewayv1.BackendRef) (lbmodel.Backend, gatewayv1.RouteConditionReason, string) {
	ports := map[string]int{"svc-a": 30001, "svc-b": 30002, "svc-c": 30003}
	if p, ok := ports[string(ref.Name)]; ok {
		return lbmodel.Backend{TargetPoolID: "tp-1", Port: p}, "", ""
	}
	return lbmodel.Backend{}, gatewayv1.RouteReasonBackendNotFound, fmt.Sprintf("Service %s not found", ref.Name)
}

func labelled(ns string) map[string]string {
	return map[string]map[string]string{"team-a": {"gateway-access": "yes"}, "team-b": {}}[ns]
}

// The scenario, decided: a route of an allowed namespace attaches
// and becomes rules (/api to A; /web 80/20 to B and C); one of a
// namespace the listener's selector refuses is NotAllowedByListeners.
func TestHTTPAllowedAndRefused(t *testing.T) {
	gw := gateway(httpListener("http", 80, "", gatewayv1.NamespacesFromSelector))
	a := route("team-a", "shop", time.Hour, "", []string{"a.example"},
		rule([]gatewayv1.HTTPRouteMatch{prefix("/api")}, to("svc-a", 1)),
		rule([]gatewayv1.HTTPRouteMatch{prefix("/web")}, to("svc-b", 80), to("svc-c", 20)))
	b := route("team-b", "intruder", time.Hour, "", []string{"a.example"}, rule(nil, to("svc-a", 1)))
	tr := HTTP(gw, []*gatewayv1.HTTPRoute{a, b}, labelled, services)

	shop := &lbmodel.RouteRef{Kind: "HTTPRoute", Namespace: "team-a", Name: "shop"}
	want := []lbmodel.Rule{
		{Name: "team-a/shop/0.0:80@a.example", ListenerPort: 80, Hostname: "a.example", PathType: "prefix", Path: "/api",
			Backends: []lbmodel.Backend{{TargetPoolID: "tp-1", Port: 30001, Weight: 1}}, Route: shop},
		{Name: "team-a/shop/1.0:80@a.example", ListenerPort: 80, Hostname: "a.example", PathType: "prefix", Path: "/web",
			Backends: []lbmodel.Backend{{TargetPoolID: "tp-1", Port: 30002, Weight: 80}, {TargetPoolID: "tp-1", Port: 30003, Weight: 20}}, Route: shop},
	}
	if got := cloudOrder(tr.Rules); !slices.Equal(got, []string{"80/1 " + want[0].Name, "80/2 " + want[1].Name}) {
		t.Errorf("order: %q", got)
	}
	if !slices.EqualFunc(tr.Rules, want, func(a, b lbmodel.Rule) bool { a.OrderKey = ""; return equalRules(a, b) }) {
		t.Errorf("rules:\n%+v\nwant\n%+v", tr.Rules, want)
	}
	if got := tr.Parents[RouteKey{Kind: KindHTTPRoute, NamespacedName: types.NamespacedName{Namespace: "team-a", Name: "shop"}}]; len(got) != 1 ||
		got[0].Accepted.Reason != "Accepted" || got[0].ResolvedRefs.Reason != "ResolvedRefs" {
		t.Errorf("team-a/shop: %+v, want Accepted and ResolvedRefs", got)
	}
	if got := tr.Parents[RouteKey{Kind: KindHTTPRoute, NamespacedName: types.NamespacedName{Namespace: "team-b", Name: "intruder"}}]; len(got) != 1 || got[0].Accepted.Reason != "NotAllowedByListeners" {
		t.Errorf("team-b/intruder: %+v, want NotAllowedByListeners", got)
	}
	if tr.Attached["http"] != 1 {
		t.Errorf("attached routes %v, want 1 on http", tr.Attached)
	}
}

// Rules are ordered by the Gateway API's precedence, per listener port:
// exact host names before wildcards before any; then exact paths, the
// longest prefix, a method, most headers, most query parameters; then the
// older route, and the first by namespace/name.
func TestHTTPPrecedence(t *testing.T) {
	gw := gateway(httpListener("http", 80, "", gatewayv1.NamespacesFromAll), httpListener("alt", 8080, "", gatewayv1.NamespacesFromAll))
	withMethod := prefix("/m")
	withMethod.Method = ptr.To(gatewayv1.HTTPMethodPost)
	twoHeaders := prefix("/m")
	twoHeaders.Headers = []gatewayv1.HTTPHeaderMatch{{Name: "x-a", Value: "1"}, {Name: "X-B", Value: "2"}, {Name: "X-A", Value: "dup"}}
	threeParams := prefix("/m") // names as written: a and A are two
	threeParams.QueryParams = []gatewayv1.HTTPQueryParamMatch{{Name: "a", Value: "1"}, {Name: "A", Value: "2"}, {Name: "b", Value: "3"},
		{Name: "a", Value: "dup"}}
	oneParam := prefix("/m")
	oneParam.QueryParams = []gatewayv1.HTTPQueryParamMatch{{Name: "a", Value: "1"}}
	old := route("z", "old", 2*time.Hour, "http", nil,
		rule([]gatewayv1.HTTPRouteMatch{prefix("/"), prefix("/long/er"), exact("/long"), withMethod, oneParam, twoHeaders, threeParams}, to("svc-a", 1)))
	young := route("a", "young", time.Hour, "http", nil, rule([]gatewayv1.HTTPRouteMatch{prefix("/long/er")}, to("svc-b", 1)))
	wild := route("a", "wild", time.Hour, "http", []string{"*.example"}, rule(nil, to("svc-c", 1)))
	host := route("a", "host", time.Hour, "", []string{"x.example"}, rule(nil, to("svc-c", 1)))
	tr := HTTP(gw, []*gatewayv1.HTTPRoute{young, wild, old, host}, nil, services)

	got := cloudOrder(tr.Rules)
	want := []string{
		"80/1 a/host/0.0:80@x.example",
		"80/2 a/wild/0.0:80@*.example",
		"80/3 z/old/0.2:80@any",   // exact /long
		"80/4 z/old/0.1:80@any",   // prefix /long/er, the older route
		"80/5 a/young/0.0:80@any", // the same prefix, younger
		"80/6 z/old/0.3:80@any",   // /m with a method ...
		"80/7 z/old/0.5:80@any",   // ... before /m with two headers ...
		"80/8 z/old/0.6:80@any",   // ... before /m with three query parameters ...
		"80/9 z/old/0.4:80@any",   // ... before /m with one
		"80/10 z/old/0.0:80@any",  // prefix /
		"8080/1 a/host/0.0:8080@x.example",
	}
	if !slices.Equal(got, want) {
		t.Errorf("order:\n%q\nwant\n%q", got, want)
	}
	for _, r := range tr.Rules {
		if r.Name == "z/old/0.5:80@any" && !maps.Equal(r.Headers, map[string]string{"X-A": "1", "X-B": "2"}) {
			t.Errorf("headers %v: want the first of each name, canonical", r.Headers)
		}
		if r.Name == "z/old/0.6:80@any" && !maps.Equal(r.QueryParams, map[string]string{"a": "1", "A": "2", "b": "3"}) {
			t.Errorf("query parameters %v: want the first of each name, as written", r.QueryParams)
		}
	}
}

// A request belongs to the most specific listener matching its host, and
// only that listener's routes serve it (the Gateway API's listener
// isolation): rules go by listener, most specific first, and a listener
// that another on its port covers ends with a 404 for its hostname, so a
// request no route of it matches does not fall to a wider listener's
// routes. A route through a wider listener that names a narrower
// listener's host serves nothing. A listener no other covers needs no
// catch-all.
func TestHTTPListenerIsolation(t *testing.T) {
	gw := gateway(
		httpListener("empty", 80, "", gatewayv1.NamespacesFromAll),
		httpListener("wild", 80, "*.example.com", gatewayv1.NamespacesFromAll),
		httpListener("wild-foo", 80, "*.foo.example.com", gatewayv1.NamespacesFromAll),
		httpListener("abc", 80, "abc.foo.example.com", gatewayv1.NamespacesFromAll),
		httpListener("solo", 8080, "solo.example", gatewayv1.NamespacesFromAll))
	at := func(name, section string, hosts ...string) *gatewayv1.HTTPRoute {
		return route("a", name, time.Hour, section, hosts, rule([]gatewayv1.HTTPRouteMatch{prefix("/" + name)}, to("svc-a", 1)))
	}
	tr := HTTP(gw, []*gatewayv1.HTTPRoute{
		at("empty", "empty"), at("hosted", "empty", "abc.foo.example.com"), at("wild", "wild"),
		at("wildfoo", "wild-foo"), at("abc", "abc"), at("solo", "solo"),
	}, nil, services)

	got := cloudOrder(tr.Rules)
	want := []string{
		"80/1 a/abc/0.0:80@abc.foo.example.com",
		"80/2 listener/abc:80@abc.foo.example.com 404 for abc.foo.example.com",
		"80/3 a/wildfoo/0.0:80@*.foo.example.com",
		"80/4 listener/wild-foo:80@*.foo.example.com 404 for *.foo.example.com",
		"80/5 a/wild/0.0:80@*.example.com",
		"80/6 listener/wild:80@*.example.com 404 for *.example.com",
		"80/7 a/hosted/0.0:80@abc.foo.example.com", // after abc's 404: it serves nothing
		"80/8 a/empty/0.0:80@any",
		"8080/1 a/solo/0.0:8080@solo.example",
	}
	if !slices.Equal(got, want) {
		t.Errorf("order:\n%q\nwant\n%q", got, want)
	}
}

// Listeners the cloud cannot serve are refused, and routes neither attach
// to them nor to listeners whose section, port or host names they miss.
func TestHTTPRefusals(t *testing.T) {
	https := gatewayv1.Listener{Name: "https", Port: 80, Protocol: gatewayv1.HTTPSProtocolType}
	twin := httpListener("twin", 81, "a.example", gatewayv1.NamespacesFromAll)
	twin2 := httpListener("twin2", 81, "a.example", gatewayv1.NamespacesFromAll)
	sctp := gatewayv1.Listener{Name: "sctp", Port: 82, Protocol: "SCTP"}
	named := httpListener("named", 83, "b.example", gatewayv1.NamespacesFromSame)
	gw := gateway(httpListener("http", 80, "", gatewayv1.NamespacesFromAll), https, twin, twin2, sctp, named)
	tr := HTTP(gw, []*gatewayv1.HTTPRoute{
		route("infra", "nosection", 0, "missing", nil, rule(nil, to("svc-a", 1))),
		route("infra", "otherhost", 0, "named", []string{"c.example"}, rule(nil, to("svc-a", 1))),
		route("infra", "conflicted", 0, "http", nil, rule(nil, to("svc-a", 1))),
		route("infra", "regex", 0, "named", nil, gatewayv1.HTTPRouteRule{Matches: []gatewayv1.HTTPRouteMatch{{QueryParams: []gatewayv1.HTTPQueryParamMatch{
			{Type: ptr.To(gatewayv1.QueryParamMatchRegularExpression), Name: "q", Value: "1"}}}}}),
		route("infra", "missing", 0, "named", nil, rule(nil, to("nope", 1), to("svc-a", 1))),
		route("team-b", "elsewhere", 0, "named", nil, rule(nil, to("svc-a", 1))),
	}, nil, services)
	for name, want := range map[gatewayv1.SectionName]string{"http": "ProtocolConflict", "https": "ProtocolConflict",
		"twin": "HostnameConflict", "twin2": "HostnameConflict", "sctp": "UnsupportedProtocol"} {
		if got := tr.Refused[name].Reason; got != want {
			t.Errorf("listener %s refused for %q, want %q", name, got, want)
		}
	}
	if _, ok := tr.Refused["named"]; ok {
		t.Errorf("listener named refused: %+v", tr.Refused["named"])
	}
	for name, want := range map[string][2]string{
		"nosection":  {"NoMatchingParent", "ResolvedRefs"},
		"otherhost":  {"NoMatchingListenerHostname", "ResolvedRefs"},
		"conflicted": {"NotAllowedByListeners", "ResolvedRefs"},
		"regex":      {"UnsupportedValue", "ResolvedRefs"},
		"missing":    {"Accepted", "BackendNotFound"},
		"elsewhere":  {"NotAllowedByListeners", "ResolvedRefs"}, // named takes its own namespace's routes
	} {
		ns := "infra"
		if name == "elsewhere" {
			ns = "team-b"
		}
		p := tr.Parents[RouteKey{Kind: KindHTTPRoute, NamespacedName: types.NamespacedName{Namespace: ns, Name: name}}]
		if len(p) != 1 || p[0].Accepted.Reason != want[0] || p[0].ResolvedRefs.Reason != want[1] {
			t.Errorf("route %s: %+v, want %s and %s", name, p, want[0], want[1])
		}
	}
	if len(tr.Rules) != 1 || len(tr.Rules[0].Backends) != 1 || tr.Rules[0].Backends[0].Port != 30001 {
		t.Errorf("rules %+v: want the one of route missing, with the backend that resolved", tr.Rules)
	}
	if tr.Attached["named"] != 1 {
		t.Errorf("attached %v: want 1 route on named", tr.Attached)
	}
}

// A rule's ResponseHeaderModifier is its cloud rules' response header
// changes, beside its request's; a filter the cloud lacks refuses the
// route, naming those it has.
func TestHTTPHeaderFilters(t *testing.T) {
	gw := gateway(httpListener("http", 80, "", gatewayv1.NamespacesFromAll))
	changes := &gatewayv1.HTTPHeaderFilter{Set: []gatewayv1.HTTPHeader{{Name: "X-Set", Value: "1"}},
		Add: []gatewayv1.HTTPHeader{{Name: "X-Add", Value: "2"}}, Remove: []string{"Server"}}
	headers := rule([]gatewayv1.HTTPRouteMatch{prefix("/a"), prefix("/b")}, to("svc-a", 1))
	headers.Filters = []gatewayv1.HTTPRouteFilter{
		{Type: gatewayv1.HTTPRouteFilterResponseHeaderModifier, ResponseHeaderModifier: changes},
		{Type: gatewayv1.HTTPRouteFilterRequestHeaderModifier, RequestHeaderModifier: &gatewayv1.HTTPHeaderFilter{Remove: []string{"X-Drop"}}},
	}
	mirror := rule(nil, to("svc-a", 1))
	mirror.Filters = []gatewayv1.HTTPRouteFilter{{Type: gatewayv1.HTTPRouteFilterRequestMirror}}
	tr := HTTP(gw, []*gatewayv1.HTTPRoute{route("infra", "headers", 0, "", nil, headers), route("infra", "mirror", 0, "", nil, mirror)}, nil, services)

	want := &lbmodel.HeaderChanges{Set: map[string]string{"X-Set": "1"}, Add: map[string]string{"X-Add": "2"}, Remove: []string{"Server"}}
	if len(tr.Rules) != 2 {
		t.Fatalf("rules %+v: want one per match of route headers", tr.Rules)
	}
	for _, r := range tr.Rules {
		if !reflect.DeepEqual(r.ResponseHeaders, want) || r.RequestHeaders == nil || !slices.Equal(r.RequestHeaders.Remove, []string{"X-Drop"}) {
			t.Errorf("%s: response %+v, request %+v", r.Name, r.ResponseHeaders, r.RequestHeaders)
		}
	}
	p := tr.Parents[RouteKey{Kind: KindHTTPRoute, NamespacedName: types.NamespacedName{Namespace: "infra", Name: "mirror"}}]
	if msg := "spec.rules[0].filters[0]: filter RequestMirror is not supported (supported: RequestHeaderModifier, ResponseHeaderModifier, RequestRedirect, URLRewrite, CORS)"; len(p) != 1 || p[0].Accepted.Message != msg {
		t.Errorf("route mirror: %+v, want UnsupportedValue: %s", p, msg)
	}
}

// A redirect's path and a URLRewrite become the cloud rule's: a full
// path, or a prefix in place of what the match's prefix matched (an
// empty one is "/").
func TestHTTPPathFilters(t *testing.T) {
	gw := gateway(httpListener("http", 80, "", gatewayv1.NamespacesFromAll))
	moved := rule([]gatewayv1.HTTPRouteMatch{prefix("/old")})
	moved.Filters = []gatewayv1.HTTPRouteFilter{{Type: gatewayv1.HTTPRouteFilterRequestRedirect, RequestRedirect: &gatewayv1.HTTPRequestRedirectFilter{
		Path: &gatewayv1.HTTPPathModifier{Type: gatewayv1.PrefixMatchHTTPPathModifier, ReplacePrefixMatch: ptr.To("")}}}}
	rewritten := rule([]gatewayv1.HTTPRouteMatch{prefix("/v1")}, to("svc-a", 1))
	rewritten.Filters = []gatewayv1.HTTPRouteFilter{{Type: gatewayv1.HTTPRouteFilterURLRewrite, URLRewrite: &gatewayv1.HTTPURLRewriteFilter{
		Hostname: ptr.To(gatewayv1.PreciseHostname("api.internal")),
		Path:     &gatewayv1.HTTPPathModifier{Type: gatewayv1.FullPathHTTPPathModifier, ReplaceFullPath: ptr.To("/v2")}}}}
	tr := HTTP(gw, []*gatewayv1.HTTPRoute{route("infra", "paths", 0, "", nil, moved, rewritten)}, nil, services)

	byName := map[string]lbmodel.Rule{}
	for _, r := range tr.Rules {
		byName[r.Name] = r
	}
	if rd := byName["infra/paths/0.0:80@any"].Redirect; rd == nil || *rd != (lbmodel.HTTPRedirect{PathPrefix: "/", StatusCode: 302}) {
		t.Errorf("redirect %+v, want the prefix replaced by /", rd)
	}
	r := byName["infra/paths/1.0:80@any"]
	if r.Rewrite == nil || *r.Rewrite != (lbmodel.URLRewrite{Hostname: "api.internal", Path: "/v2"}) || len(r.Backends) != 1 {
		t.Errorf("rewrite %+v (backends %v), want api.internal/v2, forwarded", r.Rewrite, r.Backends)
	}
	if p := httpParent(t, tr, "infra", "paths"); p.Accepted.Reason != "Accepted" {
		t.Errorf("route paths: %+v", p.Accepted)
	}
}

// cloudOrder is rules as the cloud looks at them, "<port>/<rank> <name>",
// and " <code> for <host>" after a fixed response: by port, then by order
// key, equal keys by name (the load balancer's own rules, as
// exampleapi/rulesets.go orders them). Every rule must have a key.
func cloudOrder(rules []lbmodel.Rule) []string {
	sorted := slices.Clone(rules)
	slices.SortFunc(sorted, func(a, b lbmodel.Rule) int {
		return cmp.Or(cmp.Compare(a.ListenerPort, b.ListenerPort), strings.Compare(a.OrderKey, b.OrderKey), strings.Compare(a.Name, b.Name))
	})
	var out []string
	rank := map[int]int{}
	for _, r := range sorted {
		rank[r.ListenerPort]++
		line := fmt.Sprintf("%d/%d %s", r.ListenerPort, rank[r.ListenerPort], r.Name)
		if r.OrderKey == "" || r.Priority != 0 {
			line += " (not keyed)"
		}
		if f := r.FixedResponse; f != nil {
			line += fmt.Sprintf(" %d for %s", f.StatusCode, r.Hostname)
		}
		out = append(out, line)
	}
	return out
}

func equalRules(a, b lbmodel.Rule) bool {
	return reflect.DeepEqual(a, b)
}
