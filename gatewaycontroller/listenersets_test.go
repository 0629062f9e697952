package gatewaycontroller

import (
	"testing"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/example/cloud-provider-example/gateway"
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

	notAllowed := listenerSetStatus(set, gateway.ListenerSetState{Accepted: gateway.Reason{Reason: "NotAllowed", Message: "no"}}, programmed{ok: true})
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
	got := listenerSetStatus(set, st, p)
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
}
