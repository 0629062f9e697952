package gatewaycontroller

import (
	"slices"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	kubefake "k8s.io/client-go/kubernetes/fake"
	"k8s.io/utils/ptr"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"
	gwfake "sigs.k8s.io/gateway-api/pkg/client/clientset/versioned/fake"

	"github.com/example/cloud-provider-example/exampleapi"
	"github.com/example/cloud-provider-example/gateway"
	"github.com/example/cloud-provider-example/internal/testkit"
	"github.com/example/cloud-provider-example/objectref"
)

// GRPCRoutes where the API server serves them: the class claims the
// feature; a Gateway's are decided beside its HTTPRoutes (one of the same
// name included), as HTTP rules reaching their Service in h2c, and named
// as GRPCRoutes in its review's inputs; their statuses are written through
// their own client, a listener taking HTTPRoutes alone refusing one.
// Where the server does not serve them, none is watched or claimed.
func TestGRPCRoutes(t *testing.T) {
	ctx := t.Context()
	gwc := gwfake.NewSimpleClientset()
	kube := kubefake.NewClientset(&corev1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: "infra", Name: "echo"},
		Spec: corev1.ServiceSpec{Ports: []corev1.ServicePort{{Port: 8080, NodePort: 30080, Protocol: corev1.ProtocolTCP}}}})
	gwc.Resources = []*metav1.APIResourceList{{GroupVersion: gatewayv1.GroupVersion.String(), APIResources: []metav1.APIResource{{Name: "grpcroutes"}}}}
	gw := &gatewayv1.Gateway{ObjectMeta: metav1.ObjectMeta{Namespace: "infra", Name: "gw", UID: "uid-gw"},
		Spec: gatewayv1.GatewaySpec{Listeners: []gatewayv1.Listener{{Name: "http", Port: 80, Protocol: gatewayv1.HTTPProtocolType},
			{Name: "web-only", Port: 8080, Protocol: gatewayv1.HTTPProtocolType,
				AllowedRoutes: &gatewayv1.AllowedRoutes{Kinds: []gatewayv1.RouteGroupKind{{Kind: gateway.KindHTTPRoute}}}}}}}
	backend := gatewayv1.BackendRef{BackendObjectReference: gatewayv1.BackendObjectReference{Name: "echo", Port: ptr.To(gatewayv1.PortNumber(8080))}}
	grpcRoute := func(name string, section gatewayv1.SectionName) *gatewayv1.GRPCRoute {
		return &gatewayv1.GRPCRoute{ObjectMeta: metav1.ObjectMeta{Namespace: "infra", Name: name},
			Spec: gatewayv1.GRPCRouteSpec{CommonRouteSpec: gatewayv1.CommonRouteSpec{ParentRefs: []gatewayv1.ParentReference{{Name: "gw", SectionName: &section}}},
				Rules: []gatewayv1.GRPCRouteRule{{Matches: []gatewayv1.GRPCRouteMatch{{Method: &gatewayv1.GRPCMethodMatch{Service: ptr.To("echo.Echo"), Method: ptr.To("Say")}}},
					BackendRefs: []gatewayv1.GRPCBackendRef{{BackendRef: backend}}}}}}
	}
	for _, r := range []*gatewayv1.GRPCRoute{grpcRoute("echo", "http"), grpcRoute("refused", "web-only")} {
		_, err := gwc.GatewayV1().GRPCRoutes("infra").Create(ctx, r, metav1.CreateOptions{})
		testkit.Must(t, err)
	}
	_, err := gwc.GatewayV1().HTTPRoutes("infra").Create(ctx, &gatewayv1.HTTPRoute{ObjectMeta: metav1.ObjectMeta{Namespace: "infra", Name: "echo"},
		Spec: gatewayv1.HTTPRouteSpec{CommonRouteSpec: gatewayv1.CommonRouteSpec{ParentRefs: []gatewayv1.ParentReference{{Name: "gw", SectionName: ptr.To(gatewayv1.SectionName("http"))}}},
			Rules: []gatewayv1.HTTPRouteRule{{BackendRefs: []gatewayv1.HTTPBackendRef{{BackendRef: backend}}}}}}, metav1.CreateOptions{})
	testkit.Must(t, err)
	c := watching(t, gwc, kube, &Cloud{})
	if !slices.Contains(c.supportedFeatures(), "GRPCRoute") {
		t.Errorf("supported features %v, want GRPCRoute", c.supportedFeatures())
	}

	http, l4, refs, err := c.routesOf(gw)
	testkit.Must(t, err)
	grpcRef := objectref.Ref{Kind: objectref.KindGRPCRoute, Namespace: "infra", Name: "echo"}
	if len(http) != 3 || len(l4) != 0 || !slices.Contains(refs, grpcRef) {
		t.Fatalf("routes: %d HTTP ones, %d L4 ones, refs %v; want the HTTPRoute and both GRPCRoutes as HTTP ones, GRPCRoute echo among the refs",
			len(http), len(l4), refs)
	}
	tr, err := c.translate(ctx, gw, http, l4, false)
	testkit.Must(t, err)
	i := slices.IndexFunc(tr.Rules, func(r gateway.Rule) bool { return r.Path == "/echo.Echo/Say" })
	if i < 0 || tr.Rules[i].PathType != exampleapi.PathExact || tr.Rules[i].Backends[0].Protocol != exampleapi.BackendH2C || len(tr.Rules) != 2 {
		t.Fatalf("rules %+v, want the HTTPRoute's and GRPCRoute echo's /echo.Echo/Say exact, reaching its Service in h2c", tr.Rules)
	}

	testkit.Must(t, c.syncRoutes(ctx, types.NamespacedName{Namespace: "infra", Name: "gw"}, tr, ruleStates{}))
	for name, want := range map[string]gatewayv1.RouteConditionReason{"echo": gatewayv1.RouteReasonAccepted, "refused": gatewayv1.RouteReasonNotAllowedByListeners} {
		r, err := gwc.GatewayV1().GRPCRoutes("infra").Get(ctx, name, metav1.GetOptions{})
		testkit.Must(t, err)
		if ps := r.Status.Parents; len(ps) != 1 || ps[0].Conditions[0].Reason != string(want) {
			t.Errorf("GRPCRoute %s: parents %+v, want %s", name, ps, want)
		}
	}

	// A server without GRPCRoutes: nothing of them is watched or claimed.
	c, err = New(gwfake.NewSimpleClientset(), kube, &Cloud{})
	testkit.Must(t, err)
	if http, err := c.httpRoutes(); err != nil || len(http) != 0 || slices.Contains(c.supportedFeatures(), "GRPCRoute") {
		t.Errorf("without GRPCRoutes served: routes %v, %v, features %v; want none, GRPCRoute not claimed", http, err, c.supportedFeatures())
	}
}
