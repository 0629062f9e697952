package servicelb

import (
	"slices"
	"strings"
	"testing"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/example/cloud-provider-example/annotations"
	"github.com/example/cloud-provider-example/internal/testkit"
	"github.com/example/cloud-provider-example/referencegrants"
	"github.com/example/cloud-provider-example/review/reviewtest"
)

// A grant taken back: the group's reconcile from the consent queue (a
// home member the caller) applies it without the guest; the guest is told
// in its own words, the owner names it by its namespace only, and the
// guest's address is cleared. Given again: the guest is back, with the
// group's address, though nothing of its own changed. Over the fakes:
// the members handed to the group's reconcile stand for its listeners.
func TestConsentWithdrawnAndGivenAgain(t *testing.T) {
	f := newFakeServices(t, "review: {policy: {rules: []}}\n")
	f.services.client, f.services.groupLBs.consent = f.client, newConsentQueue()
	dyn := grantsClient(t, "shop", "edge", "front")
	refs := newReferences(f.cfg, nil)
	waitTold := awaitGrantChanges(t, refs, "shop")
	refs.watchGrants(t.Context(), dyn)
	f.services.refs, f.services.groups.refs = refs, refs
	front := annotations.Group{Namespace: "shop", Name: "front"}
	ip := f.groups.lb.IPv4
	guestStatus := func() []v1.LoadBalancerIngress {
		t.Helper()
		cur, err := f.client.CoreV1().Services("edge").Get(t.Context(), "g", metav1.GetOptions{})
		testkit.Must(t, err)
		testkit.Must(t, f.services.groups.services.Update(cur)) // as the informer has it
		return cur.Status.LoadBalancer.Ingress
	}
	lastMembers := func() []string { return f.groups.reconciled[len(f.groups.reconciled)-1] }

	if _, err := f.ensure(t, groupSvc("shop", "a", 0, "front", 80)); err != nil {
		t.Fatal(err)
	}
	guest := groupSvc("edge", "g", 1, "shop/front", 9090)
	if gip, err := f.ensure(t, guest); err != nil || gip != ip {
		t.Fatalf("the guest joins: %s %v, want %s", gip, err, ip)
	}
	guest.Status.LoadBalancer.Ingress = []v1.LoadBalancerIngress{{IP: ip}} // as the service controller sets it
	f.put(t, guest)
	f.takeEvents()

	grants := dyn.Resource(referencegrants.Resource).Namespace("shop")
	testkit.Must(t, grants.Delete(t.Context(), "g", metav1.DeleteOptions{}))
	waitTold("grant deleted")
	testkit.Must(t, f.services.groupLBs.reconcileConsent(t.Context(), front))
	if got := lastMembers(); !slices.Equal(got, []string{"a"}) {
		t.Fatalf("members after the grant's deletion: %q, want the owner only", got)
	}
	evs := f.takeEvents()
	guestSaid := slices.IndexFunc(evs, func(e reviewtest.Event) bool {
		return e.Type == v1.EventTypeWarning && e.Reason == "ReferenceGrantWithdrawn" &&
			strings.Contains(e.Message, `annotation loadbalancer.example.com/group: load balancer group "front" of namespace shop no longer takes this Service`)
	})
	ownerSaid := slices.IndexFunc(evs, func(e reviewtest.Event) bool {
		return e.Type == v1.EventTypeNormal && e.Reason == "ReferenceGrantWithdrawn" &&
			strings.Contains(e.Message, "Load balancer group shop/front no longer serves a Service of namespace edge")
	})
	if guestSaid < 0 || ownerSaid < 0 {
		t.Fatalf("the guest and the owner are not both told: %v", evs)
	}
	if strings.Contains(evs[ownerSaid].Message, "edge/g") {
		t.Errorf("the owner's event names the guest: %s", evs[ownerSaid].Message)
	}
	if in := guestStatus(); len(in) != 0 {
		t.Fatalf("the guest still shows the owner's address: %v", in)
	}
	// Said once: the next reconcile has nothing to say.
	testkit.Must(t, f.services.groupLBs.reconcileConsent(t.Context(), front))
	if evs := f.takeEvents(); slices.Contains(reviewtest.Reasons(evs), "ReferenceGrantWithdrawn") {
		t.Errorf("said again: %v", evs)
	}

	_, err := grants.Create(t.Context(), grantObject(t, "shop", "edge", "front"), metav1.CreateOptions{})
	testkit.Must(t, err)
	waitTold("grant created")
	testkit.Must(t, f.services.groupLBs.reconcileConsent(t.Context(), front))
	if got := lastMembers(); len(got) != 2 || !slices.Contains(got, "g") {
		t.Fatalf("members after the grant came back: %q, want the guest too", got)
	}
	if in := guestStatus(); len(in) != 1 || in[0].IP != ip {
		t.Fatalf("the guest let in again shows %v, want %s", in, ip)
	}
}
