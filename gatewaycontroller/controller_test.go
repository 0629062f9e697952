package gatewaycontroller

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"
	"k8s.io/utils/ptr"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"
	gatewayv1beta1 "sigs.k8s.io/gateway-api/apis/v1beta1"
	gwclient "sigs.k8s.io/gateway-api/pkg/client/clientset/versioned"

	"github.com/example/cloud-provider-example/internal/gatewaycrds"
	"github.com/example/cloud-provider-example/internal/testcluster"
	"github.com/example/cloud-provider-example/internal/testkit"
)

type fixture struct {
	kube kubernetes.Interface
	gw   gwclient.Interface
	c    *Controller
}

func start(t *testing.T) *fixture {
	cluster := testcluster.Start(t)
	kube, err := kubernetes.NewForConfig(cluster.Admin)
	testkit.Must(t, err)
	gw, err := gwclient.NewForConfig(cluster.Admin)
	testkit.Must(t, err)
	gatewaycrds.Install(t, kube, cluster.Admin)
	c, err := New(gw, kube, nil)
	testkit.Must(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); c.Run(ctx) }()
	t.Cleanup(func() { cancel(); <-done })
	return &fixture{kube: kube, gw: gw, c: c}
}

// watching is a controller over gwc and kube building through cloud,
// its informers started and synced (on fake clients: no API server).
func watching(t *testing.T, gwc gwclient.Interface, kube kubernetes.Interface, cloud *Cloud) *Controller {
	t.Helper()
	c, err := New(gwc, kube, cloud)
	testkit.Must(t, err)
	c.Watch(t.Context())
	if !cache.WaitForCacheSync(t.Context().Done(), c.synced...) {
		t.Fatal("informers not synced")
	}
	return c
}

func (f *fixture) namespace(t *testing.T, name string, labels map[string]string) {
	_, err := f.kube.CoreV1().Namespaces().Create(testkit.Context(t), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels}}, metav1.CreateOptions{})
	testkit.Must(t, err)
}

func (f *fixture) route(t *testing.T, ns, name, backend string) {
	r := &gatewayv1.HTTPRoute{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec: gatewayv1.HTTPRouteSpec{
			CommonRouteSpec: gatewayv1.CommonRouteSpec{ParentRefs: []gatewayv1.ParentReference{{Name: "gw", Namespace: ptr.To(gatewayv1.Namespace("infra"))}}},
			Hostnames:       []gatewayv1.Hostname{"a.example"},
			Rules: []gatewayv1.HTTPRouteRule{{BackendRefs: []gatewayv1.HTTPBackendRef{{BackendRef: gatewayv1.BackendRef{
				BackendObjectReference: gatewayv1.BackendObjectReference{Name: gatewayv1.ObjectName(backend), Port: ptr.To(gatewayv1.PortNumber(80))}}}}}},
		}}
	_, err := f.gw.GatewayV1().HTTPRoutes(ns).Create(testkit.Context(t), r, metav1.CreateOptions{})
	testkit.Must(t, err)
}

