package e2e

import (
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
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
	"github.com/example/cloud-provider-example/gatewaycontroller"
	"github.com/example/cloud-provider-example/internal/testkit"
	"github.com/example/cloud-provider-example/objectref"
	"github.com/example/cloud-provider-example/preview"
	"github.com/example/cloud-provider-example/reviewapi"
	"github.com/example/cloud-provider-example/simulator/simtest"
)

// gatewayTenant is a tenant of ns who may write the Gateway API objects
// of resources there (and nothing else), with a client as itself.
func (e *env) gatewayTenant(t testing.TB, ns, name string, resources ...string) (*user, gwclient.Interface) {
	t.Helper()
	u := e.newUser(t, ns, name)
	e.bindRole(t, ns, "gateway-tenant-"+name, subject(ns, name), rbacv1.PolicyRule{APIGroups: []string{gatewayv1.GroupName}, Resources: resources,
		Verbs: []string{"get", "list", "watch", "create", "update", "patch", "delete"}})
	for _, r := range resources {
		e.waitAllowed(t, u, "create", gatewayv1.GroupName, r, ns)
	}
	gw, err := gwclient.NewForConfig(u.cfg)
	testkit.Must(t, err)
	return u, gw
}

// The Gateway API front-end in the real controller, with exactly the
// chart's RBAC for it and real identities:
//   - the platform's GatewayClass is Accepted; its Gateway, whose listener
//     takes routes of labelled namespaces, is Accepted and Programmed with
//     its load balancer's address;
//   - alice's route of team-a (labelled) is Accepted, and the simulator
//     routes Host a.example /api to Service a, /web 80/20 to b and c;
//   - mallory's route of team-b is NotAllowedByListeners until team-b is
//     labelled; then its backend, alice's Service c, is RefNotPermitted and
//     the cloud sends its path nowhere (500), until alice's ReferenceGrant
//     lets it in;
//   - under the manual policy, mallory's route change waits for approval;
//     mallory, a reviewer too, may edit the route, so her approval is not
//     counted; rita's is, and the change is applied;
//   - the Gateway deleted, its load balancer is destroyed.
func TestGatewayProgrammed(t *testing.T) {
	t.Parallel()
	e, admin := gatewayEnv(t, options{tlsResync: "1s"})
	ctx := testkit.Context(t)
	for ns, labels := range map[string]map[string]string{"infra": nil, "team-a": {"gateway-access": "yes"}, "team-b": nil} {
		_, err := e.kube.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns, Labels: labels}}, metav1.CreateOptions{})
		testkit.Must(t, err)
	}
	nodePorts := map[string]int32{}
	for _, name := range []string{"a", "b", "c"} {
		nodePorts[name] = e.nodePortBackend(t, "team-a", name, corev1.ServicePort{Port: 80}).Spec.Ports[0].NodePort
	}
	exampleGatewayClass(t, admin)
	// The platform's certificate, in the Gateway's namespace (the
	// controller may read Secrets there); another, of team-a, that the
	// Gateway may not use without team-a's grant.
	e.allowTLSSecrets(t, "infra")
	e.allowTLSSecrets(t, "team-a")
	cert := simtest.NewCert(t, simtest.CertOptions{CommonName: "a.example"})
	_, err := e.kube.CoreV1().Secrets("infra").Create(ctx, tlsSecretObject("infra", "shop-tls", cert), metav1.CreateOptions{})
	testkit.Must(t, err)
	_, err = e.kube.CoreV1().Secrets("team-a").Create(ctx, tlsSecretObject("team-a", "team-tls", simtest.NewCert(t, simtest.CertOptions{})), metav1.CreateOptions{})
	testkit.Must(t, err)
	from := gatewayv1.NamespacesFromSelector
	allowed := &gatewayv1.AllowedRoutes{Namespaces: &gatewayv1.RouteNamespaces{From: &from,
		Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"gateway-access": "yes"}}}}
	tls := func(ns, name string) *gatewayv1.ListenerTLSConfig {
		ref := gatewayv1.SecretObjectReference{Name: gatewayv1.ObjectName(name)}
		if ns != "" {
			ref.Namespace = ptr.To(gatewayv1.Namespace(ns))
		}
		return &gatewayv1.ListenerTLSConfig{CertificateRefs: []gatewayv1.SecretObjectReference{ref}}
	}
	_, err = admin.GatewayV1().Gateways("infra").Create(ctx, &gatewayv1.Gateway{ObjectMeta: metav1.ObjectMeta{Name: "gw"},
		Spec: gatewayv1.GatewaySpec{GatewayClassName: "example", Listeners: []gatewayv1.Listener{
			{Name: "http", Port: 80, Protocol: gatewayv1.HTTPProtocolType, AllowedRoutes: allowed},
			{Name: "https", Port: 443, Protocol: gatewayv1.HTTPSProtocolType, AllowedRoutes: allowed, TLS: tls("", "shop-tls")},
			{Name: "https-team", Port: 8443, Protocol: gatewayv1.HTTPSProtocolType, AllowedRoutes: allowed, TLS: tls("team-a", "team-tls")},
		}}}, metav1.CreateOptions{})
	testkit.Must(t, err)
	_, alice := e.gatewayTenant(t, "team-a", "alice", "httproutes", "referencegrants")
	mallory, malloryGW := e.gatewayTenant(t, "team-b", "mallory", "httproutes", "referencegrants")
	_, err = alice.GatewayV1().HTTPRoutes("team-a").Create(ctx, shopRoute(), metav1.CreateOptions{})
	testkit.Must(t, err)
	_, err = malloryGW.GatewayV1().HTTPRoutes("team-b").Create(ctx, crossRoute("/b"), metav1.CreateOptions{})
	testkit.Must(t, err)

	testkit.Eventually(t, 60*time.Second, "the class accepted", func() error {
		gc, err := admin.GatewayV1().GatewayClasses().Get(ctx, "example", metav1.GetOptions{})
		if err != nil || !meta.IsStatusConditionTrue(gc.Status.Conditions, "Accepted") {
			return fmt.Errorf("%+v, %v", gc.Status, err)
		}
		return nil
	})
	ip := e.programmed(t, admin, 1)
	e.routeParent(t, admin, "team-a", "shop", "Accepted", "ResolvedRefs")
	e.routeParent(t, admin, "team-b", "cross", "NotAllowedByListeners", "RefNotPermitted")
	lb, err := e.cloudLB(ip)
	testkit.Must(t, err)
	pool := e.everyNodesPool(t)
	at := func(svc string) string { return fmt.Sprintf("%s:%d", pool, nodePorts[svc]) }
	for _, port := range []int{80, 443} {
		e.routes(t, lb.ID, port, "a.example", "/api/v1", 10, 200, map[string]int{at("a"): 10})
		e.routes(t, lb.ID, port, "a.example", "/web", 100, 200, map[string]int{at("b"): 80, at("c"): 20})
		e.routes(t, lb.ID, port, "b.example", "/api", 1, 404, nil) // the route's host names only
	}
	// The https listener serves the Secret's certificate; the listener
	// naming team-a's Secret without its grant is not built.
	var served []string
	for _, l := range lb.Listeners {
		if l.Protocol == "https" {
			served = append(served, fmt.Sprint(l.Port))
			if len(l.CertificateIDs) != 1 {
				t.Fatalf("https listener %+v, want one certificate", l)
			}
			c, err := e.api.GetCertificate(ctx, l.CertificateIDs[0])
			testkit.Must(t, err)
			if c.Fingerprint != cert.Fingerprint {
				t.Errorf("port %d serves certificate %s, not the Secret's", l.Port, c.Fingerprint)
			}
		}
	}
	if !slices.Equal(served, []string{"443"}) {
		t.Errorf("https listeners on ports %v, want 443 only", served)
	}
	// Renewed, the Secret's new certificate is served (Secrets are read
	// again every tlsSecrets.resyncInterval).
	renewed := simtest.NewCert(t, simtest.CertOptions{CommonName: "a.example"})
	renewTLSSecret(t, e.kube, "infra", "shop-tls", renewed)
	testkit.Eventually(t, 90*time.Second, "the renewed certificate served", func() error {
		lb, err := e.cloudLB(ip)
		if err != nil {
			return err
		}
		for _, l := range lb.Listeners {
			if l.Protocol == "https" && len(l.CertificateIDs) == 1 {
				c, err := e.api.GetCertificate(ctx, l.CertificateIDs[0])
				if err != nil || c.Fingerprint != renewed.Fingerprint {
					return fmt.Errorf("serves %v (%v)", l.CertificateIDs, err)
				}
				return nil
			}
		}
		return fmt.Errorf("no https listener: %+v", lb.Listeners)
	})

	// mallory's namespace labelled, her route attaches; its backend, in
	// team-a, is refused: nothing in the cloud sends to it.
	ns, err := e.kube.CoreV1().Namespaces().Get(ctx, "team-b", metav1.GetOptions{})
	testkit.Must(t, err)
	ns.Labels = map[string]string{"gateway-access": "yes"}
	_, err = e.kube.CoreV1().Namespaces().Update(ctx, ns, metav1.UpdateOptions{})
	testkit.Must(t, err)
	e.routeParent(t, admin, "team-b", "cross", "Accepted", "RefNotPermitted")
	e.programmed(t, admin, 2)
	e.eventuallyRoutes(t, lb.ID, "any.example", "/b", 500, nil)
	e.routes(t, lb.ID, 443, "any.example", "/b", 1, 500, nil)
	svc := gatewayv1beta1.ObjectName("c")
	_, err = alice.GatewayV1beta1().ReferenceGrants("team-a").Create(ctx, &gatewayv1beta1.ReferenceGrant{ObjectMeta: metav1.ObjectMeta{Name: "routes-of-b"},
		Spec: gatewayv1beta1.ReferenceGrantSpec{
			From: []gatewayv1beta1.ReferenceGrantFrom{{Group: gatewayv1beta1.GroupName, Kind: "HTTPRoute", Namespace: "team-b"}},
			To:   []gatewayv1beta1.ReferenceGrantTo{{Group: "", Kind: "Service", Name: &svc}},
		}}, metav1.CreateOptions{})
	testkit.Must(t, err)
	e.routeParent(t, admin, "team-b", "cross", "Accepted", "ResolvedRefs")
	e.eventuallyRoutes(t, lb.ID, "any.example", "/b", 200, map[string]int{at("c"): 1})

	// Under the manual policy, mallory's change waits; she may edit her
	// route, so her approval is not counted; rita's is.
	annotateGateway(t, admin, map[string]string{"loadbalancer.example.com/apply-policy": "manual"})
	e.bindReviewer(t, "team-b", "mallory")
	e.waitAllowed(t, mallory, "create", reviewapi.Group, "planapprovals", namespace)
	rita := e.reviewer(t, "rita")
	// Her dry run prints the preview: the plan, held by the policy.
	cfg := rest.CopyConfig(mallory.cfg)
	warned := &preview.Collector{}
	cfg.WarningHandler = warned
	dry, err := gwclient.NewForConfig(cfg)
	testkit.Must(t, err)
	testkit.Eventually(t, 30*time.Second, "the preview of mallory's route change", func() error {
		r, err := dry.GatewayV1().HTTPRoutes("team-b").Get(ctx, "cross", metav1.GetOptions{})
		if err != nil {
			return err
		}
		r.Spec = crossRoute("/b2").Spec
		warned.Take()
		if _, err := dry.GatewayV1().HTTPRoutes("team-b").Update(ctx, r, metav1.UpdateOptions{DryRun: []string{metav1.DryRunAll}}); err != nil {
			return err
		}
		got := strings.Join(warned.Take(), "\n")
		// The route's rules are its rule set's (ADR 28): its plan is
		// that set's, the load balancer's unchanged.
		for _, want := range []string{"Gateway infra/gw: the rules of HTTPRoute team-b/cross: cloud change (terraform plan): +0 ~1 -0",
			"Gateway infra/gw: the rules of HTTPRoute team-b/cross: apply policy manual", preview.OutcomeLine + "needs-approval"} {
			if !strings.Contains(got, want) {
				return fmt.Errorf("warnings without %q:\n%s", want, got)
			}
		}
		return nil
	})
	if r, err := malloryGW.GatewayV1().HTTPRoutes("team-b").Get(ctx, "cross", metav1.GetOptions{}); err != nil || *r.Spec.Rules[0].Matches[0].Path.Value != "/b" {
		t.Fatalf("after the dry run: %v, %v; want the route unchanged", r, err)
	}
	setCrossPath(t, malloryGW, "/b2")
	// Her route's rule set's plan waits, told on her route (ADR 28), by
	// the UID kubectl describe finds its events by; the load balancer
	// serves on, the Gateway programmed, its address kept.
	id := e.awaitingPlanIn("team-b", "cross")
	cross, err := malloryGW.GatewayV1().HTTPRoutes("team-b").Get(ctx, "cross", metav1.GetOptions{})
	testkit.Must(t, err)
	for _, ev := range e.eventsIn("team-b", "cross", "AwaitingApproval") {
		if o := ev.InvolvedObject; o.Kind != "HTTPRoute" || o.UID != cross.UID {
			t.Errorf("AwaitingApproval on %+v; want HTTPRoute team-b/cross of UID %s", o, cross.UID)
		}
	}
	routeRules(t, malloryGW, "team-b", "cross", gatewaycontroller.RulesAwaitingApproval, id)
	testkit.Eventually(t, 30*time.Second, "the Gateway programmed, its address kept", func() error {
		g, err := admin.GatewayV1().Gateways("infra").Get(ctx, "gw", metav1.GetOptions{})
		if c := meta.FindStatusCondition(g.Status.Conditions, "Programmed"); err != nil || c == nil || c.Reason != "Programmed" ||
			len(g.Status.Addresses) != 1 || g.Status.Addresses[0].Value != ip {
			return fmt.Errorf("%+v, %v", g.Status, err)
		}
		return nil
	})
	ref := objectref.RuleSet("infra", "gw", objectref.KindHTTPRoute, "team-b", "cross")
	testkit.Must(t, e.approveObjectAs(t, mallory, ref, id, mallory.name))
	e.eventWith(t, "infra", "gw", "ApprovalIgnored", `"`+mallory.name+`" may edit HTTPRoute team-b/cross, whose editor cannot be verified`)
	e.routes(t, lb.ID, 80, "any.example", "/b2", 1, 404, nil) // not applied
	e.examplectl(t, rita, "approve", ref.Arg(), id)
	e.eventuallyRoutes(t, lb.ID, "any.example", "/b2", 200, map[string]int{at("c"): 1})
	e.eventWith(t, "team-b", "cross", "Applied", id+" (+0 ~1 -0) approved by "+rita.name)
	routeRules(t, malloryGW, "team-b", "cross", gatewaycontroller.RulesApplied, "applied")
	e.auditLine(t, "apply", id, rita.name)
	if out := e.examplectl(t, rita, "history", ref.Arg()); !strings.Contains(out, id) {
		t.Errorf("examplectl history %s does not list %s:\n%s", ref.Arg(), id, out)
	}

	// The annotation gone, the cluster's auto policy applies: mallory's
	// next change goes through without a review. Deleted, the Gateway's
	// load balancer goes, its destroy under that policy too: the
	// Gateway's last plan was made under it (a destroy is reviewed under
	// the stricter of the Gateway's policy and its last plan's, so a
	// Gateway deleted before the controller planned it anew waits for an
	// approval; under load the two events reached it as one).
	annotateGateway(t, admin, nil)
	setCrossPath(t, malloryGW, "/b")
	e.eventuallyRoutes(t, lb.ID, "any.example", "/b", 200, map[string]int{at("c"): 1})
	testkit.Must(t, admin.GatewayV1().Gateways("infra").Delete(ctx, "gw", metav1.DeleteOptions{}))
	testkit.Eventually(t, 90*time.Second, "the Gateway and its load balancer gone", func() error {
		if _, err := admin.GatewayV1().Gateways("infra").Get(ctx, "gw", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
			return fmt.Errorf("Gateway still there (%v)", err)
		}
		if _, err := e.cloudLB(ip); err == nil {
			return fmt.Errorf("load balancer %s still there", lb.ID)
		}
		return nil
	})
}

