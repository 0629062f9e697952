package servicelb

import (
	"strings"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/example/cloud-provider-example/annotations"
	"github.com/example/cloud-provider-example/exampleapi"
)

// Who holds an address is decided without a process: the holder keeps it
// while it asks (even while it is being deleted), else the oldest ready
// claim takes it; a claim whose load balancer is not active yet waits.
func TestTakerOf(t *testing.T) {
	at := func(s int) metav1.Time { return metav1.NewTime(time.Unix(int64(s), 0)) }
	claim := func(name string, created int, lbID, status string, deleting bool) addressClaim {
		svc := &v1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: name, CreationTimestamp: at(created)},
			Spec: v1.ServiceSpec{Type: v1.ServiceTypeLoadBalancer}}
		if deleting {
			now := at(100)
			svc.DeletionTimestamp = &now
		}
		c := addressClaim{in: annotations.Read(svc)}
		if lbID != "" {
			c.lb = &exampleapi.LoadBalancer{ID: lbID, Status: status}
		}
		return c
	}
	active := exampleapi.LBStatusActive
	for _, c := range []struct {
		name     string
		attached string
		claims   []addressClaim
		taker    string
		wait     bool
	}{
		{"nobody asks", "lb-1", nil, "", false},
		{"the holder keeps it", "lb-2", []addressClaim{claim("blue", 1, "lb-1", active, false), claim("green", 2, "lb-2", active, false)}, "green", false},
		{"a leaving holder keeps it until its load balancer goes", "lb-1", []addressClaim{claim("blue", 1, "lb-1", active, true), claim("green", 2, "lb-2", active, false)}, "blue", false},
		{"the holder let go: the oldest ready takes it", "lb-9", []addressClaim{claim("blue", 1, "lb-1", active, false), claim("green", 2, "lb-2", active, false)}, "blue", false},
		{"detached: the oldest ready takes it", "", []addressClaim{claim("blue", 1, "lb-1", "provisioning", false), claim("green", 2, "lb-2", active, false)}, "green", false},
		{"no load balancer yet: wait", "", []addressClaim{claim("blue", 1, "", "", false)}, "", true},
		{"a leaving claim never takes it", "", []addressClaim{claim("blue", 1, "lb-1", active, true)}, "", false},
	} {
		t.Run(c.name, func(t *testing.T) {
			taker, wait := takerOf(c.attached, c.claims)
			got := ""
			if taker != nil {
				got = taker.in.Name
			}
			if got != c.taker || wait != c.wait {
				t.Fatalf("taker %q wait %v, want %q %v", got, wait, c.taker, c.wait)
			}
		})
	}
}

// A want is matched against an address without reading the cloud: by id,
// by IP in any notation, or as the Service's own reserved name; its queue
// key carries it whole.
func TestAddressWant(t *testing.T) {
	a := &exampleapi.Address{ObjectMeta: exampleapi.ObjectMeta{ID: "addr-1", Name: "k8s-a-x"}, IP: "2001:db8::1"}
	for _, c := range []struct {
		w    addressWant
		ns   string
		want bool
	}{
		{addressWant{Ref: "addr-1"}, "shop", true},
		{addressWant{Ref: "addr-2"}, "shop", false},
		{addressWant{Ref: "2001:db8:0::1"}, "shop", true},
		{addressWant{Ref: "2001:db8::2"}, "shop", false},
		{addressWant{Namespace: "shop", Name: "k8s-a-x"}, "shop", true},
		{addressWant{Namespace: "media", Name: "k8s-a-x"}, "shop", false},
	} {
		if got := c.w.names(c.ns, "k8s-a-x", a); got != c.want {
			t.Errorf("%s names it: %v, want %v", c.w, got, c.want)
		}
		if back := wantOfKey(c.w.key()); back != c.w {
			t.Errorf("key %q reads back as %+v", c.w.key(), back)
		}
	}
	if (addressWant{Ref: "addr-1"}).names("shop", "k8s-a-x", nil) {
		t.Error("a named address that the cloud does not have matched")
	}
}

// What a Service asks for: the named address (spec.loadBalancerIP folded
// in), else its own with address-keep; annotations in error and another
// controller's Service ask for nothing.
func TestWantOf(t *testing.T) {
	l, _, _ := lbsOverFakes(t, testConfig(t, ""))
	svc := func(ann map[string]string, lbIP string) *v1.Service {
		s := lbService(1, ann)
		s.Spec.LoadBalancerIP = lbIP
		return s
	}
	keep := map[string]string{string(annotations.LBAddressKeep): "true"}
	own := l.engine.ReservedAddressName(svc(keep, ""))
	class := svc(keep, "")
	class.Spec.LoadBalancerClass = new(string)
	for _, c := range []struct {
		name string
		svc  *v1.Service
		want string
	}{
		{"none", svc(nil, ""), ""},
		{"by id", svc(map[string]string{string(annotations.LBAddress): "addr-0a"}, ""), "addr-0a"},
		{"spec.loadBalancerIP", svc(nil, "198.51.100.7"), "198.51.100.7"},
		{"keep, none named", svc(keep, ""), "shop/" + own},
		{"keep with one named", svc(map[string]string{string(annotations.LBAddressKeep): "true", string(annotations.LBAddress): "addr-0a"}, ""), "addr-0a"},
		{"another controller's", class, ""},
		{"group member", svc(map[string]string{string(annotations.LBAddressKeep): "true", string(annotations.LBGroup): "front"}, ""), ""},
		{"in error", svc(map[string]string{string(annotations.LBAddress): "198.51.100.7"}, "198.51.100.8"), ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			w, ok := l.addresses.wantOf(annotations.Read(c.svc))
			if got := map[bool]string{true: w.String()}[ok]; got != c.want {
				t.Fatalf("want %q, expected %q", got, c.want)
			}
		})
	}
}

