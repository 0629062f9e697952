package servicelb

import (
	"context"
	"errors"
	"slices"
	"testing"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	dynamicfake "k8s.io/client-go/dynamic/fake"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/cloud-provider/api"
	gatewayv1beta1 "sigs.k8s.io/gateway-api/apis/v1beta1"

	"github.com/example/cloud-provider-example/annotations"
	"github.com/example/cloud-provider-example/exampleapi"
	"github.com/example/cloud-provider-example/internal/testkit"
	"github.com/example/cloud-provider-example/referencegrants"
	"github.com/example/cloud-provider-example/review/reviewtest"
	"github.com/example/cloud-provider-example/tenancy"
)

// keeperOf is the leader's address keeper over f's Services, synced by
// the test (key by key) rather than from its queue.
func keeperOf(f *groupFixture) *addressKeeper {
	return &addressKeeper{lb: f.lbs.addresses, store: f.services, leads: func() bool { return true },
		queue: workqueue.NewTypedRateLimitingQueue(workqueue.DefaultTypedControllerRateLimiter[string]())}
}

// holding is the reserved address svc asks for, once the keeper has
// reserved and attached it to svc's load balancer: svc's reconcile
// waits for the keeper, then shows its IP.
func holding(t *testing.T, f *groupFixture, k *addressKeeper, svc *v1.Service) *exampleapi.Address {
	t.Helper()
	var retry *api.RetryError
	if _, err := f.ensure(t, svc); !errors.As(err, &retry) {
		t.Fatalf("%s before the keeper: %v, want a retry", svc.Name, err)
	}
	w, ok := f.lbs.addresses.wantOf(annotations.Read(svc))
	if !ok {
		t.Fatalf("%s asks for no address", svc.Name)
	}
	testkit.Must(t, k.sync(t.Context(), w.key()))
	a, err := f.lbs.addresses.findAddress(t.Context(), w)
	testkit.Must(t, err)
	if ip, err := f.ensure(t, svc); err != nil || a == nil || ip != a.IP {
		t.Fatalf("%s after the keeper: %s %v, want address %+v", svc.Name, ip, err, a)
	}
	return a
}

// attachedTo is the load balancer address id is attached to ("": none).
func attachedTo(ctx context.Context, t *testing.T, f *groupFixture, id string) string {
	t.Helper()
	a, err := f.api.GetAddress(ctx, id)
	testkit.Must(t, err)
	return a.LoadBalancerID
}

// A holder letting go of its address moves it under its own apply policy
// too, not only the taker's: blue (auto) lets go and green takes it; then
// green, under manual, lets go and blue (auto) names it again: the move
// waits for a reviewer, the address left on green's load balancer.
func TestAddressMoveUnderTheHoldersPolicy(t *testing.T) {
	f := newGroupFixture(t, "review: {policy: {rules: []}}\n")
	k := keeperOf(f)
	blue := groupSvc("shop", "blue", 0, "", 80)
	blue.Annotations = map[string]string{string(annotations.LBAddressKeep): "true"}
	a := holding(t, f, k, blue)
	key := addressWant{Ref: a.ID}.key()

	green := groupSvc("shop", "green", 1, "", 81)
	green.Annotations = map[string]string{string(annotations.LBAddress): a.ID}
	var retry *api.RetryError
	if _, err := f.ensure(t, green); !errors.As(err, &retry) {
		t.Fatalf("green while blue holds the address: %v, want a retry", err)
	}
	blue = blue.DeepCopy()
	blue.Annotations = nil
	f.put(t, blue)
	testkit.Must(t, k.sync(t.Context(), key))
	if ip, err := f.ensure(t, green); err != nil || ip != a.IP {
		t.Fatalf("blue let go under auto: green shows %s %v, want %s", ip, err, a.IP)
	}
	greenLB := attachedTo(t.Context(), t, f, a.ID)

	green = green.DeepCopy()
	green.Annotations = map[string]string{string(annotations.LBApplyPolicy): string(annotations.ApplyManual)}
	f.put(t, green)
	blue = blue.DeepCopy()
	blue.Annotations = map[string]string{string(annotations.LBAddress): a.ID}
	f.put(t, blue)
	f.takeEvents()
	testkit.Must(t, k.sync(t.Context(), key))
	if got := attachedTo(t.Context(), t, f, a.ID); got != greenLB {
		t.Fatalf("green let go under manual: the address is on %q, want it left on green's %s until approved", got, greenLB)
	}
	if !slices.Contains(reviewtest.Reasons(f.takeEvents()), "AwaitingApproval") {
		t.Error("the move green's manual holds is not said to await approval")
	}
}

// A Service holding another namespace's address through its grant, with
// deletion policy retain, hands its load balancer over without the
// address: the owner's workspace keeps it (not forgotten), and once the
// Service is gone the keeper takes it off the handed-over load balancer,
// reserved and still the owner's.
func TestRetainLeavesAGrantedAddressWithItsOwner(t *testing.T) {
	f := newGroupFixture(t, "review: {policy: {rules: []}}\n")
	refs := newReferences(f.cfg, f.api)
	refs.watchGrants(t.Context(), dynamicfake.NewSimpleDynamicClientWithCustomListKinds(runtime.NewScheme(),
		map[schema.GroupVersionResource]string{referencegrants.Resource: "ReferenceGrantList"}, addressGrant(t, "team-a", "team-b")))
	f.lbs.shared.refs, f.lbs.shared.groups.refs = refs, refs
	k := keeperOf(f)

	// Alice of team-a keeps an address, then goes: it stays team-a's.
	alice := groupSvc("team-a", "alice", 0, "", 80)
	alice.Annotations = map[string]string{string(annotations.LBAddressKeep): "true"}
	a := holding(t, f, k, alice)
	alice = alice.DeepCopy()
	now := metav1.Now()
	alice.DeletionTimestamp = &now
	f.put(t, alice)
	testkit.Must(t, f.lbs.Delete(t.Context(), alice))
	testkit.Must(t, f.services.Delete(alice))

	// Bob of team-b takes it through team-a's grant, and retains his
	// load balancer.
	bob := groupSvc("team-b", "bob", 1, "", 81)
	bob.Annotations = map[string]string{string(annotations.LBAddress): a.ID, string(annotations.LBDeletionPolicy): annotations.DeletionRetain}
	holding(t, f, k, bob)
	bobLB := attachedTo(t.Context(), t, f, a.ID)

	bob = bob.DeepCopy()
	bob.DeletionTimestamp = &now
	f.put(t, bob)
	testkit.Must(t, f.lbs.Delete(t.Context(), bob))
	if _, kept, err := f.lbs.engine.GetAddress(t.Context(), "team-a", a.Name); err != nil || !kept {
		t.Fatalf("bob handed his load balancer over: team-a's workspace of the address kept: %v %v, want kept", kept, err)
	}
	if lb, err := f.api.GetLoadBalancer(t.Context(), bobLB); err != nil || lb.Status != exampleapi.LBStatusActive {
		t.Fatalf("bob's handed-over load balancer: %+v %v, want it serving", lb, err)
	}

	// Bob gone: the keeper gives the address back to team-a, detached.
	testkit.Must(t, f.services.Delete(bob))
	testkit.Must(t, k.sync(t.Context(), addressWant{Ref: a.ID}.key()))
	back, err := f.api.GetAddress(t.Context(), a.ID)
	testkit.Must(t, err)
	if back.LoadBalancerID != "" || back.IP != a.IP || back.Tags[exampleapi.TagNamespace] != "team-a" {
		t.Fatalf("after bob went, the address is %+v; want %s detached, still team-a's", back, a.IP)
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