// annotateGateway gives Gateway infra/gw these annotations (the
// controller writes its status meanwhile: conflicts are retried).
// gatewayEnv is an env of the Gateway API front-end and its webhooks
// (o's other options as given), with node-a, and the admin's Gateway
// API client.
func gatewayEnv(t testing.TB, o options) (*env, gwclient.Interface) {
	t.Helper()
	o.gatewayAPI, o.webhook = true, true
	e := newEnv(t, o)
	e.nodeA()
	e.installWebhooks(t, 15)
	admin, err := gwclient.NewForConfig(e.cluster.Admin)
	testkit.Must(t, err)
	return e, admin
}

// exampleGatewayClass creates the GatewayClass "example", of this
// controller.
func exampleGatewayClass(t testing.TB, admin gwclient.Interface) {
	t.Helper()
	_, err := admin.GatewayV1().GatewayClasses().Create(testkit.Context(t), &gatewayv1.GatewayClass{ObjectMeta: metav1.ObjectMeta{Name: "example"},
		Spec: gatewayv1.GatewayClassSpec{ControllerName: gatewaycontroller.ControllerName}}, metav1.CreateOptions{})
	testkit.Must(t, err)
}

// nodePortBackend creates a NodePort Service of ports in ns: a Gateway's
// backend, which its load balancer reaches by node port.
func (e *env) nodePortBackend(t testing.TB, ns, name string, ports ...corev1.ServicePort) *corev1.Service {
	t.Helper()
	svc, err := e.kube.CoreV1().Services(ns).Create(testkit.Context(t), &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: corev1.ServiceSpec{Type: corev1.ServiceTypeNodePort, Ports: ports}}, metav1.CreateOptions{})
	testkit.Must(t, err)
	return svc
}

