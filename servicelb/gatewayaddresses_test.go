package servicelb

import (
	"errors"
	"slices"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"
	gatewayv1beta1 "sigs.k8s.io/gateway-api/apis/v1beta1"

	"github.com/example/cloud-provider-example/annotations"
	"github.com/example/cloud-provider-example/exampleapi"
	"github.com/example/cloud-provider-example/internal/testkit"
	"github.com/example/cloud-provider-example/lbmodel"
	"github.com/example/cloud-provider-example/objectref"
	"github.com/example/cloud-provider-example/records"
	"github.com/example/cloud-provider-example/review"
	"github.com/example/cloud-provider-example/review/reviewtest"
	"github.com/example/cloud-provider-example/tenancy"
)

// gatewayLB puts Gateway gw's load balancer in the cloud, active on ip,
// tagged as the renderer tags it.
func (c *fakeCloud) gatewayLB(f *fakeServices, gw objectref.Ref, id, ip string) {
	g := lbmodel.LoadBalancer{Namespace: gw.Namespace, Name: gw.Name, UID: gw.UID}
	c.lbs = append(c.lbs, exampleapi.LoadBalancer{ID: id, Status: exampleapi.LBStatusActive, IPv4: ip,
		LoadBalancerSpec: exampleapi.LoadBalancerSpec{Name: lbmodel.GatewayName(g, f.cfg.ClusterID), Region: f.cfg.Region,
			LoadBalancerSettings: exampleapi.LoadBalancerSettings{Tags: lbmodel.OwnerTags(f.cfg.ClusterID, gw, lbmodel.TagGatewayName)}}})
}

// A Gateway takes a reserved address through the same pieces as a
// Service (docs/addresses.md#gateways): the tenancy check (its namespace's,
// or granted to Gateways of its namespace: a grant to Services is not
// one), the address's own workspace, held by its load balancer under the
// Gateway's review; never one another load balancer holds, and the
// keeper never moves one from a Gateway to a Service naming it. It lets
// go of what it no longer names. Over the fakes; end to end, the
// conformance suite's GatewayStaticAddresses and TestGatewayTenancy.
func TestGatewayAddressDecisions(t *testing.T) {
	f := newFakeServices(t, "")
	// team-a lets Services of team-b take its addresses: not Gateways.
	f.granting(t, addressGrant(t, "team-a", "team-b"))
	k := f.keeper()
	infra := &GatewayInfra{addrs: f.services.addresses}

	// Alice of team-a keeps an address, then goes: reserved, detached.
	alice := groupSvc("team-a", "alice", 0, "", 80)
	alice.Annotations = map[string]string{string(annotations.LBAddressKeep): "true"}
	a := f.holding(t, k, alice, f.cloud.serve(f.cfg, alice, "lb-alice", "203.0.113.1"))
	testkit.Must(t, f.services.groups.services.Delete(alice))
	f.cloud.address(a.Name).LoadBalancerID = ""

	gwA, gwB := objectref.Gateway("team-a", "gw", "uid-gw-a"), objectref.Gateway("team-b", "gw", "uid-gw-b")
	f.cloud.gatewayLB(f, gwA, "lb-gw-a", "203.0.113.5")
	f.cloud.gatewayLB(f, gwB, "lb-gw-b", "203.0.113.6")
	usable := func(gw objectref.Ref, ref string) (string, bool) {
		t.Helper()
		why, refused, err := infra.AddressUsable(t.Context(), gw, ref)
		testkit.Must(t, err)
		return why, refused
	}

	// Team-b's Gateway: team-a's address by IP and by id, and one that is
	// no address, refused in the same words, naming nothing of team-a.
	for _, ref := range []string{a.IP, a.ID, "192.0.2.1"} {
		why, refused := usable(gwB, ref)
		if !refused || !strings.Contains(why, "nor one whose namespace lets Gateways of team-b take it") || strings.Contains(why, "team-a") {
			t.Errorf("team-b's Gateway naming %s: %q (refused %v); want the tenancy refusal, naming no owner", ref, why, refused)
		}
	}
	if why, _ := usable(gwA, a.IP); why != "" {
		t.Fatalf("team-a's Gateway naming its own address: %q, want usable", why)
	}

	// Team-a's Gateway takes it: one plan of the address's workspace, its
	// load balancer the holder, under the Gateway's policy and review.
	gwObj := &gatewayv1.Gateway{}
	gwObj.Namespace, gwObj.Name, gwObj.UID = gwA.Namespace, gwA.Name, "uid-gw-a"
	use := lbmodel.AddressUse{Gateway: gwA, LoadBalancerID: "lb-gw-a", IPv4: "203.0.113.5", Take: a.IP, Keep: []string{a.IP},
		Policy: annotations.ApplyAuto}
	subject := func(ns, name string) review.Subject {
		return f.board.GatewayAddressSubject(gwObj, ns, name, records.KindChange)
	}
	ip, _, err := infra.HoldAddresses(t.Context(), use, subject)
	testkit.Must(t, err)
	if got := f.lastAsked(t); ip != a.IP || got.spec.LoadBalancerID != "lb-gw-a" || got.spec.Holder != "Gateway team-a/gw" || got.spec.Namespace != "team-a" || got.spec.ImportID != "" {
		t.Fatalf("held %s as %+v; want %s on lb-gw-a, held by Gateway team-a/gw, team-a's workspace", ip, got, a.IP)
	}
	f.cloud.lbs[len(f.cloud.lbs)-2].IPv4 = a.IP // the cloud gives the load balancer the reserved IP

	// Held by the Gateway: another Gateway cannot take it, and a Service
	// of team-a naming it waits; the keeper leaves it on the Gateway.
	gwA2 := objectref.Gateway("team-a", "other", "uid-gw-a2")
	if why, refused := usable(gwA2, a.IP); refused || !strings.Contains(why, "another load balancer holds it") {
		t.Errorf("another Gateway naming the held address: %q, want held by another load balancer", why)
	}
	bob := groupSvc("team-a", "bob", 1, "", 81)
	bob.Annotations = map[string]string{string(annotations.LBAddress): a.ID}
	f.lbs.lb = f.cloud.serve(f.cfg, bob, "lb-bob", "203.0.113.2")
	asked := len(f.addrs.asked)
	f.put(t, bob)
	testkit.Must(t, k.sync(t.Context(), addressWant{Ref: a.ID}.key()))
	if len(f.addrs.asked) != asked || f.cloud.address(a.Name).LoadBalancerID != "lb-gw-a" {
		t.Fatalf("the keeper moved the Gateway's address to %q (asked %+v)", f.cloud.address(a.Name).LoadBalancerID, f.addrs.asked[asked:])
	}
	f.takeEvents()
	if _, err := f.ensure(t, bob); err == nil {
		t.Fatal("bob shows the Gateway's address")
	}
	if evs := f.takeEvents(); !slices.ContainsFunc(evs, func(e reviewtest.Event) bool {
		return e.Reason == "AddressHeld" && strings.Contains(e.Message, "held by Gateway team-a/gw")
	}) {
		t.Errorf("bob is not told the Gateway holds the address: %v", evs)
	}

	// The Gateway no longer names it: it lets go, detached through its
	// workspace; then the keeper gives it to bob.
	use.Take, use.Keep, use.IPv4, use.Shown = "", nil, a.IP, []string{a.IP}
	_, _, err = infra.HoldAddresses(t.Context(), use, subject)
	testkit.Must(t, err)
	if got := f.lastAsked(t); got.spec.LoadBalancerID != "" || got.spec.Namespace != "team-a" {
		t.Fatalf("let go as %+v, want detached", got)
	}
	testkit.Must(t, k.sync(t.Context(), addressWant{Ref: a.ID}.key()))
	if got := f.cloud.address(a.Name).LoadBalancerID; got != "lb-bob" {
		t.Fatalf("after the Gateway let go, the address is on %q, want bob's", got)
	}

	// Held by bob's load balancer: the Gateway is refused, and asked to
	// take it anyway (raced) it says so and moves nothing.
	use.Take, use.Keep = a.IP, []string{a.IP}
	asked = len(f.addrs.asked)
	if _, _, err := infra.HoldAddresses(t.Context(), use, subject); !errors.Is(err, lbmodel.ErrAddressNotUsable) || len(f.addrs.asked) != asked {
		t.Fatalf("taking bob's address: %v (asked %d more), want ErrAddressNotUsable and nothing asked", err, len(f.addrs.asked)-asked)
	}
}

