package gateway

import (
	"reflect"
	"slices"
	"strings"
	"testing"

	"k8s.io/utils/ptr"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/example/cloud-provider-example/lbmodel"
	"github.com/example/cloud-provider-example/objectref"
)

// Program builds one cloud listener per port of the accepted HTTP
// listeners, with their rules; an HTTPS listener waits (Pending, its
// rules left out); a refused listener is neither built nor pending.
func TestProgram(t *testing.T) {
	https := httpListener("https", 443, "", gatewayv1.NamespacesFromAll)
	https.Protocol = gatewayv1.HTTPSProtocolType
	web := httpListener("web", 80, "a.example", gatewayv1.NamespacesFromAll)
	other := httpListener("other", 80, "b.example", gatewayv1.NamespacesFromAll)
	clash := httpListener("clash", 8080, "", gatewayv1.NamespacesFromAll)
	clash.Protocol = gatewayv1.TLSProtocolType
	clash2 := httpListener("clash2", 8080, "", gatewayv1.NamespacesFromAll)
	gw := gateway(web, other, https, clash, clash2)
	gw.UID = "uid-gw"
	r := route("team-a", "shop", 0, "", nil, rule([]gatewayv1.HTTPRouteMatch{prefix("/api")}, to("svc-a", 1)))
	tr := HTTP(gw, []*gatewayv1.HTTPRoute{r}, labelled, services)

	lb, pending, unreachable := Program(gw, tr, nil)
	if unreachable != nil {
		t.Fatal(unreachable)
	}
	if lb.Namespace != "infra" || lb.Name != "gw" || lb.UID != "uid-gw" {
		t.Errorf("identity %+v", lb)
	}
	want := []lbmodel.Listener{{Protocol: "http", Port: 80}}
	if !reflect.DeepEqual(lb.Listeners, want) {
		t.Errorf("listeners %+v, want %+v (one per port; https pending; the conflicted ones refused)", lb.Listeners, want)
	}
	for _, r := range lb.Rules {
		if r.ListenerPort != 80 {
			t.Errorf("rule %s on port %d: only the built listeners' rules", r.Name, r.ListenerPort)
		}
	}
	if len(lb.Rules) != 2 { // the route's rule on each host name of port 80
		t.Errorf("%d rules, want 2: %+v", len(lb.Rules), lb.Rules)
	}
	if p, ok := pending["https"]; !ok || p.Reason != string(gatewayv1.ListenerReasonInvalid) || !strings.Contains(p.Message, "has none") {
		t.Errorf("https without certificates: pending %+v, %v", p, ok)
	}
	if len(pending) != 1 {
		t.Errorf("pending %v, want https only (refused listeners are not pending)", pending)
	}

	// With its certificates resolved, the HTTPS listener is built with
	// them (a second HTTPS listener on its port adds its own); one whose
	// refs do not resolve is not.
	second := https
	second.Name, second.Hostname = "https-b", ptr.To(gatewayv1.Hostname("b.example"))
	broken := https
	broken.Name, broken.Port = "https-broken", 8443
	gw.Spec.Listeners = append(gw.Spec.Listeners, second, broken)
	tr = HTTP(gw, []*gatewayv1.HTTPRoute{r}, labelled, services)
	lb, pending, _ = Program(gw, tr, Certificates{
		"https":        {Keys: []string{"infra/a-tls"}},
		"https-b":      {Keys: []string{"infra/b-tls", "infra/a-tls"}},
		"https-broken": {Unresolved: &Reason{Reason: "RefNotPermitted", Message: "no ReferenceGrant"}},
	})
	want = []lbmodel.Listener{{Protocol: "http", Port: 80}, {Protocol: "https", Port: 443, Certificates: []string{"infra/a-tls", "infra/b-tls"}}}
	if !reflect.DeepEqual(lb.Listeners, want) {
		t.Errorf("listeners %+v, want %+v", lb.Listeners, want)
	}
	if p := pending["https-broken"]; p.Reason != string(gatewayv1.ListenerReasonInvalid) || !strings.Contains(p.Message, "no ReferenceGrant") || len(pending) != 1 {
		t.Errorf("pending %+v, want https-broken only, Invalid", pending)
	}
	if !slices.ContainsFunc(lb.Rules, func(r lbmodel.Rule) bool { return r.ListenerPort == 443 }) {
		t.Errorf("no rule on 443: %+v", lb.Rules)
	}
}

// A backend without a node port (a ClusterIP Service) cannot be reached
// through a target pool: it is left out of its rule (which answers 500
// without another backend), and Program names the rule; the others stay.
func TestProgramLeavesOutClusterIPBackends(t *testing.T) {
	gw := gateway(httpListener("web", 80, "", gatewayv1.NamespacesFromAll))
	clusterIP := func(r objectref.Ref, ref gatewayv1.BackendRef) (lbmodel.Backend, gatewayv1.RouteConditionReason, string) {
		if ref.Name == "svc-internal" {
			return lbmodel.Backend{}, "", ""
		}
		return services(r, ref)
	}
	tr := HTTP(gw, []*gatewayv1.HTTPRoute{route("team-a", "shop", 0, "", nil,
		rule([]gatewayv1.HTTPRouteMatch{prefix("/mixed")}, to("svc-a", 1), to("svc-internal", 1)),
		rule([]gatewayv1.HTTPRouteMatch{prefix("/internal")}, to("svc-internal", 1)))}, labelled, clusterIP)
	lb, _, unreachable := Program(gw, tr, nil)
	if len(unreachable) != 2 || !strings.Contains(unreachable[0], "team-a/shop") {
		t.Errorf("unreachable %v, want both rules of team-a/shop", unreachable)
	}
	for _, r := range lb.Rules {
		want := map[string]int{"/mixed": 1, "/internal": 0}[r.Path]
		if len(r.Backends) != want || slices.ContainsFunc(r.Backends, func(b lbmodel.Backend) bool { return b.Port == 0 }) {
			t.Errorf("rule %s backends %+v, want %d reachable", r.Name, r.Backends, want)
		}
	}
	if len(tr.Rules[0].Backends)+len(tr.Rules[1].Backends) != 3 {
		t.Errorf("Program changed the translation's rules: %+v", tr.Rules)
	}
}