func annotateGateway(t testing.TB, admin gwclient.Interface, ann map[string]string) *gatewayv1.Gateway {
	t.Helper()
	var out *gatewayv1.Gateway
	testkit.Must(t, retry.RetryOnConflict(retry.DefaultRetry, func() error {
		gw, err := admin.GatewayV1().Gateways("infra").Get(testkit.Context(t), "gw", metav1.GetOptions{})
		if err != nil {
			return err
		}
		gw.Annotations = ann
		out, err = admin.GatewayV1().Gateways("infra").Update(testkit.Context(t), gw, metav1.UpdateOptions{})
		return err
	}))
	return out
}

// shopRoute is alice's HTTPRoute team-a/shop on Gateway infra/gw: Host
// a.example, /api to Service a, /web 80/20 to b and c.
func shopRoute() *gatewayv1.HTTPRoute {
	return &gatewayv1.HTTPRoute{ObjectMeta: metav1.ObjectMeta{Name: "shop"},
		Spec: gatewayv1.HTTPRouteSpec{
			CommonRouteSpec: gatewayv1.CommonRouteSpec{ParentRefs: []gatewayv1.ParentReference{{Name: "gw", Namespace: ptr.To(gatewayv1.Namespace("infra"))}}},
			Hostnames:       []gatewayv1.Hostname{"a.example"},
			Rules: []gatewayv1.HTTPRouteRule{
				{Matches: []gatewayv1.HTTPRouteMatch{pathPrefix("/api")}, BackendRefs: []gatewayv1.HTTPBackendRef{backend("", "a", 1)}},
				{Matches: []gatewayv1.HTTPRouteMatch{pathPrefix("/web")}, BackendRefs: []gatewayv1.HTTPBackendRef{backend("", "b", 80), backend("", "c", 20)}},
			},
		}}
}

