package gateway

import (
	"strings"
	"testing"

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

	lb, pending, err := Program(gw, tr)
	if err != nil {
		t.Fatal(err)
	}
	if lb.Namespace != "infra" || lb.Name != "gw" || lb.UID != "uid-gw" {
		t.Errorf("identity %+v", lb)
	}
	if want := []renderer.GatewayListener{{Protocol: "http", Port: 80}}; len(lb.Listeners) != 1 || lb.Listeners[0] != want[0] {
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
	if p, ok := pending["https"]; !ok || p.Reason != string(gatewayv1.ListenerReasonPending) || !strings.Contains(p.Message, "HTTPS") {
		t.Errorf("https pending %+v, %v", p, ok)
	}
	if len(pending) != 1 {
		t.Errorf("pending %v, want https only (refused listeners are not pending)", pending)
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
	if _, _, err := Program(gw, tr); err == nil || !strings.Contains(err.Error(), "node port") || !strings.Contains(err.Error(), "team-a/shop") {
		t.Errorf("err %v, want one naming the rule and node ports", err)
	}
}
