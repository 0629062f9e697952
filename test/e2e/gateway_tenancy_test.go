package e2e

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/util/retry"
	"k8s.io/utils/ptr"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"
	gatewayv1beta1 "sigs.k8s.io/gateway-api/apis/v1beta1"
	gwclient "sigs.k8s.io/gateway-api/pkg/client/clientset/versioned"

	"github.com/example/cloud-provider-example/exampleapi"
	"github.com/example/cloud-provider-example/gateway"
	"github.com/example/cloud-provider-example/internal/testkit"
	"github.com/example/cloud-provider-example/internal/testsize"
	"github.com/example/cloud-provider-example/objectref"
	"github.com/example/cloud-provider-example/preview"
	"github.com/example/cloud-provider-example/reviewapi"
	"github.com/example/cloud-provider-example/simulator/simtest"
	"github.com/example/cloud-provider-example/tenancy"
)

// The tenant boundary on a shared Gateway (docs/gateway-api.md "Host
// names and listeners belong to a namespace", docs/tenancy.md), with real
// identities: the platform's Gateway infra/gw takes routes of every
// namespace; alice may write routes and ReferenceGrants in team-a,
// mallory in team-b, and nothing else. Each row is one of issue 52's
// findings, tried as a hostile tenant would, and asserts the safe outcome
// in the cloud (the simulator's routing of the applied rules) and in the
// routes' statuses.
func TestGatewayTenancy(t *testing.T) {
	testsize.SkipShort(t, "a row per finding, a claim's grace waited out")
	t.Parallel()
	e, admin := gatewayEnv(t, options{hostnameClaimGrace: "20s"})
	ctx := testkit.Context(t)
	nodePorts := map[string]int32{}
	for ns, names := range map[string][]string{"infra": nil, "team-a": {"a", "b"}, "team-b": {"m"}} {
		_, err := e.kube.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{})
		testkit.Must(t, err)
		for _, name := range names {
			nodePorts[name] = e.nodePortBackend(t, ns, name, corev1.ServicePort{Port: 80}).Spec.Ports[0].NodePort
		}
	}
	exampleGatewayClass(t, admin)
	// The platform's certificate, in the Gateway's namespace.
	e.allowTLSSecrets(t, "infra")
	_, err := e.kube.CoreV1().Secrets("infra").Create(ctx, tlsSecretObject("infra", "shop-tls", simtest.NewCert(t, simtest.CertOptions{CommonName: "shop.example"})),
		metav1.CreateOptions{})
	testkit.Must(t, err)
	all := gatewayv1.NamespacesFromAll
	allowed := &gatewayv1.AllowedRoutes{Namespaces: &gatewayv1.RouteNamespaces{From: &all}}
	// It takes ListenerSets of the namespaces labelled listeners=yes
	// (none yet).
	selector := gatewayv1.NamespacesFromSelector
	_, err = admin.GatewayV1().Gateways("infra").Create(ctx, &gatewayv1.Gateway{ObjectMeta: metav1.ObjectMeta{Name: "gw"},
		Spec: gatewayv1.GatewaySpec{GatewayClassName: "example", AllowedListeners: &gatewayv1.AllowedListeners{Namespaces: &gatewayv1.ListenerNamespaces{
			From: &selector, Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"listeners": "yes"}}}}, Listeners: []gatewayv1.Listener{
			{Name: "web", Port: 80, Protocol: gatewayv1.HTTPProtocolType, AllowedRoutes: allowed},
			{Name: "websecure", Port: 443, Protocol: gatewayv1.HTTPSProtocolType, AllowedRoutes: allowed, TLS: &gatewayv1.ListenerTLSConfig{
				CertificateRefs: []gatewayv1.SecretObjectReference{{Name: "shop-tls"}}}},
			{Name: "db", Port: 5432, Protocol: gatewayv1.TCPProtocolType, AllowedRoutes: allowed},
		}}}, metav1.CreateOptions{})
	testkit.Must(t, err)
	// A Gateway of the platform's own routes (allowedRoutes Same).
	_, err = admin.GatewayV1().Gateways("infra").Create(ctx, &gatewayv1.Gateway{ObjectMeta: metav1.ObjectMeta{Name: "private"},
		Spec: gatewayv1.GatewaySpec{GatewayClassName: "example", Listeners: []gatewayv1.Listener{
			{Name: "web", Port: 80, Protocol: gatewayv1.HTTPProtocolType}}}}, metav1.CreateOptions{})
	testkit.Must(t, err)
	resources := []string{"httproutes", "grpcroutes", "tcproutes", "referencegrants", "listenersets"}
	_, alice := e.gatewayTenant(t, "team-a", "alice", resources...)
	// Mallory may also run her team's own Gateways.
	malloryUser, mallory := e.gatewayTenant(t, "team-b", "mallory", append(resources, "gateways")...)

	// Alice serves shop.example: /api to a; her database on the TCP
	// listener.
	shop := tenantRoute("shop", []string{"shop.example"}, rulesTo(map[string]string{"/api": "a"}))
	_, err = alice.GatewayV1().HTTPRoutes("team-a").Create(ctx, shop, metav1.CreateOptions{})
	testkit.Must(t, err)
	_, err = alice.GatewayV1().TCPRoutes("team-a").Create(ctx, dbRoute("db", "a"), metav1.CreateOptions{})
	testkit.Must(t, err)
	ip := e.gatewayAddress(t, admin, "infra")
	lb, err := e.cloudLB(ip)
	testkit.Must(t, err)
	pool := e.everyNodesPool(t)
	at := func(svc string) map[string]int { return map[string]int{fmt.Sprintf("%s:%d", pool, nodePorts[svc]): 1} }
	e.eventuallyRoutes(t, lb.ID, "shop.example", "/api", 200, at("a"))

	t.Run("a route the cloud would refuse fails only itself", func(t *testing.T) {
		ctx := testkit.Context(t) // the row's own deadline: rows share none
		// A header value with a tab, and one route of 16 host names × 16
		// paths (256 rules, past a namespace's share of a Gateway of
		// another namespace, 200): both allowed by the CRDs. A backend
		// named twice is merged, not refused.
		tab := tenantRoute("tab", []string{"tab.example"}, rulesTo(map[string]string{"/": "m"}))
		tab.Spec.Rules[0].Matches[0].Headers = []gatewayv1.HTTPHeaderMatch{{Name: "X-Team", Value: "a\tb"}}
		twice := tenantRoute("twice", []string{"twice.example"}, rulesTo(map[string]string{"/": "m"}))
		twice.Spec.Rules[0].BackendRefs = append(twice.Spec.Rules[0].BackendRefs, twice.Spec.Rules[0].BackendRefs[0])
		var hosts []string
		paths := map[string]string{}
		for i := range 16 {
			hosts = append(hosts, fmt.Sprintf("h%02d.example", i))
			paths[fmt.Sprintf("/p%02d", i)] = "m"
		}
		wide := tenantRoute("wide", hosts, rulesTo(paths))
		for _, r := range []*gatewayv1.HTTPRoute{tab, twice, wide} {
			_, err := mallory.GatewayV1().HTTPRoutes("team-b").Create(ctx, r, metav1.CreateOptions{})
			testkit.Must(t, err)
		}
		e.routeCondition(t, admin, "team-b", "tab", "Accepted", "UnsupportedValue", "X-Team")
		e.routeCondition(t, admin, "team-b", "wide", "Accepted", "RuleBudgetExceeded", "at most 200 of its rules, and those of team-b attached before this one hold")
		e.routeCondition(t, admin, "team-b", "twice", "Accepted", "Accepted", "")
		e.eventuallyRoutes(t, lb.ID, "twice.example", "/", 200, at("m"))

		// The owner's change is applied in the usual time while they are
		// attached.
		start := time.Now()
		updateRoute(t, alice, "team-a", "shop", func(r *gatewayv1.HTTPRoute) {
			r.Spec.Rules = rulesTo(map[string]string{"/api": "a", "/v2": "b"})
		})
		e.eventuallyRoutes(t, lb.ID, "shop.example", "/v2", 200, at("b"))
		t.Logf("alice's change applied %s after her edit, three hostile routes attached", time.Since(start).Round(100*time.Millisecond))
		gw, err := admin.GatewayV1().Gateways("infra").Get(ctx, "gw", metav1.GetOptions{})
		testkit.Must(t, err)
		if !meta.IsStatusConditionTrue(gw.Status.Conditions, "Programmed") {
			t.Errorf("the Gateway is not Programmed: %+v", gw.Status.Conditions)
		}
		for _, name := range []string{"tab", "wide"} {
			testkit.Must(t, mallory.GatewayV1().HTTPRoutes("team-b").Delete(ctx, name, metav1.DeleteOptions{}))
		}
	})

	t.Run("a host name another namespace serves is refused, in words that name nobody", func(t *testing.T) {
		ctx := testkit.Context(t) // the row's own deadline: rows share none
		// More specific than alice's rules for GET /, and a route for any
		// host that would get what alice's rules leave.
		steal := tenantRoute("steal", []string{"shop.example"}, rulesTo(map[string]string{"/": "m"}))
		steal.Spec.Rules[0].Matches[0].Method = ptr.To(gatewayv1.HTTPMethodGet)
		_, err := mallory.GatewayV1().HTTPRoutes("team-b").Create(ctx, steal, metav1.CreateOptions{})
		testkit.Must(t, err)
		_, err = mallory.GatewayV1().HTTPRoutes("team-b").Create(ctx, tenantRoute("any", nil, rulesTo(map[string]string{"/": "m"})), metav1.CreateOptions{})
		testkit.Must(t, err)
		c := e.routeCondition(t, admin, "team-b", "steal", "Accepted", "HostnameInUse", "shop.example")
		if strings.Contains(c.Message, "team-a") || strings.Contains(c.Message, "shop ") {
			t.Errorf("the refusal names alice's namespace or route: %s", c.Message)
		}
		e.eventuallyRoutes(t, lb.ID, "other.example", "/", 200, at("m")) // mallory's route for any host is applied
		for path, want := range map[string]map[string]int{"/api": at("a"), "/v2": at("b")} {
			e.routes(t, lb.ID, 80, "shop.example", path, 1, 200, want)
		}
		// What alice's rules leave of shop.example is fenced: 404, not
		// mallory's.
		e.routes(t, lb.ID, 80, "shop.example", "/other", 1, 404, nil)
		e.noEventMentions(t, "team-b", "team-a")
	})

	t.Run("a ListenerSet of a namespace the Gateway does not admit is NotAllowed, and changes nothing in the cloud", func(t *testing.T) {
		ctx := testkit.Context(t) // the row's own deadline: rows share none
		before, err := e.cloudLB(ip)
		testkit.Must(t, err)
		open := &gatewayv1.ListenerSet{ObjectMeta: metav1.ObjectMeta{Name: "open"}, Spec: gatewayv1.ListenerSetSpec{
			ParentRef: gatewayv1.ParentGatewayReference{Namespace: ptr.To(gatewayv1.Namespace("infra")), Name: "gw"},
			Listeners: []gatewayv1.ListenerEntry{{Name: "alt", Port: 8081, Protocol: gatewayv1.HTTPProtocolType}}}}
		_, err = mallory.GatewayV1().ListenerSets("team-b").Create(ctx, open, metav1.CreateOptions{})
		testkit.Must(t, err)
		e.listenerSetCondition(t, admin, "team-b", "open", "Accepted", "NotAllowed")
		e.listenerSetCondition(t, admin, "team-b", "open", "Programmed", "NotAllowed")
		after, err := e.cloudLB(ip)
		testkit.Must(t, err)
		if !slices.EqualFunc(before.Listeners, after.Listeners, func(a, b exampleapi.Listener) bool { return a.Port == b.Port && a.Protocol == b.Protocol }) {
			t.Errorf("the load balancer's listeners changed: %+v, then %+v", before.Listeners, after.Listeners)
		}
		testkit.Must(t, mallory.GatewayV1().ListenerSets("team-b").Delete(ctx, "open", metav1.DeleteOptions{}))
	})

	t.Run("a ListenerSet takes no host name another namespace holds, nor serves a certificate naming one", func(t *testing.T) {
		ctx := testkit.Context(t) // the row's own deadline: rows share none
		// team-b admitted now; mallory's certificate names alice's host
		// name beside her own.
		labelNamespace(t, e, "team-b", map[string]string{"listeners": "yes"})
		e.allowTLSSecrets(t, "team-b")
		_, err := e.kube.CoreV1().Secrets("team-b").Create(ctx, tlsSecretObject("team-b", "m-tls",
			simtest.NewCert(t, simtest.CertOptions{CommonName: "m.example", DNSNames: []string{"m.example", "shop.example"}})), metav1.CreateOptions{})
		testkit.Must(t, err)
		take := httpsListenerSet("take", "m.example", "m-tls")
		take.Spec.Listeners = append(take.Spec.Listeners, gatewayv1.ListenerEntry{Name: "shop", Port: 80, Protocol: gatewayv1.HTTPProtocolType,
			Hostname: ptr.To(gatewayv1.Hostname("shop.example"))})
		_, err = mallory.GatewayV1().ListenerSets("team-b").Create(ctx, take, metav1.CreateOptions{})
		testkit.Must(t, err)
		testkit.Eventually(t, 90*time.Second, "mallory's listeners refused", func() error {
			s, err := admin.GatewayV1().ListenerSets("team-b").Get(ctx, "take", metav1.GetOptions{})
			if err != nil || len(s.Status.Listeners) != 2 {
				return fmt.Errorf("%+v, %v", s.Status, err)
			}
			https, shopL := s.Status.Listeners[0].Conditions, s.Status.Listeners[1].Conditions
			r, c := meta.FindStatusCondition(https, "ResolvedRefs"), meta.FindStatusCondition(shopL, "Conflicted")
			if r == nil || r.Reason != "InvalidCertificateRef" || !strings.Contains(r.Message, "shop.example") ||
				c == nil || c.Status != metav1.ConditionTrue || c.Reason != "HostnameConflict" || !strings.Contains(c.Message, "shop.example") {
				return fmt.Errorf("https %+v, shop %+v", r, c)
			}
			if strings.Contains(r.Message+c.Message, "team-a") {
				return fmt.Errorf("a refusal names alice's namespace: %q, %q", r.Message, c.Message)
			}
			return nil
		})
		// Alice's rules still answer shop.example; and SNI shop.example
		// is never answered with mallory's certificate.
		e.routes(t, lb.ID, 80, "shop.example", "/api", 1, 200, at("a"))
		now, err := e.cloudLB(ip)
		testkit.Must(t, err)
		for _, l := range now.Listeners {
			if l.Port == 443 && len(l.CertificateIDs) != 1 {
				t.Errorf("the 443 listener serves %d certificates, want the platform's one: %+v", len(l.CertificateIDs), l)
			}
		}
		testkit.Must(t, mallory.GatewayV1().ListenerSets("team-b").Delete(ctx, "take", metav1.DeleteOptions{}))
	})

	t.Run("a team's ListenerSets add at most five of a shared port's certificates", func(t *testing.T) {
		ctx := testkit.Context(t) // the row's own deadline: rows share none
		// team-b admitted, its TLS Secrets allowed (the row before).
		many := &gatewayv1.ListenerSet{ObjectMeta: metav1.ObjectMeta{Name: "many"}, Spec: gatewayv1.ListenerSetSpec{
			ParentRef: gatewayv1.ParentGatewayReference{Namespace: ptr.To(gatewayv1.Namespace("infra")), Name: "gw"}}}
		for k := range gateway.MaxTenantCertificates + 1 {
			host, secret := fmt.Sprintf("m%d.example", k), fmt.Sprintf("m%d-tls", k)
			_, err := e.kube.CoreV1().Secrets("team-b").Create(ctx, tlsSecretObject("team-b", secret,
				simtest.NewCert(t, simtest.CertOptions{CommonName: host, DNSNames: []string{host}})), metav1.CreateOptions{})
			testkit.Must(t, err)
			many.Spec.Listeners = append(many.Spec.Listeners, gatewayv1.ListenerEntry{Name: gatewayv1.SectionName(fmt.Sprintf("m%d", k)), Port: 443,
				Protocol: gatewayv1.HTTPSProtocolType, Hostname: ptr.To(gatewayv1.Hostname(host)),
				TLS: &gatewayv1.ListenerTLSConfig{CertificateRefs: []gatewayv1.SecretObjectReference{{Name: gatewayv1.ObjectName(secret)}}}})
		}
		_, err := mallory.GatewayV1().ListenerSets("team-b").Create(ctx, many, metav1.CreateOptions{})
		testkit.Must(t, err)
		testkit.Eventually(t, 90*time.Second, "mallory's sixth listener not built", func() error {
			s, err := admin.GatewayV1().ListenerSets("team-b").Get(ctx, "many", metav1.GetOptions{})
			if err != nil || len(s.Status.Listeners) != gateway.MaxTenantCertificates+1 {
				return fmt.Errorf("%+v, %v", s.Status, err)
			}
			for k, l := range s.Status.Listeners {
				c := meta.FindStatusCondition(l.Conditions, "Programmed")
				switch last := k == gateway.MaxTenantCertificates; {
				case c == nil:
					return fmt.Errorf("listener %s: no Programmed", l.Name)
				case !last && c.Status != metav1.ConditionTrue:
					return fmt.Errorf("listener %s: %+v, want programmed", l.Name, c)
				case last && (c.Status != metav1.ConditionFalse || c.Reason != "PortUnavailable" || !strings.Contains(c.Message, "team-b")):
					return fmt.Errorf("listener %s: %+v, want PortUnavailable for team-b's share", l.Name, c)
				case last && (strings.Contains(c.Message, "team-a") || strings.Contains(c.Message, "infra")):
					t.Errorf("listener %s: %q names another namespace", l.Name, c.Message)
				}
			}
			return nil
		})
		now, err := e.cloudLB(ip)
		testkit.Must(t, err)
		for _, l := range now.Listeners {
			if l.Port == 443 && len(l.CertificateIDs) != 1+gateway.MaxTenantCertificates {
				t.Errorf("the 443 listener serves %d certificates, want the platform's and mallory's %d", len(l.CertificateIDs), gateway.MaxTenantCertificates)
			}
		}
		testkit.Must(t, mallory.GatewayV1().ListenerSets("team-b").Delete(ctx, "many", metav1.DeleteOptions{}))
	})

	t.Run("a ListenerSet's author cannot approve the Gateway change it causes", func(t *testing.T) {
		ctx := testkit.Context(t) // the row's own deadline: rows share none
		// A Gateway of its own under the manual policy (the shared one's
		// events are the other rows'): it takes every namespace's
		// ListenerSets. Mallory reviews too.
		e.bindReviewer(t, "team-b", "mallory")
		e.waitAllowed(t, malloryUser, "create", reviewapi.Group, "planapprovals", namespace)
		rosa := e.reviewer(t, "rosa")
		all := gatewayv1.NamespacesFromAll
		gw, err := admin.GatewayV1().Gateways("infra").Create(ctx, &gatewayv1.Gateway{ObjectMeta: metav1.ObjectMeta{Name: "teams",
			Annotations: map[string]string{"loadbalancer.example.com/apply-policy": "manual"}},
			Spec: gatewayv1.GatewaySpec{GatewayClassName: "example", AllowedListeners: &gatewayv1.AllowedListeners{Namespaces: &gatewayv1.ListenerNamespaces{From: &all}},
				Listeners: []gatewayv1.Listener{{Name: "web", Port: 80, Protocol: gatewayv1.HTTPProtocolType}}}}, metav1.CreateOptions{})
		testkit.Must(t, err)
		created := e.awaitingPlanIn("infra", "teams")
		e.examplectl(t, rosa, "approve", "gateway:infra/teams", created)
		var teamsIP string
		testkit.Eventually(t, 90*time.Second, "Gateway infra/teams programmed", func() error {
			g, err := admin.GatewayV1().Gateways("infra").Get(ctx, "teams", metav1.GetOptions{})
			if err != nil || !meta.IsStatusConditionTrue(g.Status.Conditions, "Programmed") || len(g.Status.Addresses) != 1 {
				return fmt.Errorf("%+v, %v", g.Status, err)
			}
			teamsIP = g.Status.Addresses[0].Value
			return nil
		})
		seen := e.awaitedIn("infra", "teams")
		own := &gatewayv1.ListenerSet{ObjectMeta: metav1.ObjectMeta{Name: "own"}, Spec: gatewayv1.ListenerSetSpec{
			ParentRef: gatewayv1.ParentGatewayReference{Namespace: ptr.To(gatewayv1.Namespace("infra")), Name: "teams"},
			Listeners: []gatewayv1.ListenerEntry{{Name: "alt", Port: 8082, Protocol: gatewayv1.HTTPProtocolType, Hostname: ptr.To(gatewayv1.Hostname("m.example"))}}}}
		_, err = mallory.GatewayV1().ListenerSets("team-b").Create(ctx, own, metav1.CreateOptions{})
		testkit.Must(t, err)
		id := e.awaitingPlanIn("infra", "teams", seen...)
		testkit.Must(t, e.approveObjectAs(t, malloryUser, objectref.Gateway("infra", "teams", string(gw.UID)), id, malloryUser.name))
		e.eventWith(t, "infra", "teams", "ApprovalIgnored", `"`+malloryUser.name+`" may edit ListenerSet team-b/own`)
		e.examplectl(t, rosa, "approve", "gateway:infra/teams", id)
		e.listenerSetCondition(t, admin, "team-b", "own", "Programmed", "Programmed")
		testkit.Eventually(t, 90*time.Second, "the listener on 8082 built", func() error {
			lb, err := e.cloudLB(teamsIP)
			if err != nil || !slices.ContainsFunc(lb.Listeners, func(l exampleapi.Listener) bool { return l.Port == 8082 }) {
				return fmt.Errorf("listeners %+v, %v", lb, err)
			}
			return nil
		})
		testkit.Must(t, mallory.GatewayV1().ListenerSets("team-b").Delete(ctx, "own", metav1.DeleteOptions{}))
		labelNamespace(t, e, "team-b", nil)
	})

	t.Run("a GRPCRoute is held to the host names its namespace holds, as an HTTPRoute is", func(t *testing.T) {
		ctx := testkit.Context(t) // the row's own deadline: rows share none
		// Mallory's gRPC service on alice's host name: refused, and
		// alice's fence still answers its path.
		svc := "steal.Shop"
		grpc := &gatewayv1.GRPCRoute{ObjectMeta: metav1.ObjectMeta{Name: "steal-grpc"}, Spec: gatewayv1.GRPCRouteSpec{
			CommonRouteSpec: gatewayv1.CommonRouteSpec{ParentRefs: []gatewayv1.ParentReference{{Namespace: ptr.To(gatewayv1.Namespace("infra")), Name: "gw"}}},
			Hostnames:       []gatewayv1.Hostname{"shop.example"},
			Rules: []gatewayv1.GRPCRouteRule{{Matches: []gatewayv1.GRPCRouteMatch{{Method: &gatewayv1.GRPCMethodMatch{Service: &svc}}},
				BackendRefs: []gatewayv1.GRPCBackendRef{{BackendRef: gatewayv1.BackendRef{BackendObjectReference: gatewayv1.BackendObjectReference{
					Name: "m", Port: ptr.To(gatewayv1.PortNumber(80))}}}}}}}}
		_, err := mallory.GatewayV1().GRPCRoutes("team-b").Create(ctx, grpc, metav1.CreateOptions{})
		testkit.Must(t, err)
		testkit.Eventually(t, 60*time.Second, "mallory's GRPCRoute refused its host name", func() error {
			r, err := admin.GatewayV1().GRPCRoutes("team-b").Get(ctx, "steal-grpc", metav1.GetOptions{})
			if err != nil || len(r.Status.Parents) != 1 {
				return fmt.Errorf("%+v, %v", r.Status, err)
			}
			c := meta.FindStatusCondition(r.Status.Parents[0].Conditions, "Accepted")
			if c == nil || c.Reason != "HostnameInUse" || c.ObservedGeneration != r.Generation {
				return fmt.Errorf("Accepted %+v", c)
			}
			if strings.Contains(c.Message, "team-a") {
				return fmt.Errorf("the refusal names alice's namespace: %s", c.Message)
			}
			return nil
		})
		e.routes(t, lb.ID, 80, "shop.example", "/"+svc+"/Get", 1, 404, nil)
		e.noEventMentions(t, "team-b", "team-a")
		testkit.Must(t, mallory.GatewayV1().GRPCRoutes("team-b").Delete(ctx, "steal-grpc", metav1.DeleteOptions{}))
	})

	t.Run("a re-created route keeps its host name and its TCP listener", func(t *testing.T) {
		ctx := testkit.Context(t) // the row's own deadline: rows share none
		_, err := mallory.GatewayV1().TCPRoutes("team-b").Create(ctx, dbRoute("db2", "m"), metav1.CreateOptions{})
		testkit.Must(t, err)
		parked := e.tcpRouteAccepted(t, admin, "team-b", "db2", "another namespace")
		if strings.Contains(parked, "team-a") || strings.Contains(parked, "/db") {
			t.Errorf("the parked route's status names alice's: %s", parked)
		}
		// kubectl replace --force: delete, then create.
		testkit.Must(t, alice.GatewayV1().HTTPRoutes("team-a").Delete(ctx, "shop", metav1.DeleteOptions{}))
		testkit.Must(t, alice.GatewayV1().TCPRoutes("team-a").Delete(ctx, "db", metav1.DeleteOptions{}))
		e.routeGone(t, admin, "team-a", "shop")
		shop := tenantRoute("shop", []string{"shop.example"}, rulesTo(map[string]string{"/api": "a", "/v2": "b"}))
		_, err = alice.GatewayV1().HTTPRoutes("team-a").Create(ctx, shop, metav1.CreateOptions{})
		testkit.Must(t, err)
		_, err = alice.GatewayV1().TCPRoutes("team-a").Create(ctx, dbRoute("db", "a"), metav1.CreateOptions{})
		testkit.Must(t, err)
		e.routeCondition(t, admin, "team-a", "shop", "Accepted", "Accepted", "")
		e.routeCondition(t, admin, "team-b", "steal", "Accepted", "HostnameInUse", "shop.example")
		e.tcpRouteAccepted(t, admin, "team-b", "db2", "another namespace")
		e.eventuallyRoutes(t, lb.ID, "shop.example", "/api", 200, at("a"))
		// The TCP route's rules are a plan of their own (ADR 28): until it
		// is applied the listener answers nobody, and never mallory's.
		testkit.Eventually(t, 90*time.Second, "a connection to 5432 reaching alice's Service a", func() error {
			out, err := e.api.SimulateRequests(ctx, lb.ID, exampleapi.SimulatedRequest{ListenerPort: 5432})
			if err != nil {
				return err
			}
			if out.Backends[fmt.Sprintf("%s:%d", pool, nodePorts["m"])] != 0 {
				t.Fatalf("a connection to 5432 reached mallory's parked route: %+v", out)
			}
			if out.Status != 200 || out.Backends[fmt.Sprintf("%s:%d", pool, nodePorts["a"])] != 1 {
				return fmt.Errorf("a connection to 5432: %+v", out)
			}
			return nil
		})
	})

	t.Run("the holder's ReferenceGrant lets another namespace serve its host name, and the platform is told", func(t *testing.T) {
		ctx := testkit.Context(t) // the row's own deadline: rows share none
		name := gatewayv1beta1.ObjectName("shop.example")
		_, err := alice.GatewayV1beta1().ReferenceGrants("team-a").Create(ctx, &gatewayv1beta1.ReferenceGrant{ObjectMeta: metav1.ObjectMeta{Name: "shop-for-b"},
			Spec: gatewayv1beta1.ReferenceGrantSpec{
				From: []gatewayv1beta1.ReferenceGrantFrom{{Group: gatewayv1beta1.GroupName, Kind: "HTTPRoute", Namespace: "team-b"}},
				To:   []gatewayv1beta1.ReferenceGrantTo{{Group: tenancy.GrantHostnameGroup, Kind: tenancy.GrantHostnameKind, Name: &name}},
			}}, metav1.CreateOptions{})
		testkit.Must(t, err)
		e.routeCondition(t, admin, "team-b", "steal", "Accepted", "Accepted", "")
		e.eventWith(t, "infra", "gw", "HostnameMoved", "shop.example")
		e.eventuallyRoutes(t, lb.ID, "shop.example", "/", 200, at("m"))
		e.routes(t, lb.ID, 80, "shop.example", "/api", 1, 200, at("a"))
		// Withdrawn, the host name is alice's alone again.
		testkit.Must(t, alice.GatewayV1beta1().ReferenceGrants("team-a").Delete(ctx, "shop-for-b", metav1.DeleteOptions{}))
		e.routeCondition(t, admin, "team-b", "steal", "Accepted", "HostnameInUse", "shop.example")
		e.eventuallyRoutes(t, lb.ID, "shop.example", "/", 404, nil)
	})

	// notPreviewedAlike dry-runs, as mallory, create naming each of gws
	// (a Gateway that would not take the object, one that does not
	// exist): each reads "not previewed", with no plan, in the same words,
	// so a dry run is no oracle of other namespaces' Gateways.
	notPreviewedAlike := func(t *testing.T, what string, gws [2]string, create func(dry gwclient.Interface, gw string) error) {
		warned := &preview.Collector{}
		cfg := rest.CopyConfig(malloryUser.cfg)
		cfg.WarningHandler = warned
		dry, err := gwclient.NewForConfig(cfg)
		testkit.Must(t, err)
		said := map[string]string{}
		for _, gw := range gws {
			warned.Take()
			testkit.Must(t, create(dry, gw))
			got := strings.Join(warned.Take(), "\n")
			if !strings.Contains(got, "Gateway infra/"+gw+": not previewed") || strings.Contains(got, "terraform plan") || strings.Contains(got, preview.OutcomeLine) {
				t.Errorf("the dry run of %s naming infra/%s warned:\n%s", what, gw, got)
			}
			said[gw] = strings.ReplaceAll(got, "infra/"+gw, "infra/X")
		}
		if said[gws[0]] != said[gws[1]] {
			t.Errorf("%s: a Gateway that would not take it reads unlike one that does not exist:\n%s\n%s", what, said[gws[0]], said[gws[1]])
		}
	}
	dryRun := metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}}

	t.Run("a route's dry run previews only a Gateway that would take it", func(t *testing.T) {
		ctx := testkit.Context(t) // the row's own deadline: rows share none
		// The platform's private Gateway's listener takes routes of infra
		// only.
		notPreviewedAlike(t, "a route", [2]string{"private", "ghost"}, func(dry gwclient.Interface, gw string) error {
			r := tenantRoute("probe-"+gw, []string{"probe.example"}, rulesTo(map[string]string{"/": "m"}))
			r.Spec.ParentRefs[0].Name = gatewayv1.ObjectName(gw)
			_, err := dry.GatewayV1().HTTPRoutes("team-b").Create(ctx, r, dryRun)
			return err
		})
	})

	t.Run("a ListenerSet's dry run previews only a Gateway that takes it", func(t *testing.T) {
		ctx := testkit.Context(t) // the row's own deadline: rows share none
		// The platform's Gateway takes none of team-b's ListenerSets now.
		notPreviewedAlike(t, "a ListenerSet", [2]string{"gw", "ghost"}, func(dry gwclient.Interface, gw string) error {
			s := httpsListenerSet("probe-"+gw, "probe.example", "m-tls")
			s.Spec.ParentRef.Name = gatewayv1.ObjectName(gw)
			_, err := dry.GatewayV1().ListenerSets("team-b").Create(ctx, s, dryRun)
			return err
		})
	})

	t.Run("whoever may edit the Gateway's certificate Secret or a backend Service cannot approve its plan", func(t *testing.T) {
		// sam edits Services in team-a, cora Secrets in infra; both
		// review. Neither edits a route: their approvals are not counted
		// all the same, rita's is.
		sam := e.newUser(t, "team-a", "sam")
		e.bindRole(t, "team-a", "service-editor-sam", subject("team-a", "sam"),
			rbacv1.PolicyRule{APIGroups: []string{""}, Resources: []string{"services"}, Verbs: []string{"get", "update", "patch"}})
		e.waitAllowed(t, sam, "update", "", "services", "team-a")
		cora := e.newUser(t, "infra", "cora")
		e.allowSecretEdits(t, "infra", cora)
		e.bindReviewer(t, "team-a", "sam")
		e.bindReviewer(t, "infra", "cora")
		for _, u := range []*user{sam, cora} {
			e.waitAllowed(t, u, "create", reviewapi.Group, "planapprovals", namespace)
		}
		rita := e.reviewer(t, "rita")
		annotateGateway(t, admin, map[string]string{"loadbalancer.example.com/apply-policy": "manual"})
		seen := e.awaitedIn("team-a", "shop")
		updateRoute(t, alice, "team-a", "shop", func(r *gatewayv1.HTTPRoute) {
			r.Spec.Rules = rulesTo(map[string]string{"/api": "a", "/v2": "b", "/v3": "b"})
		})
		// The route's change is its rule set's plan (ADR 28), under the
		// Gateway's policy and contributors, told on the route; an
		// approval ignored, on the Gateway only (it names the Gateway's
		// Secret).
		id := e.awaitingPlanIn("team-a", "shop", seen...)
		ref := objectref.RuleSet("infra", "gw", objectref.KindHTTPRoute, "team-a", "shop")
		for who, input := range map[*user]string{sam: "may edit Service team-a/", cora: "may edit Secret infra/shop-tls"} {
			testkit.Must(t, e.approveObjectAs(t, who, ref, id, who.name))
			e.eventWith(t, "infra", "gw", "ApprovalIgnored", fmt.Sprintf("%q %s", who.name, input))
		}
		e.noEventMentions(t, "team-a", "infra/shop-tls")
		e.routes(t, lb.ID, 80, "shop.example", "/v3", 1, 404, nil) // not applied
		e.examplectl(t, rita, "approve", ref.Arg(), id)
		e.eventuallyRoutes(t, lb.ID, "shop.example", "/v3", 200, at("b"))
		annotateGateway(t, admin, nil)
	})

	t.Run("a host name no route of its namespace serves is released after the grace", func(t *testing.T) {
		ctx := testkit.Context(t) // the row's own deadline: rows share none
		testkit.Must(t, alice.GatewayV1().HTTPRoutes("team-a").Delete(ctx, "shop", metav1.DeleteOptions{}))
		// Within the grace (20 s) mallory's route stays refused; after
		// it, it takes the host name, and the Gateway's owner is warned.
		e.eventWith(t, "infra", "gw", "HostnameMoved", "moves from namespace team-a")
		e.routeCondition(t, admin, "team-b", "steal", "Accepted", "Accepted", "")
		e.eventuallyRoutes(t, lb.ID, "shop.example", "/", 200, at("m"))
	})

	t.Run("a Gateway takes no reserved address of another namespace, says so naming nobody, and stalls no release", func(t *testing.T) {
		ctx := testkit.Context(t) // the row's own deadline: rows share none
		// Team-a's address, kept as a team keeps one; mallory's own
		// Gateway names its IP, then its id.
		addr := e.keptAddress(t, "team-a")
		own := &gatewayv1.Gateway{ObjectMeta: metav1.ObjectMeta{Name: "own"}, Spec: gatewayv1.GatewaySpec{GatewayClassName: "example",
			Addresses: []gatewayv1.GatewaySpecAddress{{Value: addr.IP}},
			Listeners: []gatewayv1.Listener{{Name: "web", Port: 8080, Protocol: gatewayv1.HTTPProtocolType}}}}
		_, err := mallory.GatewayV1().Gateways("team-b").Create(ctx, own, metav1.CreateOptions{})
		testkit.Must(t, err)
		refused := func(what string) {
			testkit.Eventually(t, 90*time.Second, "mallory's Gateway refused "+what, func() error {
				gw, err := admin.GatewayV1().Gateways("team-b").Get(ctx, "own", metav1.GetOptions{})
				if err != nil {
					return err
				}
				c := meta.FindStatusCondition(gw.Status.Conditions, "Programmed")
				if c == nil || c.Status != metav1.ConditionFalse || c.Reason != string(gatewayv1.GatewayReasonAddressNotUsable) || c.ObservedGeneration != gw.Generation {
					return fmt.Errorf("Programmed %+v", c)
				}
				if strings.Contains(c.Message, "team-a") || len(gw.Status.Addresses) != 0 {
					return fmt.Errorf("the refusal names team-a or shows an address: %q, %v", c.Message, gw.Status.Addresses)
				}
				return nil
			})
		}
		refused("by IP")
		testkit.Must(t, retry.RetryOnConflict(retry.DefaultRetry, func() error {
			gw, err := mallory.GatewayV1().Gateways("team-b").Get(ctx, "own", metav1.GetOptions{})
			if err != nil {
				return err
			}
			named := gatewayv1.NamedAddressType
			gw.Spec.Addresses = []gatewayv1.GatewaySpecAddress{{Type: &named, Value: addr.ID}}
			_, err = mallory.GatewayV1().Gateways("team-b").Update(ctx, gw, metav1.UpdateOptions{})
			return err
		}))
		refused("by id")
		e.noEventMentions(t, "team-b", "team-a")
		// In the cloud: team-a's address on no load balancer, nothing
		// answering at it.
		if a := e.addressOf(t, addr.IP); a.ID != addr.ID || a.LoadBalancerID != "" || a.Tags[exampleapi.TagNamespace] != "team-a" {
			t.Fatalf("team-a's address after mallory's Gateway: %+v", a)
		}
		if _, err := e.cloudLB(addr.IP); err == nil {
			t.Fatalf("a load balancer answers at team-a's address %s", addr.IP)
		}
		// Nor does naming it stall team-a's release of it: planned while
		// mallory's Gateway names it. A Gateway of team-a naming it (with
		// a second IPv4 address: nothing is built) stops it.
		ruth := e.reviewer(t, "ruth")
		if out := e.examplectl(t, ruth, "release", addr.IP, "--yes", "--wait=90s"); !strings.Contains(out, "The controller planned") {
			t.Fatalf("examplectl release of team-a's address mallory's Gateway names:\n%s\nwant it planned", out)
		}
		_, err = admin.GatewayV1().Gateways("team-a").Create(ctx, &gatewayv1.Gateway{ObjectMeta: metav1.ObjectMeta{Name: "two"},
			Spec: gatewayv1.GatewaySpec{GatewayClassName: "example", Addresses: []gatewayv1.GatewaySpecAddress{{Value: addr.IP}, {Value: "203.0.113.254"}},
				Listeners: []gatewayv1.Listener{{Name: "web", Port: 8081, Protocol: gatewayv1.HTTPProtocolType}}}}, metav1.CreateOptions{})
		testkit.Must(t, err)
		e.recordEventWith(t, "ReleaseRefused", addr.Name+" is not released: Gateway team-a/two names it")
		if a := e.addressOf(t, addr.IP); a.ID != addr.ID {
			t.Fatalf("team-a's address is %s after the refused release, want %s", a.ID, addr.ID)
		}
		testkit.Must(t, admin.GatewayV1().Gateways("team-a").Delete(ctx, "two", metav1.DeleteOptions{}))
		testkit.Must(t, mallory.GatewayV1().Gateways("team-b").Delete(ctx, "own", metav1.DeleteOptions{}))
	})

	t.Run("a Gateway whose finalizer is taken off does not leave its load balancer", func(t *testing.T) {
		ctx := testkit.Context(t) // the row's own deadline: rows share none
		var private string
		testkit.Eventually(t, 90*time.Second, "the private Gateway programmed", func() error {
			gw, err := admin.GatewayV1().Gateways("infra").Get(ctx, "private", metav1.GetOptions{})
			if err != nil || !meta.IsStatusConditionTrue(gw.Status.Conditions, "Programmed") || len(gw.Status.Addresses) != 1 || len(gw.Finalizers) == 0 {
				return fmt.Errorf("%+v, %v", gw, err)
			}
			private = gw.Status.Addresses[0].Value
			return nil
		})
		testkit.Must(t, retry.RetryOnConflict(retry.DefaultRetry, func() error {
			gw, err := admin.GatewayV1().Gateways("infra").Get(ctx, "private", metav1.GetOptions{})
			if err != nil {
				return err
			}
			gw.Finalizers = nil
			_, err = admin.GatewayV1().Gateways("infra").Update(ctx, gw, metav1.UpdateOptions{})
			return err
		}))
		testkit.Must(t, admin.GatewayV1().Gateways("infra").Delete(ctx, "private", metav1.DeleteOptions{}))
		testkit.Eventually(t, 90*time.Second, "the private Gateway's load balancer destroyed", func() error {
			if _, err := e.cloudLB(private); err == nil {
				return fmt.Errorf("load balancer at %s still there", private)
			}
			return nil
		})
		if _, err := e.cloudLB(ip); err != nil {
			t.Errorf("the shared Gateway's load balancer: %v", err)
		}
	})
}