// setCrossPath changes the path of mallory's route team-b/cross, as she
// can.
func setCrossPath(t testing.TB, mallory gwclient.Interface, path string) {
	t.Helper()
	testkit.Eventually(t, 30*time.Second, "mallory's route changed to "+path, func() error {
		r, err := mallory.GatewayV1().HTTPRoutes("team-b").Get(testkit.Context(t), "cross", metav1.GetOptions{})
		if err != nil {
			return err
		}
		r.Spec = crossRoute(path).Spec
		_, err = mallory.GatewayV1().HTTPRoutes("team-b").Update(testkit.Context(t), r, metav1.UpdateOptions{})
		return err
	})
}

// crossRoute is mallory's HTTPRoute team-b/cross on Gateway infra/gw:
// path to team-a's Service c.
func crossRoute(path string) *gatewayv1.HTTPRoute {
	return &gatewayv1.HTTPRoute{ObjectMeta: metav1.ObjectMeta{Name: "cross"},
		Spec: gatewayv1.HTTPRouteSpec{
			CommonRouteSpec: gatewayv1.CommonRouteSpec{ParentRefs: []gatewayv1.ParentReference{{Name: "gw", Namespace: ptr.To(gatewayv1.Namespace("infra"))}}},
			Rules: []gatewayv1.HTTPRouteRule{{Matches: []gatewayv1.HTTPRouteMatch{pathPrefix(path)},
				BackendRefs: []gatewayv1.HTTPBackendRef{backend("team-a", "c", 1)}}},
		}}
}

