package gateway

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/example/cloud-provider-example/exampleapi"
	"github.com/example/cloud-provider-example/lbmodel"
)

func httpParent(t testing.TB, tr Translation, ns, name string) Parent {
	t.Helper()
	ps := tr.Parents[RouteKey{Kind: KindHTTPRoute, NamespacedName: types.NamespacedName{Namespace: ns, Name: name}}]
	if len(ps) != 1 {
		t.Fatalf("HTTPRoute %s/%s: parents %+v, want one", ns, name, ps)
	}
	return ps[0]
}

func ruleNames(tr Translation) []string {
	var out []string
	for _, r := range tr.Rules {
		out = append(out, r.Name)
	}
	return out
}

// What the cloud would refuse of a route is refused with that route alone
// (UnsupportedValue, saying where), before rendering: the Gateway is
// built from the others, and a refused route is not counted as attached.
func TestRouteRefusedByTheCloudsChecks(t *testing.T) {
	withHeader := func(name, value string) gatewayv1.HTTPRouteRule {
		m := prefix("/h")
		m.Headers = []gatewayv1.HTTPHeaderMatch{{Name: gatewayv1.HTTPHeaderName(name), Value: value}}
		return rule([]gatewayv1.HTTPRouteMatch{m}, to("svc-a", 1))
	}
	withFilter := func(f gatewayv1.HTTPRouteFilter) gatewayv1.HTTPRouteRule {
		r := rule(nil, to("svc-a", 1))
		r.Filters = []gatewayv1.HTTPRouteFilter{f}
		return r
	}
	setHeader := func(name, value string) gatewayv1.HTTPRouteFilter {
		return gatewayv1.HTTPRouteFilter{Type: gatewayv1.HTTPRouteFilterRequestHeaderModifier,
			RequestHeaderModifier: &gatewayv1.HTTPHeaderFilter{Set: []gatewayv1.HTTPHeader{{Name: gatewayv1.HTTPHeaderName(name), Value: value}}}}
	}
	redirect := func(code int) gatewayv1.HTTPRouteFilter {
		return gatewayv1.HTTPRouteFilter{Type: gatewayv1.HTTPRouteFilterRequestRedirect, RequestRedirect: &gatewayv1.HTTPRequestRedirectFilter{StatusCode: ptr.To(code)}}
	}
	cases := []struct {
		name string
		rule gatewayv1.HTTPRouteRule
		// says: what the message says; "" accepted.
		says string
	}{
		{"header match value with a tab", withHeader("X-Env", "a\tb"), "spec.rules[0].matches[0]: the Example load balancer would refuse its rule (headers[0].value: header X-Env: must be at most 4096 characters, without control characters)"},
		{"header match value too long", withHeader("X-Env", strings.Repeat("v", 4097)), "headers[0].value"},
		{"header set value with a control character", withFilter(setHeader("X-Env", "a\x07")), "spec.rules[0]: the Example load balancer would refuse its rule (request_headers.set[0].value"},
		{"a redirect code the cloud lacks", withFilter(redirect(304)), "redirect.status_code: 304 is not a redirect code"},
		{"a redirect the Gateway API calls extended", withFilter(redirect(308)), ""},
		{"an unnormalized path", rule([]gatewayv1.HTTPRouteMatch{exact("/a/./b")}, to("svc-a", 1)), "is not a normalized path"},
		{"a plain header value", withHeader("X-Env", "prod"), ""},
	}
	gw := gateway(httpListener("http", 80, "", gatewayv1.NamespacesFromAll))
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			good := route("team-a", "shop", 2*time.Hour, "", []string{"a.example"}, rule(nil, to("svc-b", 1)))
			bad := route("team-b", "bad", time.Hour, "", []string{"b.example"}, c.rule)
			tr := HTTP(gw, []*gatewayv1.HTTPRoute{good, bad}, nil, services)
			p := httpParent(t, tr, "team-b", "bad")
			if c.says == "" {
				if p.Accepted.Reason != "Accepted" || tr.Attached["http"] != 2 {
					t.Fatalf("bad: %+v, attached %v: want it accepted", p, tr.Attached)
				}
				return
			}
			if p.Accepted.Reason != string(gatewayv1.RouteReasonUnsupportedValue) || !strings.Contains(p.Accepted.Message, c.says) {
				t.Errorf("team-b/bad: %+v, want UnsupportedValue saying %q", p.Accepted, c.says)
			}
			if got := ruleNames(tr); !slices.Equal(got, []string{"team-a/shop/0.0:80@a.example"}) {
				t.Errorf("rules %q: want team-a's only", got)
			}
			if tr.Attached["http"] != 1 {
				t.Errorf("attached %v: want 1 (the refused route not counted)", tr.Attached)
			}
			for _, r := range tr.Rules {
				if err := r.Validate(); err != nil {
					t.Errorf("rule %s: the cloud would refuse it: %v", r.Name, err)
				}
			}
		})
	}
}

