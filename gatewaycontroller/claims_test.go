package gatewaycontroller

import (
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	kubefake "k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"
	"k8s.io/utils/ptr"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"
	gatewayv1beta1 "sigs.k8s.io/gateway-api/apis/v1beta1"
	gwfake "sigs.k8s.io/gateway-api/pkg/client/clientset/versioned/fake"

	"github.com/example/cloud-provider-example/gateway"
	"github.com/example/cloud-provider-example/internal/testkit"
	"github.com/example/cloud-provider-example/review"
)

// writes are the create, update and delete requests kube was sent.
func writes(kube *kubefake.Clientset) []string {
	var out []string
	for _, a := range kube.Actions() {
		if v := a.GetVerb(); v == "create" || v == "update" || v == "delete" {
			out = append(out, v)
		}
	}
	return out
}

// The claims store, over client-go's fake clientset (a unit test: the
// e2e runs it on a real API server): nothing written before a first
// claim, one ConfigMap in the controller's namespace written only when
// the claims change, read once and kept, read again after a restart, not
// a previous Gateway's of the same name, deleted with the load balancer.
func TestClaimStore(t *testing.T) {
	ctx := t.Context()
	kube := kubefake.NewClientset()
	nn := types.NamespacedName{Namespace: "infra", Name: "gw"}
	s := newClaimStore(kube, "example-ccm")
	got, err := s.load(ctx, nn, "uid-1", true)
	testkit.Must(t, err)
	testkit.Must(t, s.save(ctx, nn, "uid-1", got))
	if w := writes(kube); len(w) != 0 {
		t.Fatalf("no claims: writes %v, want none", w)
	}

	since := time.Date(2026, 1, 1, 0, 0, 0, 5, time.UTC)
	claims := gateway.Claims{Hosts: map[string]gateway.HostClaim{"shop.example": {Namespace: "team-a", Since: since}},
		Listeners: map[gatewayv1.SectionName]gateway.ListenerClaim{"pg": {Namespace: "team-a", Kind: gateway.KindTCPRoute, Route: "db", Since: since}}}
	testkit.Must(t, s.save(ctx, nn, "uid-1", claims))
	testkit.Must(t, s.save(ctx, nn, "uid-1", claims))
	if w := writes(kube); !slices.Equal(w, []string{"create"}) {
		t.Fatalf("writes %v, want one create", w)
	}
	cm, err := kube.CoreV1().ConfigMaps("example-ccm").Get(ctx, claimsName(nn), metav1.GetOptions{})
	testkit.Must(t, err)
	if cm.Annotations[annotationClaimsOf] != "infra/gw" || cm.Labels["app.kubernetes.io/managed-by"] == "" || !strings.Contains(cm.Data[claimsKey], `"shop.example":{"namespace":"team-a"`) {
		t.Errorf("ConfigMap %+v", cm)
	}
	released := since.Add(time.Minute)
	changed := gateway.Claims{Hosts: map[string]gateway.HostClaim{"shop.example": {Namespace: "team-a", Since: since, ReleasedAt: &released}}}
	testkit.Must(t, s.save(ctx, nn, "uid-1", changed))
	if w := writes(kube); !slices.Equal(w, []string{"create", "update"}) {
		t.Fatalf("writes %v, want create, update", w)
	}

	// A restarted controller reads them back, nanoseconds and all.
	again := newClaimStore(kube, "example-ccm")
	got, err = again.load(ctx, nn, "uid-1", true)
	testkit.Must(t, err)
	if c := got.Hosts["shop.example"]; !c.Since.Equal(since) || c.ReleasedAt == nil || !c.ReleasedAt.Equal(released) || len(got.Listeners) != 0 {
		t.Errorf("read back %+v, want %+v", got, changed)
	}
	// Another Gateway of that name (a new uid) starts with none.
	if got, err := newClaimStore(kube, "example-ccm").load(ctx, nn, "uid-2", true); err != nil || len(got.Hosts) != 0 {
		t.Errorf("a new Gateway's claims: %+v, %v, want none", got, err)
	}

	// Gone: a Gateway never read costs nothing; the load balancer's
	// removal deletes the ConfigMap.
	kube.ClearActions()
	testkit.Must(t, newClaimStore(kube, "example-ccm").remove(ctx, types.NamespacedName{Namespace: "infra", Name: "other"}, false))
	if w := writes(kube); len(w) != 0 {
		t.Errorf("removing claims never read: writes %v, want none", w)
	}
	testkit.Must(t, again.remove(ctx, nn, true))
	if _, err := kube.CoreV1().ConfigMaps("example-ccm").Get(ctx, claimsName(nn), metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("after remove: %v, want the ConfigMap gone", err)
	}
}

