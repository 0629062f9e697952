package gateway

import (
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/example/cloud-provider-example/lbmodel"
)

func l4Listener(name string, port int32, protocol gatewayv1.ProtocolType) gatewayv1.Listener {
	from := gatewayv1.NamespacesFromAll
	l := gatewayv1.Listener{Name: gatewayv1.SectionName(name), Port: port, Protocol: protocol,
		AllowedRoutes: &gatewayv1.AllowedRoutes{Namespaces: &gatewayv1.RouteNamespaces{From: &from}}}
	if protocol == gatewayv1.TLSProtocolType {
		l.TLS = &gatewayv1.ListenerTLSConfig{Mode: ptr.To(gatewayv1.TLSModePassthrough)}
	}
	return l
}

// l4Route is a route of kind in ns/name created age ago, attached to the
// Gateway's section (any, if ""), with SNI hosts and backends svc-* (port
// 80, weight 1).
func l4Route(kind gatewayv1.Kind, ns, name string, age time.Duration, section string, hosts []string, svcs ...string) L4Route {
	ref := gatewayv1.ParentReference{Name: "gw", Namespace: ptr.To(gatewayv1.Namespace("infra"))}
	if section != "" {
		ref.SectionName = ptr.To(gatewayv1.SectionName(section))
	}
	r := L4Route{Kind: kind, ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name,
		CreationTimestamp: metav1.NewTime(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC).Add(-age))},
		ParentRefs: []gatewayv1.ParentReference{ref}}
	for _, h := range hosts {
		r.Hostnames = append(r.Hostnames, gatewayv1.Hostname(h))
	}
	for _, s := range svcs {
		r.BackendRefs = append(r.BackendRefs, to(s, 1).BackendRef)
	}
	return r
}

func parentOf(t *testing.T, tr Translation, kind gatewayv1.Kind, ns, name string) Parent {
	t.Helper()
	ps := tr.Parents[RouteKey{Kind: kind, NamespacedName: types.NamespacedName{Namespace: ns, Name: name}}]
	if len(ps) != 1 {
		t.Fatalf("%s %s/%s: parents %+v, want one", kind, ns, name, ps)
	}
	return ps[0]
}

