package e2e

import (
	"fmt"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"
	gatewayv1beta1 "sigs.k8s.io/gateway-api/apis/v1beta1"
	gwclient "sigs.k8s.io/gateway-api/pkg/client/clientset/versioned"

	"github.com/example/cloud-provider-example/gatewaycontroller"
	"github.com/example/cloud-provider-example/internal/testkit"
)

// gatewayTenant is a tenant of ns who may write the Gateway API objects
// of resources there (and nothing else), with a client as itself.
func (e *env) gatewayTenant(t testing.TB, ns, name string, resources ...string) gwclient.Interface {
	t.Helper()
	u := e.newUser(t, ns, name)
	e.bindRole(t, ns, "gateway-tenant-"+name, subject(ns, name), rbacv1.PolicyRule{APIGroups: []string{gatewayv1.GroupName}, Resources: resources,
		Verbs: []string{"get", "list", "watch", "create", "update", "patch", "delete"}})
	for _, r := range resources {
		e.waitAllowed(t, u, "create", gatewayv1.GroupName, r, ns)
	}
	gw, err := gwclient.NewForConfig(u.cfg)
	testkit.Must(t, err)
	return gw
}

// The Gateway API front-end in the real controller, with exactly the
// chart's RBAC for it: the platform's GatewayClass is Accepted; a Gateway
// whose listener takes routes of labelled namespaces is Accepted (not
// Programmed yet) and counts the route a tenant of such a namespace
// wrote, which is Accepted; another tenant's route, of a namespace
// without the label, is NotAllowedByListeners. Tenancy: a route's backend
// in another namespace is RefNotPermitted until that namespace's owner
// writes a ReferenceGrant for it.
func TestGatewayStatuses(t *testing.T) {
	e := newEnv(t, options{gatewayAPI: true})
	ctx := testkit.Context(t)
	admin, err := gwclient.NewForConfig(e.cluster.Admin)
	testkit.Must(t, err)
	for ns, labels := range map[string]map[string]string{"infra": nil, "team-a": {"gateway-access": "yes"}, "team-b": nil} {
		_, err := e.kube.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns, Labels: labels}}, metav1.CreateOptions{})
		testkit.Must(t, err)
	}
	_, err = e.kube.CoreV1().Services("team-a").Create(ctx, &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: "web"},
		Spec: corev1.ServiceSpec{Type: corev1.ServiceTypeNodePort, Ports: []corev1.ServicePort{{Port: 80}}}}, metav1.CreateOptions{})
	testkit.Must(t, err)
	_, err = admin.GatewayV1().GatewayClasses().Create(ctx, &gatewayv1.GatewayClass{ObjectMeta: metav1.ObjectMeta{Name: "example"},
		Spec: gatewayv1.GatewayClassSpec{ControllerName: gatewaycontroller.ControllerName}}, metav1.CreateOptions{})
	testkit.Must(t, err)
	from := gatewayv1.NamespacesFromSelector
	_, err = admin.GatewayV1().Gateways("infra").Create(ctx, &gatewayv1.Gateway{ObjectMeta: metav1.ObjectMeta{Name: "gw"},
		Spec: gatewayv1.GatewaySpec{GatewayClassName: "example", Listeners: []gatewayv1.Listener{{Name: "http", Port: 80, Protocol: gatewayv1.HTTPProtocolType,
			AllowedRoutes: &gatewayv1.AllowedRoutes{Namespaces: &gatewayv1.RouteNamespaces{From: &from,
				Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"gateway-access": "yes"}}}}}}}}, metav1.CreateOptions{})
	testkit.Must(t, err)
	tenants := map[string]gwclient.Interface{}
	for ns, author := range map[string]string{"team-a": "alice", "team-b": "mallory"} {
		tenants[ns] = e.gatewayTenant(t, ns, author, "httproutes", "referencegrants")
		_, err := tenants[ns].GatewayV1().HTTPRoutes(ns).Create(ctx, webRoute("team-a"), metav1.CreateOptions{})
		testkit.Must(t, err)
	}

	testkit.Eventually(t, 60*time.Second, "the class accepted", func() error {
		gc, err := admin.GatewayV1().GatewayClasses().Get(ctx, "example", metav1.GetOptions{})
		if err != nil || !meta.IsStatusConditionTrue(gc.Status.Conditions, "Accepted") {
			return fmt.Errorf("%+v, %v", gc.Status, err)
		}
		return nil
	})
	testkit.Eventually(t, 60*time.Second, "the Gateway accepted with 1 route", func() error {
		gw, err := admin.GatewayV1().Gateways("infra").Get(ctx, "gw", metav1.GetOptions{})
		if err != nil || !meta.IsStatusConditionTrue(gw.Status.Conditions, "Accepted") || meta.IsStatusConditionTrue(gw.Status.Conditions, "Programmed") ||
			len(gw.Status.Listeners) != 1 || gw.Status.Listeners[0].AttachedRoutes != 1 {
			return fmt.Errorf("%+v, %v", gw.Status, err)
		}
		return nil
	})
	e.routeParent(t, admin, "team-a", "Accepted", "ResolvedRefs")
	e.routeParent(t, admin, "team-b", "NotAllowedByListeners", "RefNotPermitted")

	// mallory's route, its namespace labelled, sends to team-a's Service:
	// refused until team-a's alice grants it.
	ns, err := e.kube.CoreV1().Namespaces().Get(ctx, "team-b", metav1.GetOptions{})
	testkit.Must(t, err)
	ns.Labels = map[string]string{"gateway-access": "yes"}
	_, err = e.kube.CoreV1().Namespaces().Update(ctx, ns, metav1.UpdateOptions{})
	testkit.Must(t, err)
	e.routeParent(t, admin, "team-b", "Accepted", "RefNotPermitted")
	svc := gatewayv1beta1.ObjectName("web")
	_, err = tenants["team-a"].GatewayV1beta1().ReferenceGrants("team-a").Create(ctx, &gatewayv1beta1.ReferenceGrant{ObjectMeta: metav1.ObjectMeta{Name: "routes-of-b"},
		Spec: gatewayv1beta1.ReferenceGrantSpec{
			From: []gatewayv1beta1.ReferenceGrantFrom{{Group: gatewayv1beta1.GroupName, Kind: "HTTPRoute", Namespace: "team-b"}},
			To:   []gatewayv1beta1.ReferenceGrantTo{{Group: "", Kind: "Service", Name: &svc}},
		}}, metav1.CreateOptions{})
	testkit.Must(t, err)
	e.routeParent(t, admin, "team-b", "Accepted", "ResolvedRefs")
}

