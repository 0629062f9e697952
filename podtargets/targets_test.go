package podtargets

import (
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
)

func slice(ns, svc, name string, typ discoveryv1.AddressType, ports []discoveryv1.EndpointPort, eps ...discoveryv1.Endpoint) *discoveryv1.EndpointSlice {
	return &discoveryv1.EndpointSlice{
		ObjectMeta:  metav1.ObjectMeta{Namespace: ns, Name: name, Labels: map[string]string{discoveryv1.LabelServiceName: svc}},
		AddressType: typ, Ports: ports, Endpoints: eps,
	}
}

func port(name string, proto corev1.Protocol, n int32) discoveryv1.EndpointPort {
	return discoveryv1.EndpointPort{Name: ptr.To(name), Protocol: ptr.To(proto), Port: ptr.To(n)}
}

func ep(ready, terminating *bool, addrs ...string) discoveryv1.Endpoint {
	return discoveryv1.Endpoint{Addresses: addrs, Conditions: discoveryv1.EndpointConditions{Ready: ready, Terminating: terminating}}
}

// gatedPod is a pod whose containers are ready, held back by gates.
func gatedPod(gates ...corev1.PodConditionType) *corev1.Pod {
	p := &corev1.Pod{Status: corev1.PodStatus{Conditions: []corev1.PodCondition{{Type: corev1.ContainersReady, Status: corev1.ConditionTrue}}}}
	for _, g := range gates {
		p.Spec.ReadinessGates = append(p.Spec.ReadinessGates, corev1.PodReadinessGate{ConditionType: g})
	}
	return p
}

// The decision as a table: which endpoints of which slices are targets,
// on which port, and which addresses the boundary refuses.
func TestFor(t *testing.T) {
	svc := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: "team-b", Name: "web"}}
	http := corev1.ServicePort{Name: "http", Protocol: corev1.ProtocolTCP, Port: 80}
	webPorts := []discoveryv1.EndpointPort{port("metrics", corev1.ProtocolTCP, 9090), port("http", corev1.ProtocolTCP, 8080)}
	yes, no := ptr.To(true), ptr.To(false)
	v4, v6 := discoveryv1.AddressTypeIPv4, discoveryv1.AddressTypeIPv6
	pods := map[string]*corev1.Pod{
		"10.244.1.7": gatedPod(Gate("web")),
		"10.244.1.8": gatedPod(Gate("web"), "example.com/other"),
		"10.244.1.9": func() *corev1.Pod { p := gatedPod(Gate("web")); p.Status.Conditions = nil; return p }(),
	}
	allow := func(ip string) (string, error) {
		if strings.HasPrefix(ip, "10.244.9.") || ip == "169.254.169.254" {
			return "it is not the IP of a pod of namespace team-b", nil
		}
		return "", nil
	}
	cases := []struct {
		name    string
		port    corev1.ServicePort
		slices  []*discoveryv1.EndpointSlice
		want    []string
		refused []string
	}{{
		name: "ready endpoints of two slices, on the port resolved for the Service port, each once, sorted",
		port: http,
		slices: []*discoveryv1.EndpointSlice{
			slice("team-b", "web", "web-1", v4, webPorts, ep(yes, no, "10.244.2.5"), ep(nil, nil, "10.244.1.5")),
			slice("team-b", "web", "web-2", v4, webPorts, ep(yes, nil, "10.244.1.5"), ep(yes, nil, "10.244.1.6")),
		},
		want: []string{"10.244.1.5:8080", "10.244.1.6:8080", "10.244.2.5:8080"},
	}, {
		name: "terminating endpoints drain, serving or not; unready ones wait",
		port: http,
		slices: []*discoveryv1.EndpointSlice{slice("team-b", "web", "web-1", v4, webPorts,
			ep(yes, yes, "10.244.1.2"), ep(no, yes, "10.244.1.3"), ep(no, no, "10.244.1.4"), ep(yes, no, "10.244.1.5"))},
		want: []string{"10.244.1.5:8080"},
	}, {
		name: "a pod held back only by this controller's gate is a target; by another's too, or with containers not ready, it is not",
		port: http,
		slices: []*discoveryv1.EndpointSlice{slice("team-b", "web", "web-1", v4, webPorts,
			ep(no, no, "10.244.1.7"), ep(no, no, "10.244.1.8"), ep(no, no, "10.244.1.9"), ep(no, no, "10.244.1.10"))},
		want: []string{"10.244.1.7:8080"},
	}, {
		name: "the port by name and protocol: a UDP port of the same name is another",
		port: corev1.ServicePort{Name: "dns", Protocol: corev1.ProtocolUDP, Port: 53},
		slices: []*discoveryv1.EndpointSlice{slice("team-b", "web", "web-1", v4,
			[]discoveryv1.EndpointPort{port("dns", corev1.ProtocolTCP, 5353), port("dns", corev1.ProtocolUDP, 5300)}, ep(yes, nil, "10.244.1.5"))},
		want: []string{"10.244.1.5:5300"},
	}, {
		name: "an unnamed Service port, protocol unset (TCP)",
		port: corev1.ServicePort{Port: 80},
		slices: []*discoveryv1.EndpointSlice{slice("team-b", "web", "web-1", v4,
			[]discoveryv1.EndpointPort{{Port: ptr.To[int32](8080)}}, ep(yes, nil, "10.244.1.5"))},
		want: []string{"10.244.1.5:8080"},
	}, {
		name:   "IPv6",
		port:   http,
		slices: []*discoveryv1.EndpointSlice{slice("team-b", "web", "web-1", v6, webPorts, ep(yes, nil, "fd00:244::5"))},
		want:   []string{"[fd00:244::5]:8080"},
	}, {
		name: "slices of another Service, of another namespace, of FQDNs, without the port: none counts",
		port: http,
		slices: []*discoveryv1.EndpointSlice{
			slice("team-b", "api", "api-1", v4, webPorts, ep(yes, nil, "10.244.1.5")),
			slice("team-a", "web", "web-1", v4, webPorts, ep(yes, nil, "10.244.1.6")),
			slice("team-b", "web", "web-f", discoveryv1.AddressTypeFQDN, webPorts, ep(yes, nil, "db.example.com")),
			slice("team-b", "web", "web-m", v4, webPorts[:1], ep(yes, nil, "10.244.1.7")),
		},
	}, {
		name: "the boundary refuses addresses, each once, and targets the rest",
		port: http,
		slices: []*discoveryv1.EndpointSlice{
			slice("team-b", "web", "web-1", v4, webPorts, ep(yes, nil, "10.244.9.1", "169.254.169.254"), ep(yes, nil, "10.244.1.5")),
			slice("team-b", "web", "web-2", v4, webPorts, ep(yes, nil, "10.244.9.1")),
		},
		want:    []string{"10.244.1.5:8080"},
		refused: []string{"EndpointSlice web-1 lists 10.244.9.1: it is not the IP of a pod of namespace team-b", "EndpointSlice web-1 lists 169.254.169.254: it is not the IP of a pod of namespace team-b"},
	}}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := For(svc, c.port, c.slices, Source{Pod: func(ip string) (*corev1.Pod, bool) { p, ok := pods[ip]; return p, ok }, Allow: allow})
			if err != nil {
				t.Fatal(err)
			}
			var refused []string
			for _, r := range got.Refused {
				refused = append(refused, r.String())
			}
			if !reflect.DeepEqual(got.Targets, c.want) || !reflect.DeepEqual(refused, c.refused) {
				t.Fatalf("targets %v, refused %q; want %v, %q", got.Targets, refused, c.want, c.refused)
			}
		})
	}
}

