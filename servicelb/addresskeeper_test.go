package servicelb

import (
	"errors"
	"slices"
	"strings"
	"testing"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/cloud-provider/api"
	gatewayv1beta1 "sigs.k8s.io/gateway-api/apis/v1beta1"

	"github.com/example/cloud-provider-example/annotations"
	"github.com/example/cloud-provider-example/engine"
	"github.com/example/cloud-provider-example/exampleapi"
	"github.com/example/cloud-provider-example/internal/testkit"
	"github.com/example/cloud-provider-example/review/reviewtest"
	"github.com/example/cloud-provider-example/tenancy"
)

// keeper is the leader's address keeper over f's Services, synced by
// the test (key by key) rather than from its queue.
func (f *fakeServices) keeper() *addressKeeper {
	k := &addressKeeper{lb: f.services.addresses, serviceQueue: &serviceQueue{store: f.services.groups.services, leads: func() bool { return true },
		queue: workqueue.NewTypedRateLimitingQueue(workqueue.DefaultTypedControllerRateLimiter[string]())}}
	k.releases = newReleaser(k)
	return k
}

// holding puts svc, whose own load balancer lb is active in the cloud,
// and has the keeper converge the address it asks for: svc then shows
// that address's IP. It returns the address as the cloud has it.
func (f *fakeServices) holding(t *testing.T, k *addressKeeper, svc *v1.Service, lb *engine.LoadBalancer) *exampleapi.Address {
	t.Helper()
	f.put(t, svc)
	w, ok := f.services.addresses.wantOf(annotations.Read(svc))
	if !ok {
		t.Fatalf("%s asks for no address", svc.Name)
	}
	testkit.Must(t, k.sync(t.Context(), w.key()))
	a, err := f.services.addresses.findAddress(t.Context(), w)
	testkit.Must(t, err)
	f.lbs.lb = lb
	if ip, err := f.ensure(t, svc); err != nil || a == nil || a.LoadBalancerID != lb.ID || ip != a.IP {
		t.Fatalf("%s after the keeper: %s %v, want address %+v on %s", svc.Name, ip, err, a, lb.ID)
	}
	return a
}

// lastAsked is the last reconcile of an address's workspace asked.
func (f *fakeServices) lastAsked(t *testing.T) addressAsk {
	t.Helper()
	if len(f.addrs.asked) == 0 {
		t.Fatal("no address reconciled")
	}
	return f.addrs.asked[len(f.addrs.asked)-1]
}

// A holder letting go of its address moves it under its own apply policy
// too, not only the taker's: blue (auto) lets go and green takes it; then
// green, under manual, lets go and blue (auto) names it again: the move
// waits for a reviewer, the address left on green's load balancer. Over
// the fakes: who takes the address, and under whose policy, is servicelb's
// decision; that a manual plan waits is the engine's (end to end:
// TestReservedAddresses).
func TestAddressMoveUnderTheHoldersPolicy(t *testing.T) {
	f := newFakeServices(t, "")
	refs := newReferences(f.cfg, f.cloud) // reads the addresses' owners
	f.services.refs, f.services.groups.refs = refs, refs
	k := f.keeper()
	blue := groupSvc("shop", "blue", 0, "", 80)
	blue.Annotations = map[string]string{string(annotations.LBAddressKeep): "true"}
	green := groupSvc("shop", "green", 1, "", 81)
	blueLB, greenLB := f.cloud.serve(f.cfg, blue, "lb-blue", "203.0.113.1"), f.cloud.serve(f.cfg, green, "lb-green", "203.0.113.2")
	a := f.holding(t, k, blue, blueLB)
	if got := f.lastAsked(t); got.spec.Namespace != "shop" || got.spec.ImportID != "" || got.spec.Holder != "Service shop/blue" || got.policy != annotations.ApplyAuto {
		t.Fatalf("reserved as %+v, want shop's, for blue, under auto", got)
	}
	key := addressWant{Ref: a.ID}.key()

	// green names it while blue holds it: it waits, told who holds it.
	green.Annotations = map[string]string{string(annotations.LBAddress): a.ID}
	f.lbs.lb = greenLB
	var retry *api.RetryError
	if _, err := f.ensure(t, green); !errors.As(err, &retry) || strings.Contains(err.Error(), "lb-blue") {
		t.Fatalf("green while blue holds the address: %v, want a retry naming no load balancer (it reaches green's events)", err)
	}
	if evs := f.takeEvents(); !slices.ContainsFunc(evs, func(e reviewtest.Event) bool {
		return e.Reason == "AddressHeld" && strings.Contains(e.Message, "held by Service shop/blue")
	}) {
		t.Fatalf("green is not told blue holds the address: %v", evs)
	}
	blue = blue.DeepCopy()
	blue.Annotations = nil
	f.put(t, blue)
	testkit.Must(t, k.sync(t.Context(), key))
	if ip, err := f.ensure(t, green); err != nil || ip != a.IP {
		t.Fatalf("blue let go under auto: green shows %s %v, want %s", ip, err, a.IP)
	}
	if got := f.lastAsked(t); got.spec.LoadBalancerID != greenLB.ID || got.policy != annotations.ApplyAuto {
		t.Fatalf("moved as %+v, want to green's under auto", got)
	}

	// green, under manual, lets go; blue names it again. The cluster and
	// blue are auto, green's manual holds the move.
	green = green.DeepCopy()
	green.Annotations = map[string]string{string(annotations.LBApplyPolicy): string(annotations.ApplyManual)}
	f.put(t, green)
	blue = blue.DeepCopy()
	blue.Annotations = map[string]string{string(annotations.LBAddress): a.ID}
	f.put(t, blue)
	f.takeEvents()
	testkit.Must(t, k.sync(t.Context(), key))
	if got := f.lastAsked(t); got.spec.LoadBalancerID != blueLB.ID || got.policy != annotations.ApplyManual {
		t.Fatalf("moved as %+v, want back to blue's under green's manual", got)
	}
	if got := f.cloud.address(a.Name).LoadBalancerID; got != greenLB.ID {
		t.Fatalf("green let go under manual: the address is on %q, want it left on green's %s until approved", got, greenLB.ID)
	}
	if !slices.Contains(reviewtest.Reasons(f.takeEvents()), "AwaitingApproval") {
		t.Error("the move green's manual holds is not said to await approval")
	}
}