// labelNamespace sets namespace ns's labels (admin).
func labelNamespace(t testing.TB, e *env, ns string, labels map[string]string) {
	t.Helper()
	testkit.Must(t, retry.RetryOnConflict(retry.DefaultRetry, func() error {
		n, err := e.kube.CoreV1().Namespaces().Get(testkit.Context(t), ns, metav1.GetOptions{})
		if err != nil {
			return err
		}
		n.Labels = labels
		_, err = e.kube.CoreV1().Namespaces().Update(testkit.Context(t), n, metav1.UpdateOptions{})
		return err
	}))
}

// gatewayAddress waits until Gateway ns/gw is Programmed with an
// address, and returns it.
func (e *env) gatewayAddress(t testing.TB, admin gwclient.Interface, ns string) string {
	t.Helper()
	var ip string
	testkit.Eventually(t, 90*time.Second, "the Gateway programmed", func() error {
		gw, err := admin.GatewayV1().Gateways(ns).Get(testkit.Context(t), "gw", metav1.GetOptions{})
		if err != nil || !meta.IsStatusConditionTrue(gw.Status.Conditions, "Programmed") || len(gw.Status.Addresses) != 1 {
			return fmt.Errorf("%+v, %v", gw.Status, err)
		}
		ip = gw.Status.Addresses[0].Value
		return nil
	})
	return ip
}

