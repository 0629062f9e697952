package gatewaycontroller

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	corelisters "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/utils/ptr"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"
	gwlisters "sigs.k8s.io/gateway-api/pkg/client/listers/apis/v1"

	"github.com/example/cloud-provider-example/annotations"
	"github.com/example/cloud-provider-example/engine"
	"github.com/example/cloud-provider-example/gateway"
	"github.com/example/cloud-provider-example/internal/testkit"
	"github.com/example/cloud-provider-example/objectref"
	"github.com/example/cloud-provider-example/review"
)

// serviceLister lists svcs, as the Services informer would.
func serviceLister(t *testing.T, svcs ...*corev1.Service) corelisters.ServiceLister {
	t.Helper()
	idx := cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{cache.NamespaceIndex: cache.MetaNamespaceIndexFunc})
	for _, s := range svcs {
		testkit.Must(t, idx.Add(s))
	}
	return corelisters.NewServiceLister(idx)
}

func nodePortService(ns, name string, nodePorts ...int32) *corev1.Service {
	svc := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}}
	for _, p := range nodePorts {
		svc.Spec.Ports = append(svc.Spec.Ports, corev1.ServicePort{Port: 80, NodePort: p})
	}
	return svc
}

// A Gateway's plan is made from its routes, every Secret its HTTPS
// listeners' certificateRefs name (each once, of any namespace; refs that
// are no Secret are never read), and the Services its rules forward to
// (by node port, whichever route names them); a Service no rule forwards
// to is none of them.
func TestInputs(t *testing.T) {
	https := func(name string, refs ...gatewayv1.SecretObjectReference) gatewayv1.Listener {
		return gatewayv1.Listener{Name: gatewayv1.SectionName(name), Port: 443, Protocol: gatewayv1.HTTPSProtocolType,
			TLS: &gatewayv1.ListenerTLSConfig{CertificateRefs: refs}}
	}
	gw := &gatewayv1.Gateway{ObjectMeta: metav1.ObjectMeta{Namespace: "infra", Name: "gw"}, Spec: gatewayv1.GatewaySpec{Listeners: []gatewayv1.Listener{
		{Name: "http", Port: 80, Protocol: gatewayv1.HTTPProtocolType},
		https("a", gatewayv1.SecretObjectReference{Name: "gw-cert"}, gatewayv1.SecretObjectReference{Name: "shop-cert", Namespace: ptr.To(gatewayv1.Namespace("team-a"))}),
		https("b", gatewayv1.SecretObjectReference{Name: "gw-cert"}, gatewayv1.SecretObjectReference{Name: "cm", Kind: ptr.To(gatewayv1.Kind("ConfigMap"))}),
	}}}
	c := &Controller{services: serviceLister(t,
		nodePortService("team-a", "api", 30001), nodePortService("team-b", "web", 30002, 30003),
		nodePortService("team-b", "idle", 30009), nodePortService("team-a", "internal"))}
	routes := []objectref.Ref{{Kind: objectref.KindHTTPRoute, Namespace: "team-a", Name: "shop"}}
	lb := gateway.LoadBalancer{Rules: []gateway.Rule{
		{Name: "r1", Backends: []gateway.Backend{{Port: 30001, Weight: 1}, {Port: 30003, Weight: 1}}},
		{Name: "r2", Backends: []gateway.Backend{{Port: 30003, Weight: 1}}},
	}}
	in, err := c.inputs(gw, routes, lb)
	testkit.Must(t, err)
	want := review.GatewayInputs{Routes: routes,
		Secrets:  []types.NamespacedName{{Namespace: "infra", Name: "gw-cert"}, {Namespace: "team-a", Name: "shop-cert"}},
		Services: []types.NamespacedName{{Namespace: "team-a", Name: "api"}, {Namespace: "team-b", Name: "web"}}}
	if !slices.Equal(in.Routes, want.Routes) || !slices.Equal(in.Secrets, want.Secrets) || !slices.Equal(in.Services, want.Services) ||
		len(in.TLSPolicies)+len(in.ConfigMaps) != 0 {
		t.Errorf("inputs %+v, want %+v", in, want)
	}

	// The BackendTLSPolicies targeting a backend, and their CA
	// ConfigMaps, decide how the rules reach it: their editors are inputs
	// too. One targeting a Service no rule reaches is not.
	policy := func(ns, name, svc string, cms ...string) *gatewayv1.BackendTLSPolicy {
		p := &gatewayv1.BackendTLSPolicy{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}}
		p.Spec.TargetRefs = []gatewayv1.LocalPolicyTargetReferenceWithSectionName{{LocalPolicyTargetReference: gatewayv1.LocalPolicyTargetReference{Kind: "Service", Name: gatewayv1.ObjectName(svc)}}}
		for _, cm := range cms {
			p.Spec.Validation.CACertificateRefs = append(p.Spec.Validation.CACertificateRefs, gatewayv1.LocalObjectReference{Kind: "ConfigMap", Name: gatewayv1.ObjectName(cm)})
		}
		return p
	}
	idx := cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{})
	for _, p := range []*gatewayv1.BackendTLSPolicy{policy("team-b", "web-tls", "web", "ca", "ca-next"), policy("team-b", "idle-tls", "idle", "ca-idle"),
		policy("team-a", "web-tls", "web", "ca-a")} {
		testkit.Must(t, idx.Add(p))
	}
	c.tlsPolicies = gwlisters.NewBackendTLSPolicyLister(idx)
	in, err = c.inputs(gw, routes, lb)
	testkit.Must(t, err)
	if want := []types.NamespacedName{{Namespace: "team-b", Name: "web-tls"}}; !slices.Equal(in.TLSPolicies, want) {
		t.Errorf("policies %v, want %v", in.TLSPolicies, want)
	}
	if want := []types.NamespacedName{{Namespace: "team-b", Name: "ca"}, {Namespace: "team-b", Name: "ca-next"}}; !slices.Equal(in.ConfigMaps, want) {
		t.Errorf("CA ConfigMaps %v, want %v", in.ConfigMaps, want)
	}
}