// A Service holding another namespace's address through its grant, with
// deletion policy retain, hands its load balancer over without the
// address: the owner's workspace keeps it (not forgotten), and once the
// Service is gone the keeper takes it off the handed-over load balancer,
// reserved and still the owner's. Its own namespace's address goes with
// its load balancer. Over the fakes: what is handed over and what the
// keeper asks; end to end, TestTenancy's address row and TestHandOver.
func TestRetainLeavesAGrantedAddressWithItsOwner(t *testing.T) {
	f := newFakeServices(t, "")
	f.granting(t, addressGrant(t, "team-a", "team-b"))
	k := f.keeper()
	deletion := string(annotations.LBDeletionPolicy)
	now := metav1.Now()

	// Alice of team-a keeps an address, then goes: it stays team-a's.
	alice := groupSvc("team-a", "alice", 0, "", 80)
	alice.Annotations = map[string]string{string(annotations.LBAddressKeep): "true"}
	a := f.holding(t, k, alice, f.cloud.serve(f.cfg, alice, "lb-alice", "203.0.113.1"))
	testkit.Must(t, f.services.groups.services.Delete(alice))
	f.cloud.address(a.Name).LoadBalancerID = "" // alice's load balancer destroyed

	// Bob of team-b takes it through team-a's grant, and retains his
	// load balancer.
	bob := groupSvc("team-b", "bob", 1, "", 81)
	bob.Annotations = map[string]string{string(annotations.LBAddress): a.ID, deletion: annotations.DeletionRetain}
	bobLB := f.cloud.serve(f.cfg, bob, "lb-bob", "203.0.113.2")
	f.holding(t, k, bob, bobLB)
	bob = bob.DeepCopy()
	bob.DeletionTimestamp = &now
	f.put(t, bob)
	testkit.Must(t, f.services.delete(t.Context(), bob))
	if _, kept, err := f.addrs.GetAddress(t.Context(), "team-a", a.Name); err != nil || !kept || len(f.addrs.retained) != 0 {
		t.Fatalf("bob handed his load balancer over: team-a's workspace kept: %v %v, forgotten %q; want it kept", kept, err, f.addrs.retained)
	}
	if !slices.Equal(f.lbs.retained, []string{"team-b/bob"}) {
		t.Fatalf("handed over %q, want bob's load balancer", f.lbs.retained)
	}

	// Bob gone: the keeper gives the address back to team-a, detached.
	testkit.Must(t, f.services.groups.services.Delete(bob))
	testkit.Must(t, k.sync(t.Context(), addressWant{Ref: a.ID}.key()))
	if got := f.lastAsked(t); got.spec.Namespace != "team-a" || got.spec.Name != a.Name || got.spec.LoadBalancerID != "" {
		t.Fatalf("after bob went, the address was asked as %+v; want team-a's, detached", got)
	}
	if back := f.cloud.address(a.Name); back.LoadBalancerID != "" || back.IP != a.IP || back.Tags[exampleapi.TagNamespace] != "team-a" {
		t.Fatalf("after bob went, the address is %+v; want %s detached, still team-a's", back, a.IP)
	}

	// Carol of team-b keeps an address of her own and retains her load
	// balancer: the address goes with it.
	carol := groupSvc("team-b", "carol", 2, "", 82)
	carol.Annotations = map[string]string{string(annotations.LBAddressKeep): "true", deletion: annotations.DeletionRetain}
	c := f.holding(t, k, carol, f.cloud.serve(f.cfg, carol, "lb-carol", "203.0.113.3"))
	carol = carol.DeepCopy()
	carol.DeletionTimestamp = &now
	f.put(t, carol)
	testkit.Must(t, f.services.delete(t.Context(), carol))
	if want := []string{"team-b/" + c.Name}; !slices.Equal(f.addrs.retained, want) {
		t.Fatalf("carol handed over %q, want her address %q", f.addrs.retained, want)
	}
}

// addressGrant is a ReferenceGrant "addresses" in ns: Services of from
// may take its reserved addresses (all).
func addressGrant(t *testing.T, ns, from string) *unstructured.Unstructured {
	t.Helper()
	grant, err := runtime.DefaultUnstructuredConverter.ToUnstructured(&gatewayv1beta1.ReferenceGrant{
		TypeMeta:   metav1.TypeMeta{APIVersion: gatewayv1beta1.GroupVersion.String(), Kind: "ReferenceGrant"},
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "addresses"},
		Spec: gatewayv1beta1.ReferenceGrantSpec{
			From: []gatewayv1beta1.ReferenceGrantFrom{{Kind: "Service", Namespace: gatewayv1beta1.Namespace(from)}},
			To:   []gatewayv1beta1.ReferenceGrantTo{{Group: tenancy.GrantGroup, Kind: tenancy.GrantAddressKind}},
		},
	})
	testkit.Must(t, err)
	return &unstructured.Unstructured{Object: grant}
}