// TLS passthrough routes by SNI name (the most specific first, then the
// oldest route); a TCP or UDP listener forwards to its oldest route, a
// later one attaches but gets no rule (its status not naming the other
// namespace's route); a route of a kind a listener does not
// take is refused; a UDP listener's rule names its protocol (a TCP one
// may share the port).
func TestTranslateL4(t *testing.T) {
	gw := gateway(
		l4Listener("tls", 443, gatewayv1.TLSProtocolType),
		l4Listener("pg", 5432, gatewayv1.TCPProtocolType),
		l4Listener("dns-tcp", 53, gatewayv1.TCPProtocolType),
		l4Listener("dns", 53, gatewayv1.UDPProtocolType),
	)
	routes := []L4Route{
		l4Route(KindTLSRoute, "team-a", "wild", 3*time.Hour, "", []string{"*.example"}, "svc-a"),
		l4Route(KindTLSRoute, "team-b", "db", time.Hour, "", []string{"db.example.org"}, "svc-b", "svc-missing"),
		l4Route(KindTCPRoute, "team-a", "pg", 2*time.Hour, "pg", nil, "svc-a", "svc-b"),
		l4Route(KindTCPRoute, "team-b", "pg-late", time.Hour, "pg", nil, "svc-c"),
		l4Route(KindUDPRoute, "team-a", "dns", time.Hour, "dns", nil, "svc-c"),
		l4Route(KindTCPRoute, "team-b", "on-tls", time.Hour, "tls", nil, "svc-c"),
	}
	tr := Translate(gw, nil, routes, labelled, services, Boundary{})

	want := []lbmodel.Rule{
		{Name: "team-a/dns/UDPRoute:53", ListenerPort: 53, ListenerProtocol: "udp", Priority: 1,
			Backends: []lbmodel.Backend{{TargetPoolID: "tp-1", Port: 30003, Weight: 1}}},
		{Name: "team-b/db/TLSRoute:443@db.example.org", ListenerPort: 443, Priority: 1, Hostname: "db.example.org",
			Backends: []lbmodel.Backend{{TargetPoolID: "tp-1", Port: 30002, Weight: 1}}},
		{Name: "team-a/wild/TLSRoute:443@*.example", ListenerPort: 443, Priority: 2, Hostname: "*.example",
			Backends: []lbmodel.Backend{{TargetPoolID: "tp-1", Port: 30001, Weight: 1}}},
		{Name: "team-a/pg/TCPRoute:5432", ListenerPort: 5432, Priority: 1,
			Backends: []lbmodel.Backend{{TargetPoolID: "tp-1", Port: 30001, Weight: 1}, {TargetPoolID: "tp-1", Port: 30002, Weight: 1}}},
	}
	if len(tr.Rules) != len(want) {
		t.Fatalf("rules %+v, want %+v", tr.Rules, want)
	}
	for i := range want {
		if got := tr.Rules[i]; got.Name != want[i].Name || got.ListenerPort != want[i].ListenerPort || got.ListenerProtocol != want[i].ListenerProtocol ||
			got.Priority != want[i].Priority || got.Hostname != want[i].Hostname || len(got.Backends) != len(want[i].Backends) {
			t.Errorf("rule %d = %+v, want %+v", i, got, want[i])
		}
	}
	if p := parentOf(t, tr, KindTLSRoute, "team-b", "db"); p.Accepted.Reason != "Accepted" || p.ResolvedRefs.Reason != "BackendNotFound" {
		t.Errorf("team-b/db: %+v, want Accepted and BackendNotFound", p)
	}
	if p := parentOf(t, tr, KindTCPRoute, "team-b", "pg-late"); p.Accepted.Reason != "Accepted" ||
		!strings.Contains(p.Accepted.Message, "a route of another namespace") || strings.Contains(p.Accepted.Message, "team-a") {
		t.Errorf("team-b/pg-late: %+v, want Accepted, saying another namespace's route has the listener without naming it", p)
	}
	if p := parentOf(t, tr, KindTCPRoute, "team-b", "on-tls"); p.Accepted.Reason != "NotAllowedByListeners" {
		t.Errorf("team-b/on-tls: %+v, want NotAllowedByListeners (a TLS listener takes TLSRoutes)", p)
	}
	for name, n := range map[gatewayv1.SectionName]int32{"tls": 2, "pg": 2, "dns": 1, "dns-tcp": 0} {
		if tr.Attached[name] != n {
			t.Errorf("listener %s: %d routes attached, want %d", name, tr.Attached[name], n)
		}
	}

	lb, pending, _ := Program(gw, tr, nil)
	if len(pending) != 0 {
		t.Errorf("pending %v, want every listener built", pending)
	}
	if len(lb.Listeners) != 4 || len(lb.Rules) != 4 {
		t.Errorf("load balancer %+v, want 4 listeners (tls, tcp, tcp, udp) and 4 rules", lb)
	}
	for _, l := range lb.Listeners {
		if want := map[int32]string{443: "tls", 5432: "tcp"}[int32(l.Port)]; want != "" && l.Protocol != want {
			t.Errorf("listener %+v, want %s", l, want)
		}
	}
}

// Listener refusals of the L4 protocols: a TLS listener that would
// terminate, an HTTPS one that would pass through, two TCP listeners on
// one port (their connections carry no host name).
func TestL4ListenerRefusals(t *testing.T) {
	terminate := l4Listener("tls-terminate", 443, gatewayv1.TLSProtocolType)
	terminate.TLS.Mode = ptr.To(gatewayv1.TLSModeTerminate)
	https := gatewayv1.Listener{Name: "https-passthrough", Port: 8443, Protocol: gatewayv1.HTTPSProtocolType,
		TLS: &gatewayv1.ListenerTLSConfig{Mode: ptr.To(gatewayv1.TLSModePassthrough)}}
	a, b := l4Listener("a", 9000, gatewayv1.TCPProtocolType), l4Listener("b", 9000, gatewayv1.TCPProtocolType)
	b.Hostname = ptr.To(gatewayv1.Hostname("b.example"))
	tr := Translate(gateway(terminate, https, a, b), nil, nil, labelled, services, Boundary{})
	for name, reason := range map[gatewayv1.SectionName]gatewayv1.ListenerConditionReason{
		"tls-terminate": gatewayv1.ListenerReasonUnsupportedValue, "https-passthrough": gatewayv1.ListenerReasonUnsupportedValue,
		"a": gatewayv1.ListenerReasonHostnameConflict, "b": gatewayv1.ListenerReasonHostnameConflict,
	} {
		if got := tr.Refused[name]; got.Reason != string(reason) {
			t.Errorf("listener %s: %+v, want %s", name, got, reason)
		}
	}
}