// A Service asking for an address and refused before anything is
// planned: two IPs named, or an address on a group member.
func TestAddressRefusals(t *testing.T) {
	lbs, eng, rec := lbsOverFakes(t, testConfig(t, ""))
	both := lbService(1, map[string]string{string(annotations.LBAddress): "198.51.100.7"})
	both.Spec.LoadBalancerIP = "198.51.100.8"
	group := lbService(1, map[string]string{string(annotations.LBAddressKeep): "true", string(annotations.LBGroup): "front"})
	for _, c := range []struct {
		svc  *v1.Service
		want string
	}{
		{both, "spec.loadBalancerIP names 198.51.100.8"},
		{group, "a member of load balancer group shop/front serves on the group's address"},
	} {
		_, err := lbs.Ensure(t.Context(), c.svc, nil)
		if events := drain(rec); err == nil || !strings.Contains(events, c.want) {
			t.Fatalf("err %v, events:\n%s\nwant %q", err, events, c.want)
		}
	}
	if n := eng.ran(); n != 0 {
		t.Fatalf("%d reconciles for a refused Service", n)
	}
}

// The reserved IP replaces its family's in the status; the other family's
// stays.
func TestWithAddress(t *testing.T) {
	st := &v1.LoadBalancerStatus{Ingress: []v1.LoadBalancerIngress{{IP: "192.0.2.1"}, {IP: "2001:db8::1"}}}
	got := withAddress(st, &exampleapi.Address{IP: "198.51.100.7", Family: exampleapi.AddressFamilyIPv4})
	if got.Ingress[0].IP != "198.51.100.7" || got.Ingress[1].IP != "2001:db8::1" || st.Ingress[0].IP != "192.0.2.1" {
		t.Fatalf("status %+v (given %+v)", got.Ingress, st.Ingress)
	}
}

// A move of an address is decided under the stricter of the cluster's
// policy, every claim's and the policy of the Service letting go of it:
// the holder's manual or plan-only holds the move, whatever the taker
// asks; a holder whose annotations do not parse counts as manual.
func TestMovePolicy(t *testing.T) {
	svc := func(name, pol string) *annotations.Service {
		ann := map[string]string{}
		if pol != "" {
			ann[string(annotations.LBApplyPolicy)] = pol
		}
		return annotations.Read(&v1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: name, Annotations: ann},
			Spec: v1.ServiceSpec{Type: v1.ServiceTypeLoadBalancer}})
	}
	green := []addressClaim{{in: svc("green", "")}}
	// mallory, of team-b, granted shop's address, waits for it under
	// plan-only; taken by green, or by her.
	mallory := svc("mallory", "plan-only")
	mallory.Namespace, mallory.UID = "team-b", "uid-mallory"
	withGuest := []addressClaim{{in: svc("green", "")}, {in: mallory}}
	for _, c := range []struct {
		name    string
		cluster annotations.ApplyPolicy
		claims  []addressClaim
		from    *annotations.Service
		want    annotations.ApplyPolicy
		taker   *addressClaim
	}{
		{"a waiting guest's plan-only", annotations.ApplyAuto, withGuest, svc("blue", ""), annotations.ApplyAuto, &withGuest[0]},
		{"a guest's plan-only, taking it", annotations.ApplyAuto, withGuest, svc("blue", ""), annotations.ApplyPlanOnly, &withGuest[1]},
		{"nobody lets go", annotations.ApplyAuto, green, nil, annotations.ApplyAuto, nil},
		{"an auto holder lets go", annotations.ApplyAuto, green, svc("blue", ""), annotations.ApplyAuto, nil},
		{"a manual holder lets go", annotations.ApplyAuto, green, svc("blue", "manual"), annotations.ApplyManual, nil},
		{"a plan-only holder lets go", annotations.ApplyAuto, green, svc("blue", "plan-only"), annotations.ApplyPlanOnly, nil},
		{"a holder in error lets go", annotations.ApplyAuto, green, svc("blue", "sometimes"), annotations.ApplyManual, nil},
		{"a manual taker", annotations.ApplyAuto, []addressClaim{{in: svc("green", "manual")}}, svc("blue", ""), annotations.ApplyManual, nil},
		{"detached by a manual holder", annotations.ApplyAuto, nil, svc("blue", "manual"), annotations.ApplyManual, nil},
		{"the cluster's manual", annotations.ApplyManual, green, svc("blue", "auto"), annotations.ApplyManual, nil},
	} {
		if got := movePolicy(c.cluster, "shop", c.taker, c.claims, c.from); got != c.want {
			t.Errorf("%s: %s, want %s", c.name, got, c.want)
		}
	}
}