func pathPrefix(p string) gatewayv1.HTTPRouteMatch {
	return gatewayv1.HTTPRouteMatch{Path: &gatewayv1.HTTPPathMatch{Type: ptr.To(gatewayv1.PathMatchPathPrefix), Value: ptr.To(p)}}
}

// backend is a backendRef to Service name (of namespace ns, "" for the
// route's) port 80 with weight.
func backend(ns, name string, weight int32) gatewayv1.HTTPBackendRef {
	ref := gatewayv1.HTTPBackendRef{BackendRef: gatewayv1.BackendRef{Weight: &weight,
		BackendObjectReference: gatewayv1.BackendObjectReference{Name: gatewayv1.ObjectName(name), Port: ptr.To(gatewayv1.PortNumber(80))}}}
	if ns != "" {
		ref.Namespace = ptr.To(gatewayv1.Namespace(ns))
	}
	return ref
}

// examplectl runs examplectl as u with args, and returns its output.
func (e *env) examplectl(t testing.TB, u *user, args ...string) string {
	t.Helper()
	cmd := exec.Command(filepath.Join(os.Getenv("EXAMPLE_BIN"), "examplectl"), append(args, "--kubeconfig", u.kubeconfig)...)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("examplectl %s as %s: %v\n%s", strings.Join(args, " "), u.name, err, out)
	}
	return string(out)
}