// Failing to read what the boundary needs decides nothing.
func TestForReadFailureDecidesNothing(t *testing.T) {
	svc := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: "team-b", Name: "web"}}
	s := slice("team-b", "web", "web-1", discoveryv1.AddressTypeIPv4, []discoveryv1.EndpointPort{port("", corev1.ProtocolTCP, 8080)}, ep(nil, nil, "10.244.1.5"))
	boom := errors.New("pods not listed yet")
	_, err := For(svc, corev1.ServicePort{Port: 80}, []*discoveryv1.EndpointSlice{s}, Source{
		Pod: func(string) (*corev1.Pod, bool) { return nil, false }, Allow: func(string) (string, error) { return "", boom }})
	if !errors.Is(err, boom) {
		t.Fatalf("err %v", err)
	}
}

func TestGated(t *testing.T) {
	terminating := gatedPod(Gate("web"))
	terminating.DeletionTimestamp = &metav1.Time{Time: time.Now()}
	passed := gatedPod(Gate("web"))
	passed.Status.Conditions = append(passed.Status.Conditions, corev1.PodCondition{Type: Gate("web"), Status: corev1.ConditionTrue})
	for name, c := range map[string]struct {
		pod  *corev1.Pod
		want bool
	}{
		"held by this controller's gate":        {gatedPod(Gate("web")), true},
		"held by two of this controller's":      {gatedPod(Gate("web"), Gate("api")), true},
		"held by another's gate too":            {gatedPod(Gate("web"), "example.com/other"), false},
		"no gate (not ready for another cause)": {gatedPod(), false},
		"its gate passed":                       {passed, false},
		"terminating":                           {terminating, false},
	} {
		if got := Gated(c.pod); got != c.want {
			t.Errorf("%s: Gated %v, want %v", name, got, c.want)
		}
	}
}

func TestSettle(t *testing.T) {
	s := Settle{Quiet: 2 * time.Second, Longest: 10 * time.Second}
	t0 := time.Date(2026, 12, 3, 7, 0, 0, 0, time.UTC)
	for _, c := range []struct {
		first, last, want time.Duration
	}{
		{0, 0, 2 * time.Second},                 // one change: after the quiet time
		{0, 5 * time.Second, 7 * time.Second},   // still changing: quiet after the last
		{0, 9 * time.Second, 10 * time.Second},  // a steady trickle: the longest wait
		{0, 30 * time.Second, 10 * time.Second}, // already due
	} {
		if got := s.Due(t0.Add(c.first), t0.Add(c.last)).Sub(t0); got != c.want {
			t.Errorf("first %v, last %v: due at %v, want %v", c.first, c.last, got, c.want)
		}
	}
}
