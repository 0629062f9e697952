package gatewaycontroller

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/example/cloud-provider-example/gateway"
	"github.com/example/cloud-provider-example/internal/testkit"
)

// TestListenerSetStatus: a ListenerSet not admitted is Accepted and
// Programmed False with the reason; an admitted one is Programmed with its
// Gateway, each listener's conditions as a Gateway listener's, a
// conflicted one's Programmed giving its conflict, and an unresolved
// certificate its ResolvedRefs; every condition at the ListenerSet's
// generation.
func TestListenerSetStatus(t *testing.T) {
	set := &gatewayv1.ListenerSet{ObjectMeta: metav1.ObjectMeta{Namespace: "team-a", Name: "ls", Generation: 3},
		Spec: gatewayv1.ListenerSetSpec{Listeners: []gatewayv1.ListenerEntry{
			{Name: "ok", Port: 80, Protocol: gatewayv1.HTTPProtocolType},
			{Name: "clash", Port: 80, Protocol: gatewayv1.TCPProtocolType},
			{Name: "tls", Port: 443, Protocol: gatewayv1.HTTPSProtocolType},
		}}}
	key := types.NamespacedName{Namespace: "team-a", Name: "ls"}
	id := func(n gatewayv1.SectionName) gatewayv1.SectionName { return gateway.ListenerID(key, n) }
	cond := func(conds []metav1.Condition, typ string) metav1.Condition {
		t.Helper()
		c := meta.FindStatusCondition(conds, typ)
		if c == nil {
			t.Fatalf("no %s condition in %+v", typ, conds)
		}
		if c.ObservedGeneration != 3 {
			t.Errorf("%s at generation %d, want 3", typ, c.ObservedGeneration)
		}
		return *c
	}

	notAllowed := listenerSetStatus(set, gateway.ListenerSetState{Accepted: gateway.Reason{Reason: "NotAllowed", Message: "no"}}, programmed{ok: true}, servesAll)
	for _, typ := range []string{"Accepted", "Programmed"} {
		if c := cond(notAllowed.Conditions, typ); c.Status != metav1.ConditionFalse || c.Reason != "NotAllowed" {
			t.Errorf("not admitted: %s %+v", typ, c)
		}
	}

	st := gateway.ListenerSetState{Accepted: gateway.Reason{Reason: "Accepted"}, Listeners: []gateway.SetListenerState{
		{Name: "ok", ID: id("ok"), Attached: 2},
		{Name: "clash", ID: id("clash"), Refused: &gateway.Reason{Reason: "ProtocolConflict", Message: "listener http of the Gateway uses port 80"}},
		{Name: "tls", ID: id("tls")},
	}}
	p := programmed{ok: true, reason: gatewayv1.GatewayReasonProgrammed, unresolved: map[gatewayv1.SectionName]gateway.Reason{id("tls"): {Reason: "RefNotPermitted", Message: "no grant"}},
		pending: map[gatewayv1.SectionName]gateway.Reason{id("tls"): {Reason: "Invalid", Message: "its certificateRefs do not resolve"}}}
	got := listenerSetStatus(set, st, p, servesAll)
	if c := cond(got.Conditions, "Programmed"); c.Status != metav1.ConditionTrue || c.Reason != "Programmed" {
		t.Errorf("admitted, the Gateway programmed: Programmed %+v", c)
	}
	if len(got.Listeners) != 3 || got.Listeners[0].AttachedRoutes != 2 || len(got.Listeners[0].SupportedKinds) == 0 {
		t.Fatalf("listeners %+v", got.Listeners)
	}
	for typ, want := range map[string]string{"Accepted": "True", "Programmed": "True", "ResolvedRefs": "True", "Conflicted": "False"} {
		if c := cond(got.Listeners[0].Conditions, typ); string(c.Status) != want {
			t.Errorf("listener ok: %s %+v", typ, c)
		}
	}
	for typ, want := range map[string]string{"Accepted": "False", "Programmed": "False", "Conflicted": "True"} {
		if c := cond(got.Listeners[1].Conditions, typ); string(c.Status) != want || c.Reason != "ProtocolConflict" {
			t.Errorf("listener clash: %s %+v", typ, c)
		}
	}
	if c := cond(got.Listeners[2].Conditions, "ResolvedRefs"); c.Status != metav1.ConditionFalse || c.Reason != "RefNotPermitted" {
		t.Errorf("listener tls: ResolvedRefs %+v", c)
	}
	if c := cond(got.Listeners[2].Conditions, "Programmed"); c.Status != metav1.ConditionFalse || c.Reason != "Invalid" {
		t.Errorf("listener tls: Programmed %+v", c)
	}

	// The load balancer not built: the ListenerSet is not told why in the
	// Gateway's words, which may quote another team's objects.
	failed := programmed{reason: gatewayv1.GatewayReasonPending, message: "pod pools: pod pool team-b/web-80-tcp: awaiting approval"}
	got = listenerSetStatus(set, st, failed, servesAll)
	if c := cond(got.Conditions, "Programmed"); c.Status != metav1.ConditionFalse || strings.Contains(c.Message, "team-b") {
		t.Errorf("the Gateway not programmed: Programmed %+v, want False naming no other team", c)
	}
	if c := cond(got.Listeners[0].Conditions, "Programmed"); c.Status != metav1.ConditionFalse || strings.Contains(c.Message, "team-b") {
		t.Errorf("the Gateway not programmed: listener ok's Programmed %+v, want False naming no other team", c)
	}
}

