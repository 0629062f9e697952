package review

import (
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/example/cloud-provider-example/engine"
	"github.com/example/cloud-provider-example/objectref"
	"github.com/example/cloud-provider-example/records"
)

// eventsByObject records each event with the name of the object it
// went to (client-go's FakeRecorder keeps no name).
type eventsByObject struct {
	mu  sync.Mutex
	got []string // "Kind ns/name reason: message"
}

func (r *eventsByObject) Event(o runtime.Object, typ, reason, msg string) {
	ref, _ := o.(*v1.ObjectReference)
	r.mu.Lock()
	defer r.mu.Unlock()
	r.got = append(r.got, fmt.Sprintf("%s %s/%s %s %s: %s", ref.Kind, ref.Namespace, ref.Name, ref.UID, reason, msg))
}

func (r *eventsByObject) Eventf(o runtime.Object, typ, reason, format string, args ...any) {
	r.Event(o, typ, reason, fmt.Sprintf(format, args...))
}

func (r *eventsByObject) AnnotatedEventf(o runtime.Object, _ map[string]string, typ, reason, format string, args ...any) {
	r.Eventf(o, typ, reason, format, args...)
}

// TestRuleSetEventsGoToTheRoute: what became of a rule set's plan is told
// on its route, to the author of the change (ADR 28), with the route's
// UID that kubectl describe finds events by; what may name another
// team's objects (an ignored approval) and a failure's error stay on the
// Gateway, the route told only that its rules failed. A set whose route
// is gone (a destroy) tells the Gateway.
func TestRuleSetEventsGoToTheRoute(t *testing.T) {
	f := newReviewFixture(t, "", false)
	rec := &eventsByObject{}
	f.setClient(f.client, rec)
	gw := &gatewayv1.Gateway{ObjectMeta: metav1.ObjectMeta{Namespace: "infra", Name: "gw", UID: "uid-gw"}}
	ref := objectref.RuleSet("infra", "gw", objectref.KindHTTPRoute, "team-b", "cross")
	in := GatewayInputs{Routes: []objectref.Ref{
		{Kind: objectref.KindHTTPRoute, Namespace: "team-a", Name: "cross", UID: "uid-a"},
		{Kind: objectref.KindHTTPRoute, Namespace: "team-b", Name: "cross", UID: "uid-cross"},
	}}
	s := f.RuleSetSubject(gw, in, ref, records.KindChange)
	for _, reason := range []string{"Planned", "AwaitingApproval", "ApprovalIgnored", "Applied"} {
		f.eventf(s, v1.EventTypeNormal, reason, "plan-aaaaaaaaaaaa")
	}
	f.Failed(s, &engine.RunError{Op: "apply", Workspace: "ws", Diagnostics: "Error: load balancer lb-1 of HTTPRoute team-c/secret"})
	want := []string{
		"HTTPRoute team-b/cross uid-cross Planned: plan-aaaaaaaaaaaa",
		"HTTPRoute team-b/cross uid-cross AwaitingApproval: plan-aaaaaaaaaaaa",
		"Gateway infra/gw uid-gw ApprovalIgnored: plan-aaaaaaaaaaaa",
		"HTTPRoute team-b/cross uid-cross Applied: plan-aaaaaaaaaaaa",
		"HTTPRoute team-b/cross uid-cross RulesFailed: The rules of this route on Gateway infra/gw could not be applied; the Gateway's events say why (its owners read them)",
	}
	if len(rec.got) != len(want)+1 || !slices.Equal(rec.got[:len(want)], want) {
		t.Fatalf("events:\n%s\nwant first:\n%s", strings.Join(rec.got, "\n"), strings.Join(want, "\n"))
	}
	if last := rec.got[len(want)]; !strings.HasPrefix(last, "Gateway infra/gw uid-gw ApplyFailed: ") || !strings.Contains(last, "team-c/secret") {
		t.Errorf("the failure's error: %q; want it on the Gateway", last)
	}

	rec.got = nil
	gone := f.RuleSetSubject(gw, GatewayInputs{}, ref, records.KindDestroy)
	f.eventf(gone, v1.EventTypeNormal, "Applied", "plan-bbbbbbbbbbbb")
	if !slices.Equal(rec.got, []string{"Gateway infra/gw uid-gw Applied: plan-bbbbbbbbbbbb"}) {
		t.Errorf("a gone route's set: events %q; want them on the Gateway", rec.got)
	}
}