// A backend named twice in one rule (the same Service and port: one node
// port) is one backend with the sum of the weights, at most the cloud's
// maximum; the route is accepted.
func TestDuplicateBackendsMerged(t *testing.T) {
	gw := gateway(httpListener("http", 80, "", gatewayv1.NamespacesFromAll), l4Listener("pg", 5432, gatewayv1.TCPProtocolType))
	r := route("team-a", "shop", time.Hour, "", []string{"a.example"},
		rule(nil, to("svc-a", 3), to("svc-b", 1), to("svc-a", 2)),
		rule([]gatewayv1.HTTPRouteMatch{prefix("/max")}, to("svc-a", exampleapi.MaxBackendWeight), to("svc-a", 7)))
	pg := l4Route(KindTCPRoute, "team-a", "pg", time.Hour, "pg", nil, "svc-c", "svc-c")
	tr := Translate(gw, []*gatewayv1.HTTPRoute{r}, []L4Route{pg}, nil, services, Boundary{})
	if p := httpParent(t, tr, "team-a", "shop"); p.Accepted.Reason != "Accepted" {
		t.Fatalf("team-a/shop: %+v, want Accepted", p)
	}
	want := map[string][]lbmodel.Backend{
		"team-a/shop/0.0:80@a.example": {{TargetPoolID: "tp-1", Port: 30001, Weight: 5}, {TargetPoolID: "tp-1", Port: 30002, Weight: 1}},
		"team-a/shop/1.0:80@a.example": {{TargetPoolID: "tp-1", Port: 30001, Weight: exampleapi.MaxBackendWeight}},
		"team-a/pg/TCPRoute:5432":      {{TargetPoolID: "tp-1", Port: 30003, Weight: 2}},
	}
	for _, r := range tr.Rules {
		if w, ok := want[r.Name]; !ok || !slices.Equal(r.Backends, w) {
			t.Errorf("rule %s: backends %+v, want %+v", r.Name, r.Backends, w)
		}
		if err := r.Validate(); err != nil {
			t.Errorf("rule %s: the cloud would refuse it: %v", r.Name, err)
		}
	}
	if len(tr.Rules) != len(want) {
		t.Errorf("rules %q, want %d", ruleNames(tr), len(want))
	}
}

// hostsAndPaths is a route of ns/name created age ago with one rule of
// n paths on h host names: n*h cloud rules.
func hostsAndPaths(ns, name string, age time.Duration, h, n int) *gatewayv1.HTTPRoute {
	var hosts []string
	for i := range h {
		hosts = append(hosts, fmt.Sprintf("h%d.%s.example", i, ns))
	}
	var ms []gatewayv1.HTTPRouteMatch
	for i := range n {
		ms = append(ms, prefix(fmt.Sprintf("/p%d", i)))
	}
	return route(ns, name, age, "", hosts, rule(ms, to("svc-a", 1)))
}