// Claims that cannot be read are an error to retry, never no claims; a
// write that conflicts makes the next look read again.
func TestClaimStoreUnreadable(t *testing.T) {
	ctx := t.Context()
	nn := types.NamespacedName{Namespace: "infra", Name: "gw"}
	kube := kubefake.NewClientset()
	kube.PrependReactor("get", "configmaps", func(k8stesting.Action) (bool, runtime.Object, error) {
		return true, nil, apierrors.NewForbidden(schema.GroupResource{Resource: "configmaps"}, claimsName(nn), errors.New("no"))
	})
	s := newClaimStore(kube, "example-ccm")
	if _, err := s.load(ctx, nn, "uid-1", true); err == nil {
		t.Fatal("an unreadable ConfigMap read as no claims")
	}
	if err := s.save(ctx, nn, "uid-1", gateway.Claims{Hosts: map[string]gateway.HostClaim{"a.example": {Namespace: "team-b"}}}); err == nil {
		t.Fatal("claims saved that were never read")
	}

	kube = kubefake.NewClientset(&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "example-ccm", Name: claimsName(nn),
		Annotations: map[string]string{annotationClaimsUID: "uid-1"}}, Data: map[string]string{claimsKey: "{not json"}})
	if _, err := newClaimStore(kube, "example-ccm").load(ctx, nn, "uid-1", true); err == nil || !strings.Contains(err.Error(), claimsKey) {
		t.Fatalf("a corrupt document: %v, want an error naming it", err)
	}

	kube = kubefake.NewClientset()
	s = newClaimStore(kube, "example-ccm")
	_, err := s.load(ctx, nn, "uid-1", true)
	testkit.Must(t, err)
	// Another writer got there first.
	_, err = kube.CoreV1().ConfigMaps("example-ccm").Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "example-ccm", Name: claimsName(nn),
		Annotations: map[string]string{annotationClaimsUID: "uid-1"}}, Data: map[string]string{claimsKey: `{"hosts":{"a.example":{"namespace":"team-a","since":"2026-01-01T00:00:00Z"}}}`}}, metav1.CreateOptions{})
	testkit.Must(t, err)
	if err := s.save(ctx, nn, "uid-1", gateway.Claims{Hosts: map[string]gateway.HostClaim{"a.example": {Namespace: "team-b"}}}); err == nil {
		t.Fatal("a conflicting write succeeded")
	}
	got, err := s.load(ctx, nn, "uid-1", true)
	if err != nil || got.Hosts["a.example"].Namespace != "team-a" {
		t.Errorf("after a conflict: %+v, %v, want the stored claims read again", got, err)
	}
}

