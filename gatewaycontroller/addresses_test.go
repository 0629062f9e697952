package gatewaycontroller

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	kubefake "k8s.io/client-go/kubernetes/fake"
	"k8s.io/utils/ptr"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"
	gwfake "sigs.k8s.io/gateway-api/pkg/client/clientset/versioned/fake"

	"github.com/example/cloud-provider-example/annotations"
	"github.com/example/cloud-provider-example/engine"
	"github.com/example/cloud-provider-example/gateway"
	"github.com/example/cloud-provider-example/internal/testkit"
	"github.com/example/cloud-provider-example/lbmodel"
	"github.com/example/cloud-provider-example/objectref"
	"github.com/example/cloud-provider-example/review"
)

// fakeAddresses answers for the reserved addresses as package servicelb
// would: why each is not usable (by ref; absent: usable), and what
// holding them comes to. It keeps what it was asked to hold.
type fakeAddresses struct {
	why     map[string]string
	refused map[string]bool
	holdErr error
	held    []lbmodel.AddressUse
}

func (f *fakeAddresses) AddressUsable(_ context.Context, _ objectref.Ref, ref string) (string, bool, error) {
	return f.why[ref], f.refused[ref], nil
}

func (f *fakeAddresses) HoldAddresses(_ context.Context, u lbmodel.AddressUse, _ func(ns, name string) review.Subject) (string, string, error) {
	f.held = append(f.held, u)
	if f.holdErr != nil {
		return "", "", f.holdErr
	}
	if u.Take != "" {
		return u.Take, "", nil // the load balancer's IPv4 is the reserved one
	}
	return u.IPv4, u.IPv6, nil
}