// webRoute is HTTPRoute web attached to Gateway infra/gw, sending to
// Service web of namespace ns on port 80.
func webRoute(ns string) *gatewayv1.HTTPRoute {
	return &gatewayv1.HTTPRoute{ObjectMeta: metav1.ObjectMeta{Name: "web"},
		Spec: gatewayv1.HTTPRouteSpec{
			CommonRouteSpec: gatewayv1.CommonRouteSpec{ParentRefs: []gatewayv1.ParentReference{{Name: "gw", Namespace: ptr.To(gatewayv1.Namespace("infra"))}}},
			Rules: []gatewayv1.HTTPRouteRule{{BackendRefs: []gatewayv1.HTTPBackendRef{{BackendRef: gatewayv1.BackendRef{
				BackendObjectReference: gatewayv1.BackendObjectReference{Name: "web", Namespace: ptr.To(gatewayv1.Namespace(ns)),
					Port: ptr.To(gatewayv1.PortNumber(80))}}}}}},
		}}
}

// routeParent waits until route ns/web's parent status has these
// Accepted and ResolvedRefs reasons.
func (e *env) routeParent(t testing.TB, admin gwclient.Interface, ns, accepted, resolved string) {
	t.Helper()
	testkit.Eventually(t, 60*time.Second, fmt.Sprintf("route %s/web %s, %s", ns, accepted, resolved), func() error {
		r, err := admin.GatewayV1().HTTPRoutes(ns).Get(testkit.Context(t), "web", metav1.GetOptions{})
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
