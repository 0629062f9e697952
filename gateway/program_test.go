package gateway

import (
	"reflect"
	"slices"
	"strings"
	"testing"

	"k8s.io/utils/ptr"

	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/example/cloud-provider-example/renderer"
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

	lb, pending, err := Program(gw, tr, nil)
	if err != nil {
		t.Fatal(err)
	}
	if lb.Namespace != "infra" || lb.Name != "gw" || lb.UID != "uid-gw" {
		t.Errorf("identity %+v", lb)
	}
	want := []renderer.GatewayListener{{Protocol: "http", Port: 80}}
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
	lb, pending, err = Program(gw, tr, Certificates{
		"https":        {Keys: []string{"infra/a-tls"}},
		"https-b":      {Keys: []string{"infra/b-tls", "infra/a-tls"}},
		"https-broken": {Unresolved: &Reason{Reason: "RefNotPermitted", Message: "no ReferenceGrant"}},
	})
	if err != nil {
		t.Fatal(err)
	}
	want = []renderer.GatewayListener{{Protocol: "http", Port: 80}, {Protocol: "https", Port: 443, Certificates: []string{"infra/a-tls", "infra/b-tls"}}}
	if !reflect.DeepEqual(lb.Listeners, want) {
		t.Errorf("listeners %+v, want %+v", lb.Listeners, want)
	}
	if p := pending["https-broken"]; p.Reason != string(gatewayv1.ListenerReasonInvalid) || !strings.Contains(p.Message, "no ReferenceGrant") || len(pending) != 1 {
		t.Errorf("pending %+v, want https-broken only, Invalid", pending)
	}
	if !slices.ContainsFunc(lb.Rules, func(r renderer.HTTPRule) bool { return r.ListenerPort == 443 }) {
		t.Errorf("no rule on 443: %+v", lb.Rules)
	}
}

// A backend without a node port (a ClusterIP Service) cannot be reached
// through a target pool: Program says so, naming the rule.
func TestProgramNeedsNodePorts(t *testing.T) {
	gw := gateway(httpListener("web", 80, "", gatewayv1.NamespacesFromAll))
	clusterIP := func(r *gatewayv1.HTTPRoute, ref gatewayv1.BackendRef) (renderer.HTTPBackend, gatewayv1.RouteConditionReason, string) {
		return renderer.HTTPBackend{}, "", ""
	}
	tr := HTTP(gw, []*gatewayv1.HTTPRoute{route("team-a", "shop", 0, "", nil, rule(nil, to("svc-a", 1)))}, labelled, clusterIP)
	if _, _, err := Program(gw, tr, nil); err == nil || !strings.Contains(err.Error(), "node port") || !strings.Contains(err.Error(), "team-a/shop") {
		t.Errorf("err %v, want one naming the rule and node ports", err)
	}
}
