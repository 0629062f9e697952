package gatewaycontroller

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/example/cloud-provider-example/exampleapi"
	"github.com/example/cloud-provider-example/gateway"
	"github.com/example/cloud-provider-example/objectref"
	"github.com/example/cloud-provider-example/simulator/simtest"
)

// A backend of an HTTPRoute to a Service port a policy applies to is
// reached over TLS; one whose policy does not resolve, or a GRPCRoute's
// (h2c), is closed; a TCPRoute's forwards as it came. Each policy naming
// the port is noted for the Gateway's ancestor status.
func TestWithBackendTLS(t *testing.T) {
	ca := simtest.NewCert(t, simtest.CertOptions{CommonName: "ca", IsCA: true})
	policy := func(name, service, cm string) *gatewayv1.BackendTLSPolicy {
		return &gatewayv1.BackendTLSPolicy{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: name},
			Spec: gatewayv1.BackendTLSPolicySpec{
				TargetRefs: []gatewayv1.LocalPolicyTargetReferenceWithSectionName{{LocalPolicyTargetReference: gatewayv1.LocalPolicyTargetReference{
					Kind: "Service", Name: gatewayv1.ObjectName(service)}}},
				Validation: gatewayv1.BackendTLSPolicyValidation{Hostname: "api.internal",
					CACertificateRefs: []gatewayv1.LocalObjectReference{{Kind: "ConfigMap", Name: gatewayv1.ObjectName(cm)}}}}}
	}
	tls := gateway.DecideBackendTLS([]*gatewayv1.BackendTLSPolicy{policy("good", "api", "ca"), policy("bad", "broken", "missing")},
		func(_ objectref.Ref, name string) (string, string) {
			if name == "ca" {
				return ca.CertPEM, ""
			}
			return "", "not found"
		})
	port := corev1.ServicePort{Name: "https", Port: 443}
	http := objectref.Ref{Kind: objectref.KindHTTPRoute, Namespace: "shop", Name: "r"}
	used := map[types.NamespacedName]gateway.PolicyConditions{}
	if b := withBackendTLS(tls, used, http, "shop", "api", port, gateway.Backend{Port: 30443}); b.TLS == nil || b.TLS.ServerName != "api.internal" || b.Closed != "" {
		t.Errorf("an HTTPRoute's backend under a good policy: %+v", b)
	}
	if b := withBackendTLS(tls, used, http, "shop", "broken", port, gateway.Backend{Port: 30443}); b.TLS != nil || b.Closed == "" {
		t.Errorf("a backend under a policy that does not resolve: %+v, want closed", b)
	}
	grpc := objectref.Ref{Kind: objectref.KindGRPCRoute, Namespace: "shop", Name: "g"}
	if b := withBackendTLS(tls, used, grpc, "shop", "api", port, gateway.Backend{Port: 30443, Protocol: exampleapi.BackendH2C}); b.TLS != nil || b.Closed == "" {
		t.Errorf("a GRPCRoute's h2c backend under a policy: %+v, want closed", b)
	}
	tcp := objectref.Ref{Kind: objectref.KindTCPRoute, Namespace: "shop", Name: "t"}
	if b := withBackendTLS(tls, map[types.NamespacedName]gateway.PolicyConditions{}, tcp, "shop", "api", port, gateway.Backend{Port: 30443}); b.TLS != nil || b.Closed != "" {
		t.Errorf("a TCPRoute's backend: %+v, want as it came", b)
	}
	if len(used) != 2 || used[types.NamespacedName{Namespace: "shop", Name: "bad"}].Accepted.Reason != "NoValidCACertificate" {
		t.Errorf("policies noted %+v", used)
	}
}

// A policy's ancestor entry for a Gateway is set with the decided
// conditions at the policy's generation, kept beside other Gateways'
// entries, and removed once the Gateway reaches it no more.
func TestWithAncestor(t *testing.T) {
	gwA, gwB := types.NamespacedName{Namespace: "infra", Name: "a"}, types.NamespacedName{Namespace: "infra", Name: "b"}
	p := &gatewayv1.BackendTLSPolicy{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "p", Generation: 3}}
	ok := gateway.PolicyConditions{Accepted: gateway.Reason{Reason: "Accepted"}, ResolvedRefs: gateway.Reason{Reason: "ResolvedRefs"}}
	p.Status = withAncestor(p, gwA, ok, true)
	conflicted := gateway.PolicyConditions{Accepted: gateway.Reason{Reason: "Conflicted", Message: "older"}, ResolvedRefs: gateway.Reason{Reason: "ResolvedRefs"}}
	p.Status = withAncestor(p, gwB, conflicted, true)
	if len(p.Status.Ancestors) != 2 {
		t.Fatalf("ancestors %+v", p.Status.Ancestors)
	}
	a := p.Status.Ancestors[0]
	if a.AncestorRef.Name != "a" || *a.AncestorRef.Namespace != "infra" || *a.AncestorRef.Kind != "Gateway" || a.ControllerName != ControllerName ||
		!meta.IsStatusConditionTrue(a.Conditions, "Accepted") || !meta.IsStatusConditionTrue(a.Conditions, "ResolvedRefs") ||
		meta.FindStatusCondition(a.Conditions, "Accepted").ObservedGeneration != 3 {
		t.Errorf("gateway a's entry %+v", a)
	}
	if c := meta.FindStatusCondition(p.Status.Ancestors[1].Conditions, "Accepted"); c.Status != metav1.ConditionFalse || c.Reason != "Conflicted" {
		t.Errorf("gateway b's Accepted %+v", c)
	}
	p.Status = withAncestor(p, gwA, gateway.PolicyConditions{}, false)
	if len(p.Status.Ancestors) != 1 || p.Status.Ancestors[0].AncestorRef.Name != "b" {
		t.Errorf("after gateway a left: %+v", p.Status.Ancestors)
	}
}