// programmed waits until Gateway infra/gw is Accepted and Programmed with
// an address, its listeners http and https Programmed and counting
// attached routes, and https-team (a Secret of team-a, not granted) not
// built, RefNotPermitted; it returns the address.
func (e *env) programmed(t testing.TB, admin gwclient.Interface, attached int32) string {
	t.Helper()
	var ip string
	testkit.Eventually(t, 90*time.Second, fmt.Sprintf("the Gateway programmed with %d routes", attached), func() error {
		gw, err := admin.GatewayV1().Gateways("infra").Get(testkit.Context(t), "gw", metav1.GetOptions{})
		if err != nil || !meta.IsStatusConditionTrue(gw.Status.Conditions, "Accepted") || !meta.IsStatusConditionTrue(gw.Status.Conditions, "Programmed") ||
			len(gw.Status.Addresses) != 1 || len(gw.Status.Listeners) != 3 {
			return fmt.Errorf("%+v, %v", gw.Status, err)
		}
		for _, l := range gw.Status.Listeners {
			programmed := meta.IsStatusConditionTrue(l.Conditions, "Programmed")
			refs := meta.FindStatusCondition(l.Conditions, "ResolvedRefs")
			switch {
			case l.AttachedRoutes != attached:
				return fmt.Errorf("listener %s: %d routes", l.Name, l.AttachedRoutes)
			case l.Name == "https-team" && (programmed || refs == nil || refs.Reason != "RefNotPermitted"):
				return fmt.Errorf("listener %s: %+v, want RefNotPermitted and not Programmed", l.Name, l.Conditions)
			case l.Name != "https-team" && (!programmed || refs == nil || refs.Status != metav1.ConditionTrue):
				return fmt.Errorf("listener %s: %+v, want Programmed", l.Name, l.Conditions)
			}
		}
		ip = gw.Status.Addresses[0].Value
		return nil
	})
	return ip
}

