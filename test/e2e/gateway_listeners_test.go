package e2e

import (
	"fmt"
	"maps"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"
	gwclient "sigs.k8s.io/gateway-api/pkg/client/clientset/versioned"

	"github.com/example/cloud-provider-example/exampleapi"
	"github.com/example/cloud-provider-example/internal/testkit"
)

// Every listener kind but HTTPS (TestGatewayProgrammed) through one
// Gateway, in the real controller with the chart's RBAC: a TLS listener
// (Passthrough) on 443, TCP and UDP listeners on 53, and two HTTP
// listeners on 80, one for a.example and one for any host, are
// Programmed. The simulator sends a TLS connection by its SNI name
// (db.example to db-a, any other name of *.example to db-b, another name
// nowhere), TCP and UDP on 53 to the DNS Service's TCP and UDP node
// ports; a second TCPRoute on the TCP listener attaches (Accepted, naming
// the first) but gets no connection. On 80, a.example belongs to its own
// listener (isolation): its route's /api is served, any other path is 404
// though the listener for any host has a route for /.
func TestGatewayListeners(t *testing.T) {
	t.Parallel()
	e := newEnv(t, options{gatewayAPI: true})
	e.nodeA()
	ctx := testkit.Context(t)
	admin, err := gwclient.NewForConfig(e.cluster.Admin)
	testkit.Must(t, err)
	for _, ns := range []string{"infra", "team-a"} {
		_, err := e.kube.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{})
		testkit.Must(t, err)
	}
	nodePorts := map[string]int32{}
	for name, ports := range map[string][]corev1.ServicePort{
		"db-a": {{Name: "tls", Port: 443}},
		"db-b": {{Name: "tls", Port: 443}},
		"dns":  {{Name: "dns-tcp", Port: 53, Protocol: corev1.ProtocolTCP}, {Name: "dns-udp", Port: 53, Protocol: corev1.ProtocolUDP}},
	} {
		for _, p := range e.nodePortBackend(t, "team-a", name, ports...).Spec.Ports {
			nodePorts[name+"/"+string(p.Protocol)] = p.NodePort
		}
	}
	exampleGatewayClass(t, admin)
	all := gatewayv1.NamespacesFromAll
	allowed := &gatewayv1.AllowedRoutes{Namespaces: &gatewayv1.RouteNamespaces{From: &all}}
	_, err = admin.GatewayV1().Gateways("infra").Create(ctx, &gatewayv1.Gateway{ObjectMeta: metav1.ObjectMeta{Name: "gw"},
		Spec: gatewayv1.GatewaySpec{GatewayClassName: "example", Listeners: []gatewayv1.Listener{
			{Name: "tls", Port: 443, Protocol: gatewayv1.TLSProtocolType, AllowedRoutes: allowed,
				TLS: &gatewayv1.ListenerTLSConfig{Mode: ptr.To(gatewayv1.TLSModePassthrough)}},
			{Name: "dns-tcp", Port: 53, Protocol: gatewayv1.TCPProtocolType, AllowedRoutes: allowed},
			{Name: "dns", Port: 53, Protocol: gatewayv1.UDPProtocolType, AllowedRoutes: allowed},
			{Name: "web", Port: 80, Protocol: gatewayv1.HTTPProtocolType, AllowedRoutes: allowed},
			{Name: "web-a", Port: 80, Protocol: gatewayv1.HTTPProtocolType, AllowedRoutes: allowed, Hostname: ptr.To(gatewayv1.Hostname("a.example"))},
		}}}, metav1.CreateOptions{})
	testkit.Must(t, err)
	parent := func(section string) []gatewayv1.ParentReference {
		return []gatewayv1.ParentReference{{Name: "gw", Namespace: ptr.To(gatewayv1.Namespace("infra")), SectionName: ptr.To(gatewayv1.SectionName(section))}}
	}
	backend := func(svc string, port int32) []gatewayv1.BackendRef {
		return []gatewayv1.BackendRef{{BackendObjectReference: gatewayv1.BackendObjectReference{Name: gatewayv1.ObjectName(svc), Port: ptr.To(port)}}}
	}
	tls := func(name, host, svc string) *gatewayv1.TLSRoute {
		return &gatewayv1.TLSRoute{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: gatewayv1.TLSRouteSpec{
			CommonRouteSpec: gatewayv1.CommonRouteSpec{ParentRefs: parent("tls")}, Hostnames: []gatewayv1.Hostname{gatewayv1.Hostname(host)},
			Rules: []gatewayv1.TLSRouteRule{{BackendRefs: backend(svc, 443)}}}}
	}
	for _, r := range []*gatewayv1.TLSRoute{tls("db", "db.example", "db-a"), tls("wild", "*.example", "db-b")} {
		_, err := admin.GatewayV1().TLSRoutes("team-a").Create(ctx, r, metav1.CreateOptions{})
		testkit.Must(t, err)
	}
	tcp := func(name string) *gatewayv1.TCPRoute {
		return &gatewayv1.TCPRoute{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: gatewayv1.TCPRouteSpec{
			CommonRouteSpec: gatewayv1.CommonRouteSpec{ParentRefs: parent("dns-tcp")}, Rules: []gatewayv1.TCPRouteRule{{BackendRefs: backend("dns", 53)}}}}
	}
	_, err = admin.GatewayV1().TCPRoutes("team-a").Create(ctx, tcp("dns-tcp"), metav1.CreateOptions{})
	testkit.Must(t, err)
	_, err = admin.GatewayV1().UDPRoutes("team-a").Create(ctx, &gatewayv1.UDPRoute{ObjectMeta: metav1.ObjectMeta{Name: "dns"}, Spec: gatewayv1.UDPRouteSpec{
		CommonRouteSpec: gatewayv1.CommonRouteSpec{ParentRefs: parent("dns")}, Rules: []gatewayv1.UDPRouteRule{{BackendRefs: backend("dns", 53)}}}}, metav1.CreateOptions{})
	testkit.Must(t, err)
	web := func(name, section, path, svc string) *gatewayv1.HTTPRoute {
		return &gatewayv1.HTTPRoute{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: gatewayv1.HTTPRouteSpec{
			CommonRouteSpec: gatewayv1.CommonRouteSpec{ParentRefs: parent(section)},
			Rules: []gatewayv1.HTTPRouteRule{{Matches: []gatewayv1.HTTPRouteMatch{pathPrefix(path)},
				BackendRefs: []gatewayv1.HTTPBackendRef{{BackendRef: backend(svc, 443)[0]}}}}}}
	}
	for _, r := range []*gatewayv1.HTTPRoute{web("site", "web", "/", "db-b"), web("a-api", "web-a", "/api", "db-a")} {
		_, err := admin.GatewayV1().HTTPRoutes("team-a").Create(ctx, r, metav1.CreateOptions{})
		testkit.Must(t, err)
	}
	// Created after dns-tcp: the listener forwards to dns-tcp only.
	_, err = admin.GatewayV1().TCPRoutes("team-a").Create(ctx, tcp("late"), metav1.CreateOptions{})
	testkit.Must(t, err)

	var ip string
	testkit.Eventually(t, 90*time.Second, "the Gateway programmed", func() error {
		gw, err := admin.GatewayV1().Gateways("infra").Get(ctx, "gw", metav1.GetOptions{})
		if err != nil || !meta.IsStatusConditionTrue(gw.Status.Conditions, "Programmed") || len(gw.Status.Addresses) != 1 || len(gw.Status.Listeners) != 5 {
			return fmt.Errorf("%+v, %v", gw.Status, err)
		}
		for _, l := range gw.Status.Listeners {
			want := map[gatewayv1.SectionName]int32{"tls": 2, "dns-tcp": 2, "dns": 1, "web": 1, "web-a": 1}[l.Name]
			kinds := map[gatewayv1.SectionName]int{"web": 2, "web-a": 2}[l.Name] // HTTPRoute and GRPCRoute; the others take one kind
			if !meta.IsStatusConditionTrue(l.Conditions, "Programmed") || l.AttachedRoutes != want || len(l.SupportedKinds) != max(kinds, 1) {
				return fmt.Errorf("listener %s: %+v, want Programmed with %d routes", l.Name, l, want)
			}
		}
		ip = gw.Status.Addresses[0].Value
		return nil
	})
	testkit.Eventually(t, 60*time.Second, "the late TCPRoute attached, naming the first", func() error {
		r, err := admin.GatewayV1().TCPRoutes("team-a").Get(ctx, "late", metav1.GetOptions{})
		if err != nil || len(r.Status.Parents) != 1 {
			return fmt.Errorf("%+v, %v", r.Status, err)
		}
		a := meta.FindStatusCondition(r.Status.Parents[0].Conditions, "Accepted")
		if a == nil || a.Reason != "Accepted" || !strings.Contains(a.Message, "TCPRoute team-a/dns-tcp") || a.ObservedGeneration != r.Generation {
			return fmt.Errorf("%+v", r.Status.Parents[0].Conditions)
		}
		return nil
	})
	for _, name := range []string{"db", "wild"} {
		r, err := admin.GatewayV1().TLSRoutes("team-a").Get(ctx, name, metav1.GetOptions{})
		testkit.Must(t, err)
		if len(r.Status.Parents) != 1 || !meta.IsStatusConditionTrue(r.Status.Parents[0].Conditions, "Accepted") ||
			!meta.IsStatusConditionTrue(r.Status.Parents[0].Conditions, "ResolvedRefs") {
			t.Errorf("TLSRoute %s: %+v, want Accepted and ResolvedRefs", name, r.Status)
		}
	}

	lb, err := e.cloudLB(ip)
	testkit.Must(t, err)
	pool := e.everyNodesPool(t)
	at := func(backend string) map[string]int {
		return map[string]int{fmt.Sprintf("%s:%d", pool, nodePorts[backend]): 1}
	}
	for _, c := range []struct {
		port                 int
		protocol, host, path string
		status               int
		backends             map[string]int
	}{
		{443, "", "db.example", "", 200, at("db-a/TCP")},
		{443, "", "shop.example", "", 200, at("db-b/TCP")},
		{443, "", "db.example.org", "", 404, nil}, // no SNI name matches: reset
		{53, "", "", "", 200, at("dns/TCP")},
		{53, "udp", "", "", 200, at("dns/UDP")},
		{80, "", "a.example", "/api", 200, at("db-a/TCP")},
		{80, "", "a.example", "/other", 404, nil}, // a.example's listener has no route for it
		{80, "", "b.example", "/other", 200, at("db-b/TCP")},
	} {
		out, err := e.api.SimulateRequests(ctx, lb.ID, exampleapi.SimulatedRequest{ListenerPort: c.port, Protocol: c.protocol, Host: c.host, Path: c.path})
		if err != nil || out.Status != c.status || !maps.Equal(out.Backends, c.backends) {
			t.Errorf("a request to %s/%d (host %q, path %q): %+v, %v; want %d to %v", c.protocol, c.port, c.host, c.path, out, err, c.status, c.backends)
		}
	}
}