// What a Gateway's spec.addresses comes to (docs/addresses.md#gateways):
// an address the cloud says it cannot use, an empty value or two of a
// family leave it not Programmed with nothing built, saying each; a
// usable one is taken once the load balancer is active and is the one
// address of its status; a plan of the address awaiting approval is
// Pending; one taken meanwhile is AddressNotUsable. Over fakes: what
// servicelb decides is TestGatewayAddressDecisions.
func TestProgramStaticAddresses(t *testing.T) {
	active := &engine.LoadBalancer{ID: "lb-1", IPv4: "203.0.113.7", Status: "active"}
	for _, tc := range []struct {
		name      string
		addresses []gatewayv1.GatewaySpecAddress
		why       map[string]string
		refused   map[string]bool
		holdErr   error
		finalizer bool
		reason    gatewayv1.GatewayConditionReason
		has       []string
		built     bool
		// take and keep are what HoldAddresses is asked (nil: not asked).
		take string
		keep []string
		want []string
	}{
		{name: "none named: the load balancer's own", reason: gatewayv1.GatewayReasonProgrammed, built: true, want: []string{"203.0.113.7"}},
		{name: "a usable one by IP", addresses: []gatewayv1.GatewaySpecAddress{{Value: "203.0.113.50"}},
			reason: gatewayv1.GatewayReasonProgrammed, built: true, take: "203.0.113.50", keep: []string{"203.0.113.50"}, want: []string{"203.0.113.50"}},
		{name: "a usable one by id", addresses: []gatewayv1.GatewaySpecAddress{{Type: ptr.To(gatewayv1.NamedAddressType), Value: "addr-1"}},
			reason: gatewayv1.GatewayReasonProgrammed, built: true, take: "addr-1", keep: []string{"addr-1"}, want: []string{"addr-1"}},
		{name: "not one the namespace may take", addresses: []gatewayv1.GatewaySpecAddress{{Value: "192.0.2.1"}},
			why: map[string]string{"192.0.2.1": "192.0.2.1: it is not a reserved address of namespace infra"}, refused: map[string]bool{"192.0.2.1": true},
			reason: gatewayv1.GatewayReasonAddressNotUsable, has: []string{"192.0.2.1: it is not a reserved address of namespace infra"}},
		{name: "two of a family, one unusable: both said", addresses: []gatewayv1.GatewaySpecAddress{{Value: "192.0.2.1"}, {Value: "203.0.113.50"}},
			why: map[string]string{"192.0.2.1": "192.0.2.1: it is not a reserved address of namespace infra"}, refused: map[string]bool{"192.0.2.1": true},
			reason: gatewayv1.GatewayReasonAddressNotUsable, has: []string{"192.0.2.1: it is not", "names 2 IPv4 addresses"}},
		{name: "held by another load balancer", addresses: []gatewayv1.GatewaySpecAddress{{Value: "203.0.113.50"}},
			why:    map[string]string{"203.0.113.50": "203.0.113.50: another load balancer holds it"},
			reason: gatewayv1.GatewayReasonAddressNotUsable, has: []string{"another load balancer holds it"}},
		{name: "an empty value", addresses: []gatewayv1.GatewaySpecAddress{{Type: ptr.To(gatewayv1.IPAddressType)}},
			reason: gatewayv1.GatewayReasonAddressNotAssigned, has: []string{"spec.addresses[0] names no address"}},
		{name: "built before, now refused: lets go of all but what it may keep", finalizer: true,
			addresses: []gatewayv1.GatewaySpecAddress{{Value: "192.0.2.1"}, {Value: "203.0.113.50"}},
			why:       map[string]string{"192.0.2.1": "192.0.2.1: it is not a reserved address of namespace infra"}, refused: map[string]bool{"192.0.2.1": true},
			reason: gatewayv1.GatewayReasonAddressNotUsable, take: "", keep: []string{"203.0.113.50"}},
		{name: "its plan awaits approval", addresses: []gatewayv1.GatewaySpecAddress{{Value: "203.0.113.50"}},
			holdErr: fmt.Errorf("reserved address addr-1: %w", &engine.AwaitingApprovalError{PlanID: "plan-0123456789ab", Policy: annotations.ApplyManual}),
			reason:  gatewayv1.GatewayReasonPending, has: []string{"plan-0123456789ab"}, built: true, take: "203.0.113.50", keep: []string{"203.0.113.50"}},
		{name: "taken by another meanwhile", addresses: []gatewayv1.GatewaySpecAddress{{Value: "203.0.113.50"}},
			holdErr: fmt.Errorf("%w: 203.0.113.50: another load balancer holds it", lbmodel.ErrAddressNotUsable),
			reason:  gatewayv1.GatewayReasonAddressNotUsable, has: []string{"another load balancer holds it"}, built: true, take: "203.0.113.50", keep: []string{"203.0.113.50"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			gw := &gatewayv1.Gateway{ObjectMeta: metav1.ObjectMeta{Namespace: "infra", Name: "gw", UID: "uid-gw"},
				Spec: gatewayv1.GatewaySpec{GatewayClassName: "example", Addresses: tc.addresses,
					Listeners: []gatewayv1.Listener{{Name: "http", Port: 80, Protocol: gatewayv1.HTTPProtocolType}}}}
			if tc.finalizer {
				gw.Finalizers = []string{Finalizer}
			}
			eng, addrs := &fakeEngine{lb: active}, &fakeAddresses{why: tc.why, refused: tc.refused, holdErr: tc.holdErr}
			c := &Controller{gw: newClient(t, gw), services: serviceLister(t), cloud: &Cloud{Engine: eng, Review: &fakeReview{},
				Infra: fakeInfra{}, Addresses: addrs, Settings: Settings{Policy: annotations.ApplyAuto}}}
			tr := gateway.Translation{Addresses: gateway.AddressesOf(gw)}
			p, err := c.program(t.Context(), gw, nil, tr)
			if err != nil {
				t.Fatal(err)
			}
			if p.reason != tc.reason || p.ok != (tc.reason == gatewayv1.GatewayReasonProgrammed) {
				t.Fatalf("programmed %+v, want reason %s", p, tc.reason)
			}
			for _, h := range tc.has {
				if !strings.Contains(p.message, h) {
					t.Errorf("message %q does not say %q", p.message, h)
				}
			}
			if built := len(eng.built) > 0; built != tc.built {
				t.Errorf("built %v, want %v: nothing is built while an address cannot be used", built, tc.built)
			}
			switch {
			case tc.take == "" && tc.keep == nil && tc.reason != gatewayv1.GatewayReasonProgrammed:
				if len(addrs.held) != 0 {
					t.Errorf("asked to hold %+v; nothing was ever built", addrs.held)
				}
			case tc.take != "" || tc.keep != nil:
				if len(addrs.held) != 1 || addrs.held[0].Take != tc.take || !slices.Equal(addrs.held[0].Keep, tc.keep) {
					t.Errorf("asked to hold %+v, want take %q keep %q", addrs.held, tc.take, tc.keep)
				}
			}
			var got []string
			for _, a := range p.addresses {
				got = append(got, a.Value)
				if a.Type == nil || *a.Type != gatewayv1.IPAddressType {
					t.Errorf("status address %+v, want type IPAddress", a)
				}
			}
			if tc.want != nil && !slices.Equal(got, tc.want) {
				t.Errorf("status addresses %q, want %q", got, tc.want)
			}
		})
	}
}