// everyNodesPool is the id of the target pool of every node: the only
// pool, no Service selecting nodes.
func (e *env) everyNodesPool(t testing.TB) string {
	t.Helper()
	pools := e.pools()
	if len(pools) != 1 {
		t.Fatalf("target pools %+v, want the one of every node", pools)
	}
	return pools[0].ID
}

// routes sends count simulated requests to load balancer id's port and
// checks the answer's status and the requests each backend got.
func (e *env) routes(t testing.TB, id string, port int, host, path string, count, status int, want map[string]int) {
	t.Helper()
	if err := e.routed(t, id, port, host, path, count, status, want); err != nil {
		t.Error(err)
	}
}

// eventuallyRoutes waits until one request to port 80 is answered so.
func (e *env) eventuallyRoutes(t testing.TB, id, host, path string, status int, want map[string]int) {
	t.Helper()
	testkit.Eventually(t, 90*time.Second, fmt.Sprintf("%s%s answered %d", host, path, status), func() error {
		return e.routed(t, id, 80, host, path, 1, status, want)
	})
}

func (e *env) routed(t testing.TB, id string, port int, host, path string, count, status int, want map[string]int) error {
	out, err := e.api.SimulateRequests(testkit.Context(t), id, exampleapi.SimulatedRequest{ListenerPort: port, Host: host, Path: path, Count: count})
	if err != nil {
		return err
	}
	if out.Status != status || !maps.Equal(out.Backends, want) {
		return fmt.Errorf("%d requests to %s%s: %+v, want %d %v", count, host, path, out, status, want)
	}
	return nil
}

// routeRules waits until HTTPRoute ns/name's status for its one parent
// says its rules stand at reason (gatewaycontroller.RulesProgrammed), at
// the route's generation, with a message saying has; read as the route's
// author, who may read their route.
func routeRules(t testing.TB, as gwclient.Interface, ns, name, reason, has string) {
	t.Helper()
	testkit.Eventually(t, 60*time.Second, fmt.Sprintf("route %s/%s's rules %s", ns, name, reason), func() error {
		r, err := as.GatewayV1().HTTPRoutes(ns).Get(testkit.Context(t), name, metav1.GetOptions{})
		if err != nil || len(r.Status.Parents) != 1 {
			return fmt.Errorf("%+v, %v", r.Status, err)
		}
		c := meta.FindStatusCondition(r.Status.Parents[0].Conditions, gatewaycontroller.RulesProgrammed)
		if c == nil || c.Reason != reason || c.ObservedGeneration != r.Generation || !strings.Contains(c.Message, has) {
			return fmt.Errorf("conditions %+v at generation %d", r.Status.Parents[0].Conditions, r.Generation)
		}
		return nil
	})
}

// routeParent waits until route ns/name's parent status has these
// Accepted and ResolvedRefs reasons.
func (e *env) routeParent(t testing.TB, admin gwclient.Interface, ns, name, accepted, resolved string) {
	t.Helper()
	testkit.Eventually(t, 60*time.Second, fmt.Sprintf("route %s/%s %s, %s", ns, name, accepted, resolved), func() error {
		r, err := admin.GatewayV1().HTTPRoutes(ns).Get(testkit.Context(t), name, metav1.GetOptions{})
		if err != nil || len(r.Status.Parents) != 1 {
			return fmt.Errorf("%+v, %v", r.Status, err)
		}
		a := meta.FindStatusCondition(r.Status.Parents[0].Conditions, "Accepted")
		rr := meta.FindStatusCondition(r.Status.Parents[0].Conditions, "ResolvedRefs")
		if a == nil || rr == nil || a.Reason != accepted || rr.Reason != resolved {
			return fmt.Errorf("conditions %+v", r.Status.Parents[0].Conditions)
		}
		return nil
	})
}