// A grant from Gateways of team-b lets team-b's Gateway take team-a's
// address; the same grant does not let team-b's Services.
func TestGatewayAddressGranted(t *testing.T) {
	f := newFakeServices(t, "")
	grant, err := runtime.DefaultUnstructuredConverter.ToUnstructured(&gatewayv1beta1.ReferenceGrant{
		TypeMeta:   metav1.TypeMeta{APIVersion: gatewayv1beta1.GroupVersion.String(), Kind: "ReferenceGrant"},
		ObjectMeta: metav1.ObjectMeta{Namespace: "team-a", Name: "gateways-take-addresses"},
		Spec: gatewayv1beta1.ReferenceGrantSpec{
			From: []gatewayv1beta1.ReferenceGrantFrom{{Group: gatewayv1beta1.GroupName, Kind: "Gateway", Namespace: "team-b"}},
			To:   []gatewayv1beta1.ReferenceGrantTo{{Group: tenancy.GrantGroup, Kind: tenancy.GrantAddressKind}},
		},
	})
	testkit.Must(t, err)
	refs := f.granting(t, &unstructured.Unstructured{Object: grant})
	k := f.keeper()
	alice := groupSvc("team-a", "alice", 0, "", 80)
	alice.Annotations = map[string]string{string(annotations.LBAddressKeep): "true"}
	a := f.holding(t, k, alice, f.cloud.serve(f.cfg, alice, "lb-alice", "203.0.113.1"))
	testkit.Must(t, f.services.groups.services.Delete(alice))
	f.cloud.address(a.Name).LoadBalancerID = ""

	why, refused, err := (&GatewayInfra{addrs: f.services.addresses}).AddressUsable(t.Context(), objectref.Gateway("team-b", "gw", "uid-gw-b"), a.IP)
	testkit.Must(t, err)
	if why != "" || refused {
		t.Errorf("team-b's Gateway with team-a's grant to Gateways: %q, want usable", why)
	}
	bob := groupSvc("team-b", "bob", 1, "", 81)
	bob.Annotations = map[string]string{string(annotations.LBAddress): a.ID}
	var no *tenancy.RefusedError
	if err := refs.authorize(t.Context(), annotations.Read(bob)); !errors.As(err, &no) {
		t.Errorf("team-b's Service under a grant to Gateways: %v, want refused", err)
	}
}