// parent waits until route ns/name's status for Gateway infra/gw has
// Accepted and ResolvedRefs with these reasons ("" for no entry).
func (f *fixture) parent(t *testing.T, ns, name, accepted, resolved string) {
	t.Helper()
	testkit.Eventually(t, 30*time.Second, fmt.Sprintf("route %s/%s: %q, %q", ns, name, accepted, resolved), func() error {
		r, err := f.gw.GatewayV1().HTTPRoutes(ns).Get(testkit.Context(t), name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		var ps []gatewayv1.RouteParentStatus
		for _, p := range r.Status.Parents {
			if p.ControllerName == ControllerName {
				ps = append(ps, p)
			}
		}
		if accepted == "" {
			if len(ps) > 0 {
				return fmt.Errorf("parents %+v, want none of ours", ps)
			}
			return nil
		}
		if len(ps) != 1 {
			return fmt.Errorf("parents %+v", r.Status.Parents)
		}
		a := meta.FindStatusCondition(ps[0].Conditions, "Accepted")
		rr := meta.FindStatusCondition(ps[0].Conditions, "ResolvedRefs")
		if a == nil || rr == nil || a.Reason != accepted || rr.Reason != resolved || a.ObservedGeneration != r.Generation ||
			(a.Status == metav1.ConditionTrue) != (accepted == "Accepted") {
			return fmt.Errorf("conditions %+v", ps[0].Conditions)
		}
		return nil
	})
}

// On a real API server: this controller's GatewayClass is Accepted with
// its features (another controller's is left alone); a Gateway is
// Accepted, not Programmed, its listener counting the routes attached; a
// route of a namespace the listener's selector takes is Accepted, one of
// another NotAllowedByListeners until its namespace is labelled (then
// HostnameInUse: the first namespace holds the host name); a
// missing backend is BackendNotFound, one of another namespace
// RefNotPermitted until that namespace's ReferenceGrant lets the route in;
// a Gateway deleted takes its entries out of the routes.
func TestStatuses(t *testing.T) {
	f := start(t)
	ctx := testkit.Context(t)
	f.namespace(t, "infra", nil)
	f.namespace(t, "team-a", map[string]string{"gateway-access": "yes"})
	f.namespace(t, "team-b", nil)
	for _, gc := range []*gatewayv1.GatewayClass{
		{ObjectMeta: metav1.ObjectMeta{Name: "example"}, Spec: gatewayv1.GatewayClassSpec{ControllerName: ControllerName}},
		{ObjectMeta: metav1.ObjectMeta{Name: "other"}, Spec: gatewayv1.GatewayClassSpec{ControllerName: "other.example/controller"}},
	} {
		_, err := f.gw.GatewayV1().GatewayClasses().Create(ctx, gc, metav1.CreateOptions{})
		testkit.Must(t, err)
	}
	for _, ns := range []string{"team-a", "team-b"} {
		_, err := f.kube.CoreV1().Services(ns).Create(ctx, &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: "svc-a"},
			Spec: corev1.ServiceSpec{Type: corev1.ServiceTypeNodePort, Ports: []corev1.ServicePort{{Port: 80}}}}, metav1.CreateOptions{})
		testkit.Must(t, err)
	}
	from := gatewayv1.NamespacesFromSelector
	_, err := f.gw.GatewayV1().Gateways("infra").Create(ctx, &gatewayv1.Gateway{ObjectMeta: metav1.ObjectMeta{Name: "gw"},
		Spec: gatewayv1.GatewaySpec{GatewayClassName: "example", Listeners: []gatewayv1.Listener{{Name: "http", Port: 80, Protocol: gatewayv1.HTTPProtocolType,
			AllowedRoutes: &gatewayv1.AllowedRoutes{Namespaces: &gatewayv1.RouteNamespaces{From: &from,
				Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"gateway-access": "yes"}}}}}}}}, metav1.CreateOptions{})
	testkit.Must(t, err)
	f.route(t, "team-a", "shop", "svc-a")
	f.route(t, "team-b", "intruder", "svc-a")
	f.route(t, "team-a", "missing", "nope")

	testkit.Eventually(t, 30*time.Second, "class example accepted", func() error {
		gc, err := f.gw.GatewayV1().GatewayClasses().Get(ctx, "example", metav1.GetOptions{})
		if err != nil {
			return err
		}
		// The kinds served beside claimed: GRPC, TLS, TCP, UDP routes,
		// ListenerSets (and what else the server serves).
		served := f.c.supportedFeatures()
		for _, k := range []gatewayv1.FeatureName{"GRPCRoute", "TLSRoute", "TCPRoute", "UDPRoute", listenerSetFeature} {
			if !slices.Contains(served, k) {
				return fmt.Errorf("features %v lack %s", served, k)
			}
		}
		if !meta.IsStatusConditionTrue(gc.Status.Conditions, "Accepted") || len(gc.Status.SupportedFeatures) != len(served) {
			return fmt.Errorf("status %+v", gc.Status)
		}
		return nil
	})
	f.parent(t, "team-a", "shop", "Accepted", "ResolvedRefs")
	f.parent(t, "team-b", "intruder", "NotAllowedByListeners", "ResolvedRefs")
	f.parent(t, "team-a", "missing", "Accepted", "BackendNotFound")
	testkit.Eventually(t, 30*time.Second, "Gateway accepted, not programmed, 2 routes attached", func() error {
		gw, err := f.gw.GatewayV1().Gateways("infra").Get(ctx, "gw", metav1.GetOptions{})
		if err != nil {
			return err
		}
		a, p := meta.FindStatusCondition(gw.Status.Conditions, "Accepted"), meta.FindStatusCondition(gw.Status.Conditions, "Programmed")
		if a == nil || a.Status != metav1.ConditionTrue || a.ObservedGeneration != gw.Generation || p == nil || p.Status != metav1.ConditionFalse ||
			len(gw.Status.Listeners) != 1 || gw.Status.Listeners[0].AttachedRoutes != 2 {
			return fmt.Errorf("status %+v", gw.Status)
		}
		return nil
	})
	if gc, err := f.gw.GatewayV1().GatewayClasses().Get(ctx, "other", metav1.GetOptions{}); err != nil || meta.IsStatusConditionTrue(gc.Status.Conditions, "Accepted") {
		t.Errorf("another controller's class: %+v, %v; want it left alone", gc.Status, err)
	}

	// team-b labelled: its route may attach, but team-a holds the host
	// name it names (ADR 0021).
	ns, err := f.kube.CoreV1().Namespaces().Get(ctx, "team-b", metav1.GetOptions{})
	testkit.Must(t, err)
	ns.Labels = map[string]string{"gateway-access": "yes"}
	_, err = f.kube.CoreV1().Namespaces().Update(ctx, ns, metav1.UpdateOptions{})
	testkit.Must(t, err)
	f.parent(t, "team-b", "intruder", "HostnameInUse", "ResolvedRefs")

	// A backend in another namespace, without a grant.
	r, err := f.gw.GatewayV1().HTTPRoutes("team-a").Get(ctx, "shop", metav1.GetOptions{})
	testkit.Must(t, err)
	r.Spec.Rules[0].BackendRefs[0].Namespace = ptr.To(gatewayv1.Namespace("team-b"))
	_, err = f.gw.GatewayV1().HTTPRoutes("team-a").Update(ctx, r, metav1.UpdateOptions{})
	testkit.Must(t, err)
	f.parent(t, "team-a", "shop", "Accepted", "RefNotPermitted")
	// team-b lets team-a's HTTPRoutes send to its Service.
	svc := gatewayv1beta1.ObjectName("svc-a")
	_, err = f.gw.GatewayV1beta1().ReferenceGrants("team-b").Create(ctx, &gatewayv1beta1.ReferenceGrant{ObjectMeta: metav1.ObjectMeta{Name: "routes-of-a"},
		Spec: gatewayv1beta1.ReferenceGrantSpec{
			From: []gatewayv1beta1.ReferenceGrantFrom{{Group: gatewayv1beta1.GroupName, Kind: "HTTPRoute", Namespace: "team-a"}},
			To:   []gatewayv1beta1.ReferenceGrantTo{{Group: "", Kind: "Service", Name: &svc}},
		}}, metav1.CreateOptions{})
	testkit.Must(t, err)
	f.parent(t, "team-a", "shop", "Accepted", "ResolvedRefs")

	testkit.Must(t, f.gw.GatewayV1().Gateways("infra").Delete(ctx, "gw", metav1.DeleteOptions{}))
	f.parent(t, "team-a", "shop", "", "")
	f.parent(t, "team-b", "intruder", "", "")
}