// A type the cloud does not take is Accepted False, UnsupportedAddress:
// nothing is built, whatever else the Gateway names (the conformance
// suite's GatewayStaticAddresses, first step).
func TestUnsupportedAddressNotAccepted(t *testing.T) {
	gw := &gatewayv1.Gateway{ObjectMeta: metav1.ObjectMeta{Namespace: "infra", Name: "gw", Generation: 2},
		Spec: gatewayv1.GatewaySpec{Addresses: []gatewayv1.GatewaySpecAddress{{Type: ptr.To(gatewayv1.AddressType("test/fake-invalid-type")), Value: "x"}, {Value: "203.0.113.50"}},
			Listeners: []gatewayv1.Listener{{Name: "http", Port: 80, Protocol: gatewayv1.HTTPProtocolType}}}}
	tr := gateway.Translation{Addresses: gateway.AddressesOf(gw)}
	st := gatewayStatus(gw, tr, notAccepted(gw, tr.Addresses), servesAll)
	a := meta.FindStatusCondition(st.Conditions, string(gatewayv1.GatewayConditionAccepted))
	if a == nil || a.Status != metav1.ConditionFalse || a.Reason != string(gatewayv1.GatewayReasonUnsupportedAddress) || a.ObservedGeneration != 2 ||
		!strings.Contains(a.Message, `"test/fake-invalid-type"`) {
		t.Errorf("Accepted = %+v, want False, UnsupportedAddress naming the type", a)
	}
	if p := meta.FindStatusCondition(st.Conditions, string(gatewayv1.GatewayConditionProgrammed)); p == nil || p.Status != metav1.ConditionFalse {
		t.Errorf("Programmed = %+v, want False", p)
	}
}

// What a release of a reserved address waits for (servicelb's
// TestAddressRelease): the addresses each Gateway of this controller's
// class names, an IP or an id; not those of another class's Gateway,
// nor of one not accepted for its addresses (it takes none). Nothing is
// said before the Gateways are read.
func TestNamedAddresses(t *testing.T) {
	gwc, kube := gwfake.NewSimpleClientset(), kubefake.NewClientset()
	ctx := t.Context()
	for name, controller := range map[string]gatewayv1.GatewayController{"example": ControllerName, "other": "other.example/c"} {
		_, err := gwc.GatewayV1().GatewayClasses().Create(ctx, &gatewayv1.GatewayClass{ObjectMeta: metav1.ObjectMeta{Name: name},
			Spec: gatewayv1.GatewayClassSpec{ControllerName: controller}}, metav1.CreateOptions{})
		testkit.Must(t, err)
	}
	named := ptr.To(gatewayv1.NamedAddressType)
	for _, gw := range []struct {
		name, class string
		addresses   []gatewayv1.GatewaySpecAddress
	}{
		{"by-ip", "example", []gatewayv1.GatewaySpecAddress{{Value: "203.0.113.50"}}},
		{"by-id", "example", []gatewayv1.GatewaySpecAddress{{Type: named, Value: "addr-1"}}},
		{"none", "example", nil},
		{"theirs", "other", []gatewayv1.GatewaySpecAddress{{Value: "203.0.113.51"}}},
		{"unsupported", "example", []gatewayv1.GatewaySpecAddress{{Type: ptr.To(gatewayv1.AddressType("test/fake")), Value: "x"}, {Value: "203.0.113.52"}}},
	} {
		_, err := gwc.GatewayV1().Gateways("infra").Create(ctx, &gatewayv1.Gateway{ObjectMeta: metav1.ObjectMeta{Namespace: "infra", Name: gw.name, UID: types.UID("uid-" + gw.name)},
			Spec: gatewayv1.GatewaySpec{GatewayClassName: gatewayv1.ObjectName(gw.class), Addresses: gw.addresses}}, metav1.CreateOptions{})
		testkit.Must(t, err)
	}
	c, err := New(gwc, kube, &Cloud{})
	testkit.Must(t, err)
	if _, err := c.NamedAddresses(); err == nil {
		t.Fatal("addresses told before the Gateways were read")
	}
	c = watching(t, gwc, kube, &Cloud{})
	got, err := c.NamedAddresses()
	testkit.Must(t, err)
	want := map[objectref.Ref][]string{
		objectref.Gateway("infra", "by-ip", "uid-by-ip"): {"203.0.113.50"},
		objectref.Gateway("infra", "by-id", "uid-by-id"): {"addr-1"},
	}
	if !maps.EqualFunc(got, want, slices.Equal) {
		t.Errorf("named %v, want %v", got, want)
	}
}