// The load balancer holds at most exampleapi.MaxRules rules, the
// listeners' catch-alls included: routes are admitted oldest first, each
// whole, and past the budget the newest are refused (RuleBudgetExceeded),
// while an older one of another namespace keeps its rules; a route too
// big for any load balancer is refused alone.
func TestRuleBudget(t *testing.T) {
	gw := gateway(httpListener("http", 80, "", gatewayv1.NamespacesFromAll), httpListener("named", 80, "n.example", gatewayv1.NamespacesFromAll))
	// The Gateway's own namespace has the whole budget (MaxTenantRules).
	old := hostsAndPaths("infra", "old", 3*time.Hour, 10, 100)      // 1,000 rules
	middle := hostsAndPaths("infra", "middle", 2*time.Hour, 9, 110) // 990: 1,991 with the catch-all
	newest := hostsAndPaths("team-c", "newest", time.Hour, 2, 5)    // 10: 2,001 would be one too many
	huge := hostsAndPaths("team-d", "huge", 4*time.Hour, 16, 128)   // 2,048: never fits
	small := hostsAndPaths("team-e", "small", 30*time.Minute, 1, 8) // 8: fits after newest is refused
	tr := HTTP(gw, []*gatewayv1.HTTPRoute{small, newest, middle, huge, old}, nil, services)

	for name, want := range map[string]string{"infra/old": "Accepted", "infra/middle": "Accepted", "team-c/newest": string(ReasonRuleBudgetExceeded),
		"team-d/huge": string(ReasonRuleBudgetExceeded), "team-e/small": "Accepted"} {
		ns, n, _ := strings.Cut(name, "/")
		if p := httpParent(t, tr, ns, n); p.Accepted.Reason != want {
			t.Errorf("%s: %+v, want %s", name, p.Accepted, want)
		}
	}
	if p := httpParent(t, tr, "team-c", "newest"); !strings.Contains(p.Accepted.Message, "leave 9 of them, for the 10 it would add") {
		t.Errorf("team-c/newest: %q, want what is left and what it needs", p.Accepted.Message)
	}
	if n := len(tr.Rules); n > exampleapi.MaxRules || n != 1000+990+1+8 {
		t.Errorf("%d rules, want %d (within %d)", n, 1000+990+1+8, exampleapi.MaxRules)
	}
	for _, r := range tr.Rules {
		if strings.HasPrefix(r.Name, "team-c/") || strings.HasPrefix(r.Name, "team-d/") {
			t.Fatalf("rule %s of a refused route", r.Name)
		}
	}
	if tr.Attached["http"] != 3 {
		t.Errorf("attached %v, want 3 on http (the refused routes not counted)", tr.Attached)
	}
}

// The routes of a namespace other than the Gateway's hold at most
// MaxTenantRules of its rules, oldest first: past its share a team's
// newest route is refused, in words that name only its own namespace,
// while another team's share and the Gateway's namespace are untouched.
func TestTenantShareOfTheBudget(t *testing.T) {
	gw := sharedGateway()
	first := hostsAndPaths("team-a", "first", 4*time.Hour, 1, 150)      // 150 of team-a's 200
	over := hostsAndPaths("team-a", "over", 3*time.Hour, 1, 60)         // 210: past the share
	fits := hostsAndPaths("team-a", "fits", 2*time.Hour, 1, 50)         // 200: fits
	theirs := hostsAndPaths("team-b", "theirs", 90*time.Minute, 1, 150) // team-b's own share
	platform := hostsAndPaths("infra", "platform", time.Hour, 1, 1000)
	tr := HTTP(gw, []*gatewayv1.HTTPRoute{platform, theirs, fits, over, first}, nil, services)
	for name, want := range map[string]string{"team-a/first": "Accepted", "team-a/over": string(ReasonRuleBudgetExceeded),
		"team-a/fits": "Accepted", "team-b/theirs": "Accepted", "infra/platform": "Accepted"} {
		ns, n, _ := strings.Cut(name, "/")
		if p := httpParent(t, tr, ns, n); p.Accepted.Reason != want {
			t.Errorf("%s: %+v, want %s", name, p.Accepted, want)
		}
	}
	msg := httpParent(t, tr, "team-a", "over").Accepted.Message
	if !strings.Contains(msg, "at most 200 of its rules, and those of team-a attached before this one hold 150, for the 60 it would add") ||
		strings.Contains(msg, "team-b") || strings.Contains(msg, "infra") {
		t.Errorf("team-a/over: %q, want its own namespace's share only", msg)
	}
	if n := len(tr.Rules); n != 150+50+150+1000 {
		t.Errorf("%d rules, want %d", n, 150+50+150+1000)
	}
}