// pools is a pool of every node that exists or not, and counts what
// made one.
type pools struct {
	exists bool
	made   int
}

func (p *pools) Pool(context.Context) (string, error) {
	p.made++
	p.exists = true
	return "tp-all", nil
}

func (p *pools) ExistingPool(context.Context) (string, error) {
	if !p.exists {
		return "", nil
	}
	return "tp-all", nil
}

func (p *pools) TLSSecret(context.Context, string, string) (string, string, error) {
	return "", "", errors.New("none here")
}

// The pool of every node is made for a Gateway only under the auto
// policy; under manual (or plan-only), never approved, nothing is created
// before its review: it waits, Pending, saying why, for a pool that
// exists, and uses one that does.
func TestPoolOnlyUnderAuto(t *testing.T) {
	for _, tc := range []struct {
		policy annotations.ApplyPolicy
		exists bool
		made   int
		built  bool
	}{
		{policy: annotations.ApplyAuto, made: 1, built: true},
		{policy: annotations.ApplyManual},
		{policy: annotations.ApplyPlanOnly},
		{policy: annotations.ApplyManual, exists: true, built: true},
	} {
		gw := &gatewayv1.Gateway{ObjectMeta: metav1.ObjectMeta{Namespace: "infra", Name: "gw", UID: "uid-gw"},
			Spec: gatewayv1.GatewaySpec{Listeners: []gatewayv1.Listener{{Name: "http", Port: 80, Protocol: gatewayv1.HTTPProtocolType}}}}
		infra := &pools{exists: tc.exists}
		eng := &fakeEngine{lb: &engine.LoadBalancer{ID: "lb-1", Status: "active"}}
		c := &Controller{gw: newClient(t, gw), services: serviceLister(t),
			cloud: &Cloud{Engine: eng, Review: &fakeReview{}, Infra: infra, Settings: Settings{Policy: tc.policy}}}
		tr := gateway.Translation{Rules: []gateway.Rule{{Name: "team-a/shop/0.0:80", ListenerPort: 80, Priority: 1, Backends: []gateway.Backend{{Port: 30001, Weight: 1}}}}}
		p, err := c.program(t.Context(), gw, nil, tr)
		testkit.Must(t, err)
		if infra.made != tc.made || (len(eng.built) > 0) != tc.built {
			t.Errorf("%s, pool existing %v: pool made %d times, built %v; want %d, %v", tc.policy, tc.exists, infra.made, len(eng.built) > 0, tc.made, tc.built)
		}
		if !tc.built && (p.reason != gatewayv1.GatewayReasonPending || p.retry != provisioningRetry || !strings.Contains(p.message, "creates nothing before its review")) {
			t.Errorf("%s without a pool: %+v; want Pending, looked at again, saying why", tc.policy, p)
		}
		if tc.built && eng.built[0].Rules[0].Backends[0].TargetPoolID != "tp-all" {
			t.Errorf("%s: built %+v, want the backends on the pool", tc.policy, eng.built[0].Rules)
		}
	}
}