// On a real API server: a route attached through a ListenerSet has an
// entry for it; the ListenerSet deleted, the entry goes; the Gateway
// deleted, its ListenerSets say ParentNotAccepted with no listeners, and
// no route keeps an entry for them.
func TestListenerSetStatusesFollowTheirParents(t *testing.T) {
	f := start(t)
	ctx := testkit.Context(t)
	f.namespace(t, "infra", nil)
	f.namespace(t, "team-a", nil)
	_, err := f.gw.GatewayV1().GatewayClasses().Create(ctx, &gatewayv1.GatewayClass{ObjectMeta: metav1.ObjectMeta{Name: "example"},
		Spec: gatewayv1.GatewayClassSpec{ControllerName: ControllerName}}, metav1.CreateOptions{})
	testkit.Must(t, err)
	all := gatewayv1.NamespacesFromAll
	_, err = f.gw.GatewayV1().Gateways("infra").Create(ctx, &gatewayv1.Gateway{ObjectMeta: metav1.ObjectMeta{Name: "gw"},
		Spec: gatewayv1.GatewaySpec{GatewayClassName: "example",
			AllowedListeners: &gatewayv1.AllowedListeners{Namespaces: &gatewayv1.ListenerNamespaces{From: &all}},
			Listeners:        []gatewayv1.Listener{{Name: "http", Port: 80, Protocol: gatewayv1.HTTPProtocolType}}}}, metav1.CreateOptions{})
	testkit.Must(t, err)
	set := func(name string) {
		_, err := f.gw.GatewayV1().ListenerSets("team-a").Create(ctx, &gatewayv1.ListenerSet{ObjectMeta: metav1.ObjectMeta{Name: name},
			Spec: gatewayv1.ListenerSetSpec{ParentRef: gatewayv1.ParentGatewayReference{Name: "gw", Namespace: ptr.To(gatewayv1.Namespace("infra"))},
				Listeners: []gatewayv1.ListenerEntry{{Name: "shop", Port: 80, Protocol: gatewayv1.HTTPProtocolType, Hostname: ptr.To(gatewayv1.Hostname("shop.example"))}}}},
			metav1.CreateOptions{})
		testkit.Must(t, err)
	}
	set("ls")
	set("other")
	kind := gateway.KindListenerSet
	_, err = f.gw.GatewayV1().HTTPRoutes("team-a").Create(ctx, &gatewayv1.HTTPRoute{ObjectMeta: metav1.ObjectMeta{Name: "shop"},
		Spec: gatewayv1.HTTPRouteSpec{CommonRouteSpec: gatewayv1.CommonRouteSpec{ParentRefs: []gatewayv1.ParentReference{
			{Kind: &kind, Name: "ls"}, {Kind: &kind, Name: "other"}}}}}, metav1.CreateOptions{})
	testkit.Must(t, err)
	entries := func(want ...gatewayv1.ObjectName) {
		t.Helper()
		testkit.Eventually(t, 30*time.Second, fmt.Sprintf("route entries %v", want), func() error {
			r, err := f.gw.GatewayV1().HTTPRoutes("team-a").Get(ctx, "shop", metav1.GetOptions{})
			if err != nil {
				return err
			}
			var got []gatewayv1.ObjectName
			for _, p := range r.Status.Parents {
				got = append(got, p.ParentRef.Name)
			}
			if !slices.Equal(got, want) {
				return fmt.Errorf("entries %v", got)
			}
			return nil
		})
	}
	accepted := func(name, reason string, listeners int) {
		t.Helper()
		testkit.Eventually(t, 30*time.Second, fmt.Sprintf("ListenerSet %s %s", name, reason), func() error {
			s, err := f.gw.GatewayV1().ListenerSets("team-a").Get(ctx, name, metav1.GetOptions{})
			if err != nil {
				return err
			}
			if a := meta.FindStatusCondition(s.Status.Conditions, "Accepted"); a == nil || a.Reason != reason || len(s.Status.Listeners) != listeners {
				return fmt.Errorf("status %+v", s.Status)
			}
			return nil
		})
	}
	entries("ls", "other")
	accepted("ls", "Accepted", 1)

	testkit.Must(t, f.gw.GatewayV1().ListenerSets("team-a").Delete(ctx, "ls", metav1.DeleteOptions{}))
	entries("other")

	testkit.Must(t, f.gw.GatewayV1().Gateways("infra").Delete(ctx, "gw", metav1.DeleteOptions{}))
	accepted("other", "ParentNotAccepted", 0)
	entries()
}