// The controller decides host names under the claims kept and the
// holders' ReferenceGrants (package tenancy), keeps the claims, and warns
// the Gateway's owners of a move, naming the host name and both
// namespaces.
func TestTranslateUnderClaims(t *testing.T) {
	ctx := t.Context()
	gwc, kube := gwfake.NewSimpleClientset(), kubefake.NewClientset()
	grant := &gatewayv1beta1.ReferenceGrant{ObjectMeta: metav1.ObjectMeta{Namespace: "team-a", Name: "shop-to-b"},
		Spec: gatewayv1beta1.ReferenceGrantSpec{
			From: []gatewayv1beta1.ReferenceGrantFrom{{Group: gatewayv1.GroupName, Kind: "HTTPRoute", Namespace: "team-b"}},
			To:   []gatewayv1beta1.ReferenceGrantTo{{Group: "gateway.example.com", Kind: "Hostname", Name: ptr.To(gatewayv1beta1.ObjectName("shop.example"))}}}}
	_, err := gwc.GatewayV1beta1().ReferenceGrants("team-a").Create(ctx, grant, metav1.CreateOptions{})
	testkit.Must(t, err)
	rv := &fakeReview{}
	c := watching(t, gwc, kube, &Cloud{Review: rv, Settings: Settings{ClaimsNamespace: "example-ccm", HostnameClaimGrace: time.Minute}})
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	c.now = func() time.Time { return now }
	all := gatewayv1.NamespacesFromAll
	gw := &gatewayv1.Gateway{ObjectMeta: metav1.ObjectMeta{Namespace: "infra", Name: "gw", UID: "uid-gw"},
		Spec: gatewayv1.GatewaySpec{Listeners: []gatewayv1.Listener{{Name: "http", Port: 80, Protocol: gatewayv1.HTTPProtocolType,
			AllowedRoutes: &gatewayv1.AllowedRoutes{Namespaces: &gatewayv1.RouteNamespaces{From: &all}}}}}}
	route := func(ns, name string, age time.Duration) *gatewayv1.HTTPRoute {
		return &gatewayv1.HTTPRoute{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, CreationTimestamp: metav1.NewTime(now.Add(-age))},
			Spec: gatewayv1.HTTPRouteSpec{CommonRouteSpec: gatewayv1.CommonRouteSpec{ParentRefs: []gatewayv1.ParentReference{{Name: "gw", Namespace: ptr.To(gatewayv1.Namespace("infra"))}}},
				Hostnames: []gatewayv1.Hostname{"shop.example"}}}
	}
	accepted := func(tr gateway.Translation, ns, name string) string {
		return tr.Parents[gateway.RouteKey{Kind: gateway.KindHTTPRoute, NamespacedName: types.NamespacedName{Namespace: ns, Name: name}}][0].Accepted.Reason
	}
	nn := types.NamespacedName{Namespace: "infra", Name: "gw"}

	tr, err := c.translate(ctx, gw, []*gatewayv1.HTTPRoute{route("team-a", "shop", 2*time.Hour), route("team-b", "api", time.Hour), route("team-c", "intruder", time.Hour)}, nil, true)
	testkit.Must(t, err)
	if a, b, cc := accepted(tr, "team-a", "shop"), accepted(tr, "team-b", "api"), accepted(tr, "team-c", "intruder"); a != "Accepted" || b != "Accepted" || cc != string(gateway.ReasonHostnameInUse) {
		t.Fatalf("team-a %s, team-b %s (granted), team-c %s (not granted): want Accepted, Accepted, HostnameInUse", a, b, cc)
	}
	testkit.Must(t, c.claims.save(ctx, nn, gw.UID, tr.Claims))
	c.warnBoundary(review.Subject{}, gw, tr)
	if len(rv.events) != 1 || !strings.HasPrefix(rv.events[0], "HostnameMoved: host name shop.example of namespace team-a is served by namespace team-b too") {
		t.Errorf("events %q, want one HostnameMoved naming the host name and both namespaces", rv.events)
	}

	// The owner's route deleted, past the grace: another namespace's
	// route takes the name, and the owners are warned.
	now = now.Add(time.Minute)
	tr, err = c.translate(ctx, gw, []*gatewayv1.HTTPRoute{route("team-c", "intruder", time.Hour)}, nil, true)
	testkit.Must(t, err)
	testkit.Must(t, c.claims.save(ctx, nn, gw.UID, tr.Claims))
	if accepted(tr, "team-c", "intruder") != string(gateway.ReasonHostnameInUse) {
		t.Errorf("team-c during the grace: %s, want HostnameInUse", accepted(tr, "team-c", "intruder"))
	}
	now = now.Add(time.Minute)
	tr, err = c.translate(ctx, gw, []*gatewayv1.HTTPRoute{route("team-c", "intruder", time.Hour)}, nil, true)
	testkit.Must(t, err)
	rv.events = nil
	c.warnBoundary(review.Subject{}, gw, tr)
	if accepted(tr, "team-c", "intruder") != "Accepted" || len(rv.events) != 1 ||
		rv.events[0] != "HostnameMoved: host name shop.example moves from namespace team-a (no route of it served it for the grace period) to namespace team-c" {
		t.Errorf("after the grace: team-c %s, events %q", accepted(tr, "team-c", "intruder"), rv.events)
	}

	// An unknown ownership value is said once.
	gw.Annotations = map[string]string{gateway.OwnershipAnnotation: "Team"}
	for range 2 {
		tr, err = c.translate(ctx, gw, nil, nil, true)
		testkit.Must(t, err)
		c.warnBoundary(review.Subject{}, gw, tr)
	}
	if n := len(rv.events); n != 2 || !strings.HasPrefix(rv.events[1], `UnknownHostnameOwnership: annotation gateway.example.com/hostname-ownership: unknown value "Team", taken as Namespace`) {
		t.Errorf("events %q, want the unknown value said once", rv.events)
	}
}

// An unknown ownership value is said in the Gateway's Accepted condition
// (it is taken as Namespace), beside what else it says.
func TestGatewayStatusSaysUnknownOwnership(t *testing.T) {
	gw := &gatewayv1.Gateway{ObjectMeta: metav1.ObjectMeta{Name: "gw", Namespace: "infra"},
		Spec: gatewayv1.GatewaySpec{Listeners: []gatewayv1.Listener{{Name: "http", Port: 80, Protocol: gatewayv1.HTTPProtocolType},
			{Name: "bad", Port: 81, Protocol: "INVALID"}}}}
	for _, tc := range []struct {
		tr   gateway.Translation
		want string
	}{
		{gateway.Translation{OwnershipUnknown: "Team"}, `unknown value "Team", taken as Namespace`},
		{gateway.Translation{OwnershipUnknown: "Team", Refused: map[gatewayv1.SectionName]gateway.Reason{"bad": {Reason: "UnsupportedProtocol"}}},
			`1 of 2 listeners are not valid; annotation gateway.example.com/hostname-ownership: unknown value "Team"`},
		{gateway.Translation{Refused: map[gatewayv1.SectionName]gateway.Reason{"bad": {Reason: "UnsupportedProtocol"}}}, "1 of 2 listeners are not valid"},
	} {
		st := gatewayStatus(gw, tc.tr, programmed{ok: true, reason: gatewayv1.GatewayReasonProgrammed}, servesAll)
		for _, c := range st.Conditions {
			if c.Type == "Accepted" && (c.Status != metav1.ConditionTrue || !strings.Contains(c.Message, tc.want) || strings.HasSuffix(c.Message, "; ")) {
				t.Errorf("Accepted %+v, want True saying %q", c, tc.want)
			}
		}
	}
}
