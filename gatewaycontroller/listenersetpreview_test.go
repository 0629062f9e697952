package gatewaycontroller

import (
	"strings"
	"testing"

	admissionv1 "k8s.io/api/admission/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	kubefake "k8s.io/client-go/kubernetes/fake"
	"k8s.io/utils/ptr"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"
	gwfake "sigs.k8s.io/gateway-api/pkg/client/clientset/versioned/fake"

	"github.com/example/cloud-provider-example/internal/testkit"
)

// TestPreviewListenerSet: a ListenerSet's dry run concerns the Gateway it
// names where that Gateway takes ListenerSets of its namespace, with the
// edited ListenerSet in place of the stored one and the routes attached
// to it; of a Gateway that takes none, or another controller's, it says
// only that it is not previewed, in the same words.
func TestPreviewListenerSet(t *testing.T) {
	gwc, kube := gwfake.NewSimpleClientset(), kubefake.NewClientset()
	ctx := t.Context()
	gwc.Resources = []*metav1.APIResourceList{{GroupVersion: gatewayv1.GroupVersion.String(), APIResources: []metav1.APIResource{{Name: "listenersets"}}}}
	for name, ctrl := range map[string]gatewayv1.GatewayController{"example": ControllerName, "other": "other.example/c"} {
		_, err := gwc.GatewayV1().GatewayClasses().Create(ctx, &gatewayv1.GatewayClass{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: gatewayv1.GatewayClassSpec{ControllerName: ctrl}}, metav1.CreateOptions{})
		testkit.Must(t, err)
	}
	all := gatewayv1.NamespacesFromAll
	for name, class := range map[string]string{"open": "example", "closed": "example", "theirs": "other"} {
		gw := &gatewayv1.Gateway{ObjectMeta: metav1.ObjectMeta{Namespace: "infra", Name: name}, Spec: gatewayv1.GatewaySpec{GatewayClassName: gatewayv1.ObjectName(class)}}
		if name != "closed" {
			gw.Spec.AllowedListeners = &gatewayv1.AllowedListeners{Namespaces: &gatewayv1.ListenerNamespaces{From: &all}}
		}
		_, err := gwc.GatewayV1().Gateways("infra").Create(ctx, gw, metav1.CreateOptions{})
		testkit.Must(t, err)
	}
	set := func(parent string, port gatewayv1.PortNumber) *gatewayv1.ListenerSet {
		return &gatewayv1.ListenerSet{ObjectMeta: metav1.ObjectMeta{Namespace: "team-a", Name: "ls"}, Spec: gatewayv1.ListenerSetSpec{
			ParentRef: gatewayv1.ParentGatewayReference{Namespace: ptr.To(gatewayv1.Namespace("infra")), Name: gatewayv1.ObjectName(parent)},
			Listeners: []gatewayv1.ListenerEntry{{Name: "http", Port: port, Protocol: gatewayv1.HTTPProtocolType}}}}
	}
	_, err := gwc.GatewayV1().ListenerSets("team-a").Create(ctx, set("open", 80), metav1.CreateOptions{})
	testkit.Must(t, err)
	_, err = gwc.GatewayV1().HTTPRoutes("team-a").Create(ctx, &gatewayv1.HTTPRoute{ObjectMeta: metav1.ObjectMeta{Namespace: "team-a", Name: "app"},
		Spec: gatewayv1.HTTPRouteSpec{CommonRouteSpec: gatewayv1.CommonRouteSpec{ParentRefs: []gatewayv1.ParentReference{{Kind: ptr.To(gatewayv1.Kind("ListenerSet")), Name: "ls"}}}}},
		metav1.CreateOptions{})
	testkit.Must(t, err)
	c := watching(t, gwc, kube, &Cloud{})
	req := func(cur, old *gatewayv1.ListenerSet) *admissionv1.AdmissionRequest {
		if old == nil {
			return dryRunOf(t, "ListenerSet", cur, nil)
		}
		return dryRunOf(t, "ListenerSet", cur, old)
	}

	e, err := c.concerned(req(set("open", 8080), set("open", 80)))
	testkit.Must(t, err)
	if len(e.gws) != 1 || e.gws[0].Name != "open" || len(e.said) != 0 {
		t.Fatalf("an edit on a Gateway taking every namespace's: %d Gateways, said %v", len(e.gws), e.said)
	}
	now, before := e.now(e.gws[0]), e.before(e.gws[0])
	if len(now.sets) != 1 || now.sets[0].Spec.Listeners[0].Port != 8080 || before.sets[0].Spec.Listeners[0].Port != 80 {
		t.Errorf("the ListenerSets as edited %+v, as they were %+v", now.sets, before.sets)
	}
	if len(now.http) != 1 || now.http[0].Name != "app" {
		t.Errorf("the routes attached through it: %v", now.http)
	}
	said := map[string]string{}
	for _, gw := range []string{"closed", "theirs", "ghost"} {
		e, err := c.concerned(req(set(gw, 80), nil))
		testkit.Must(t, err)
		if len(e.gws) != 0 || len(e.said) != 1 || !strings.Contains(e.said[0], "not previewed") {
			t.Fatalf("a ListenerSet naming infra/%s: %d Gateways, said %v", gw, len(e.gws), e.said)
		}
		said[gw] = strings.ReplaceAll(e.said[0], "infra/"+gw, "infra/X")
	}
	if said["closed"] != said["theirs"] || said["closed"] != said["ghost"] {
		t.Errorf("Gateways not previewed read differently: %v", said)
	}
}