// routeCondition waits until HTTPRoute ns/name's one parent status has
// condition typ with reason, its message containing text, at the route's
// generation, and returns it.
func (e *env) routeCondition(t testing.TB, admin gwclient.Interface, ns, name, typ, reason, text string) metav1.Condition {
	t.Helper()
	var out metav1.Condition
	testkit.Eventually(t, 60*time.Second, fmt.Sprintf("route %s/%s %s %s", ns, name, typ, reason), func() error {
		r, err := admin.GatewayV1().HTTPRoutes(ns).Get(testkit.Context(t), name, metav1.GetOptions{})
		if err != nil || len(r.Status.Parents) != 1 {
			return fmt.Errorf("%+v, %v", r.Status, err)
		}
		c := meta.FindStatusCondition(r.Status.Parents[0].Conditions, typ)
		if c == nil || c.Reason != reason || !strings.Contains(c.Message, text) || c.ObservedGeneration != r.Generation {
			return fmt.Errorf("conditions %+v", r.Status.Parents[0].Conditions)
		}
		out = *c
		return nil
	})
	return out
}

// tcpRouteAccepted waits until TCPRoute ns/name is Accepted with a
// message containing text, and returns the message.
func (e *env) tcpRouteAccepted(t testing.TB, admin gwclient.Interface, ns, name, text string) string {
	t.Helper()
	var msg string
	testkit.Eventually(t, 60*time.Second, fmt.Sprintf("TCPRoute %s/%s accepted (%s)", ns, name, text), func() error {
		r, err := admin.GatewayV1().TCPRoutes(ns).Get(testkit.Context(t), name, metav1.GetOptions{})
		if err != nil || len(r.Status.Parents) != 1 {
			return fmt.Errorf("%+v, %v", r.Status, err)
		}
		c := meta.FindStatusCondition(r.Status.Parents[0].Conditions, "Accepted")
		if c == nil || c.Status != metav1.ConditionTrue || !strings.Contains(c.Message, text) {
			return fmt.Errorf("conditions %+v", r.Status.Parents[0].Conditions)
		}
		msg = c.Message
		return nil
	})
	return msg
}

// routeGone waits until HTTPRoute ns/name is gone.
func (e *env) routeGone(t testing.TB, admin gwclient.Interface, ns, name string) {
	t.Helper()
	testkit.Eventually(t, 30*time.Second, "route "+ns+"/"+name+" gone", func() error {
		if _, err := admin.GatewayV1().HTTPRoutes(ns).Get(testkit.Context(t), name, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
			return fmt.Errorf("still there (%v)", err)
		}
		return nil
	})
}

// updateRoute edits HTTPRoute ns/name as u.
func updateRoute(t testing.TB, u gwclient.Interface, ns, name string, edit func(*gatewayv1.HTTPRoute)) {
	t.Helper()
	testkit.Eventually(t, 30*time.Second, "route "+ns+"/"+name+" updated", func() error {
		r, err := u.GatewayV1().HTTPRoutes(ns).Get(testkit.Context(t), name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		edit(r)
		_, err = u.GatewayV1().HTTPRoutes(ns).Update(testkit.Context(t), r, metav1.UpdateOptions{})
		return err
	})
}

// tenantRoute is an HTTPRoute on Gateway infra/gw with host names and
// rules.
func tenantRoute(name string, hosts []string, rules []gatewayv1.HTTPRouteRule) *gatewayv1.HTTPRoute {
	r := &gatewayv1.HTTPRoute{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: gatewayv1.HTTPRouteSpec{
		CommonRouteSpec: gatewayv1.CommonRouteSpec{ParentRefs: []gatewayv1.ParentReference{{Name: "gw", Namespace: ptr.To(gatewayv1.Namespace("infra"))}}},
		Rules:           rules}}
	for _, h := range hosts {
		r.Spec.Hostnames = append(r.Spec.Hostnames, gatewayv1.Hostname(h))
	}
	return r
}

// rulesTo are one rule per path prefix, to the route's Service named.
func rulesTo(paths map[string]string) []gatewayv1.HTTPRouteRule {
	var out []gatewayv1.HTTPRouteRule
	for _, p := range slices.Sorted(maps.Keys(paths)) {
		out = append(out, gatewayv1.HTTPRouteRule{Matches: []gatewayv1.HTTPRouteMatch{pathPrefix(p)},
			BackendRefs: []gatewayv1.HTTPBackendRef{backend("", paths[p], 1)}})
	}
	return out
}

// dbRoute is a TCPRoute on listener db of Gateway infra/gw to the
// route's Service svc.
func dbRoute(name, svc string) *gatewayv1.TCPRoute {
	return &gatewayv1.TCPRoute{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: gatewayv1.TCPRouteSpec{
		CommonRouteSpec: gatewayv1.CommonRouteSpec{ParentRefs: []gatewayv1.ParentReference{{Name: "gw", Namespace: ptr.To(gatewayv1.Namespace("infra")),
			SectionName: ptr.To(gatewayv1.SectionName("db"))}}},
		Rules: []gatewayv1.TCPRouteRule{{BackendRefs: []gatewayv1.BackendRef{{BackendObjectReference: gatewayv1.BackendObjectReference{
			Name: gatewayv1.ObjectName(svc), Port: ptr.To(gatewayv1.PortNumber(80))}}}}}}}
}
