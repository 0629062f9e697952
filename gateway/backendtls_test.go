package gateway

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/example/cloud-provider-example/lbmodel"
	"github.com/example/cloud-provider-example/objectref"
	"github.com/example/cloud-provider-example/simulator/simtest"
)

// policy is a BackendTLSPolicy of namespace shop created age ago, for
// Service (port section, "" for all), verifying against ConfigMaps cas.
func policy(name string, age time.Duration, service, section string, cas ...string) *gatewayv1.BackendTLSPolicy {
	p := &gatewayv1.BackendTLSPolicy{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: name,
		CreationTimestamp: metav1.NewTime(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC).Add(-age))}}
	ref := gatewayv1.LocalPolicyTargetReferenceWithSectionName{LocalPolicyTargetReference: gatewayv1.LocalPolicyTargetReference{
		Kind: "Service", Name: gatewayv1.ObjectName(service)}}
	if section != "" {
		s := gatewayv1.SectionName(section)
		ref.SectionName = &s
	}
	p.Spec.TargetRefs = []gatewayv1.LocalPolicyTargetReferenceWithSectionName{ref}
	for _, ca := range cas {
		p.Spec.Validation.CACertificateRefs = append(p.Spec.Validation.CACertificateRefs,
			gatewayv1.LocalObjectReference{Kind: "ConfigMap", Name: gatewayv1.ObjectName(ca)})
	}
	p.Spec.Validation.Hostname = "abc.example.com"
	return p
}

// TestDecideBackendTLS: a policy's conditions as the Gateway API and its
// conformance tests expect them (Accepted, ResolvedRefs,
// InvalidCACertificateRef, InvalidKind, NoValidCACertificate, Conflicted
// by age then name, Invalid for wellKnownCACertificates), which Service
// port each applies to, and that a policy that does not resolve fails
// closed; no message quotes a ConfigMap's content.
func TestDecideBackendTLS(t *testing.T) {
	ca := simtest.NewCert(t, simtest.CertOptions{CommonName: "ca", IsCA: true})
	configMaps := map[string]string{"ca": ca.CertPEM, "garbage": "SECRET-LOOKING TEXT", "empty": ""}
	read := func(from objectref.Ref, name string) (string, string) {
		if from.Kind != objectref.KindBackendTLSPolicy || from.Namespace != "shop" {
			t.Errorf("CA of %s read for %v", name, from)
		}
		switch v, ok := configMaps[name]; {
		case !ok:
			return "", "ConfigMap shop/" + name + " not found"
		case v == "":
			return "", "ConfigMap shop/" + name + " has no key ca.crt"
		default:
			return v, ""
		}
	}
	sans := policy("sans", 9*time.Hour, "san", "", "ca")
	sans.Spec.Validation.SubjectAltNames = []gatewayv1.SubjectAltName{{Type: gatewayv1.HostnameSubjectAltNameType, Hostname: "abc.example.com"},
		{Type: gatewayv1.URISubjectAltNameType, URI: "spiffe://abc.example.com/test-identity"}}
	wellKnown := policy("system", 8*time.Hour, "sys", "")
	system := gatewayv1.WellKnownCACertificatesSystem
	wellKnown.Spec.Validation.WellKnownCACertificates = &system
	kind := policy("secret-kind", 7*time.Hour, "kind", "")
	kind.Spec.Validation.CACertificateRefs = []gatewayv1.LocalObjectReference{{Kind: "Secret", Name: "ca"}}
	policies := []*gatewayv1.BackendTLSPolicy{
		policy("b-newer", time.Hour, "web", "", "ca"),
		policy("a-older", 2*time.Hour, "web", "", "ca"),
		// Same age: the first by name applies.
		policy("z-port", 3*time.Hour, "web", "btls", "ca"),
		policy("y-port", 3*time.Hour, "web", "btls", "ca"),
		policy("missing", 4*time.Hour, "gone", "", "nope"),
		policy("malformed", 5*time.Hour, "bad", "", "garbage"),
		policy("some", 6*time.Hour, "some", "", "nope", "ca"),
		sans, wellKnown, kind,
	}
	d := DecideBackendTLS(policies, read)
	for name, want := range map[string]PolicyConditions{
		"a-older":     {Accepted: Reason{Reason: "Accepted"}, ResolvedRefs: Reason{Reason: "ResolvedRefs"}},
		"b-newer":     {Accepted: Reason{Reason: "Conflicted", Message: "BackendTLSPolicy a-older already applies to Service web"}, ResolvedRefs: Reason{Reason: "ResolvedRefs"}},
		"y-port":      {Accepted: Reason{Reason: "Accepted"}, ResolvedRefs: Reason{Reason: "ResolvedRefs"}},
		"z-port":      {Accepted: Reason{Reason: "Conflicted", Message: "BackendTLSPolicy y-port already applies to Service web port btls"}, ResolvedRefs: Reason{Reason: "ResolvedRefs"}},
		"missing":     {Accepted: Reason{Reason: "NoValidCACertificate"}, ResolvedRefs: Reason{Reason: "InvalidCACertificateRef", Message: "caCertificateRefs[0] (nope): ConfigMap shop/nope not found"}},
		"malformed":   {Accepted: Reason{Reason: "NoValidCACertificate"}, ResolvedRefs: Reason{Reason: "InvalidCACertificateRef", Message: "its ca.crt is not a CA bundle the load balancer takes"}},
		"some":        {Accepted: Reason{Reason: "Accepted"}, ResolvedRefs: Reason{Reason: "InvalidCACertificateRef", Message: "caCertificateRefs[0] (nope)"}},
		"sans":        {Accepted: Reason{Reason: "Accepted"}, ResolvedRefs: Reason{Reason: "ResolvedRefs"}},
		"system":      {Accepted: Reason{Reason: "Invalid", Message: "wellKnownCACertificates System is not supported"}, ResolvedRefs: Reason{Reason: "ResolvedRefs"}},
		"secret-kind": {Accepted: Reason{Reason: "NoValidCACertificate"}, ResolvedRefs: Reason{Reason: "InvalidKind", Message: "kind Secret of group \"\" is not supported"}},
	} {
		got := d.Policies[types.NamespacedName{Namespace: "shop", Name: name}]
		if got.Accepted.Reason != want.Accepted.Reason || !strings.Contains(got.Accepted.Message, want.Accepted.Message) ||
			got.ResolvedRefs.Reason != want.ResolvedRefs.Reason || !strings.Contains(got.ResolvedRefs.Message, want.ResolvedRefs.Message) {
			t.Errorf("%s: %+v, want %+v", name, got, want)
		}
		if strings.Contains(got.Accepted.Message+got.ResolvedRefs.Message, "SECRET") || strings.Contains(got.ResolvedRefs.Message, "BEGIN") {
			t.Errorf("%s: a message quotes a ConfigMap: %+v", name, got)
		}
	}
	for _, tc := range []struct {
		service, port, policy, sni string
		sans                       int
		closed                     bool
	}{
		{"web", "http", "a-older", "abc.example.com", 0, false},
		{"web", "btls", "y-port", "abc.example.com", 0, false},
		{"san", "", "sans", "abc.example.com", 2, false},
		{"gone", "btls", "missing", "", 0, true},
		{"bad", "", "malformed", "", 0, true},
		{"some", "x", "some", "abc.example.com", 0, false},
		{"sys", "", "system", "", 0, true},
		{"kind", "", "secret-kind", "", 0, true},
	} {
		p, tls, ok := d.For("shop", tc.service, tc.port)
		switch {
		case !ok || p.Name != tc.policy:
			t.Errorf("%s port %q: policy %v (%v), want %s", tc.service, tc.port, p, ok, tc.policy)
		case tc.closed && tls != nil:
			t.Errorf("%s: TLS %+v, want none (fail closed)", tc.service, tls)
		case !tc.closed && (tls == nil || tls.ServerName != tc.sni || len(tls.SubjectAltNames) != tc.sans || !strings.Contains(tls.CABundle, "BEGIN CERTIFICATE")):
			t.Errorf("%s: TLS %+v, want SNI %s, %d SANs and the CA", tc.service, tls, tc.sni, tc.sans)
		}
	}
	// The policies a Gateway reaching a port reports: conflicted too.
	if got := d.Targeting("shop", "web", "btls"); len(got) != 4 {
		t.Errorf("policies naming web and its port btls: %v, want a-older, b-newer, y-port and z-port", got)
	}
	if _, _, ok := d.For("shop", "other", "http"); ok {
		t.Error("a Service no policy names has one")
	}
	if _, _, ok := d.For("team-b", "web", "http"); ok {
		t.Error("a policy applies to a Service of another namespace")
	}
}

// A namespace's policies have at most MaxCAConfigMaps CA ConfigMaps
// read, oldest policy first: a newer policy naming one more is not
// resolved (its CA never read: it fails closed, and costs the controller
// no watch), one naming a ConfigMap an older one named is, and another
// namespace's budget is its own.
func TestCAConfigMapBudget(t *testing.T) {
	var policies []*gatewayv1.BackendTLSPolicy
	for i := range MaxCAConfigMaps + 1 {
		policies = append(policies, policy(fmt.Sprintf("p%02d", i), time.Duration(100-i)*time.Hour, fmt.Sprintf("svc%02d", i), "", fmt.Sprintf("ca%02d", i)))
	}
	again := policy("again", time.Minute, "again", "", "ca03")
	other := policy("other", time.Minute, "other", "", "ca99")
	other.Namespace = "team-b"
	policies = append(policies, again, other)
	read := map[types.NamespacedName]bool{}
	d := DecideBackendTLS(policies, func(from objectref.Ref, name string) (string, string) {
		read[types.NamespacedName{Namespace: from.Namespace, Name: name}] = true
		return simtest.NewCert(t, simtest.CertOptions{CommonName: "ca", IsCA: true}).CertPEM, ""
	})
	last := fmt.Sprintf("p%02d", MaxCAConfigMaps)
	if got := d.Policies[types.NamespacedName{Namespace: "shop", Name: last}]; got.ResolvedRefs.Reason != "InvalidCACertificateRef" ||
		!strings.Contains(got.ResolvedRefs.Message, "more than 16 CA ConfigMaps") || got.Accepted.Reason != "NoValidCACertificate" {
		t.Errorf("the policy past the budget: %+v", got)
	}
	if _, tls, _ := d.For("shop", "svc16", ""); tls != nil {
		t.Errorf("the policy past the budget gives TLS %+v, want it closed", tls)
	}
	for _, name := range []string{"p00", "p15", "again"} {
		if got := d.Policies[types.NamespacedName{Namespace: "shop", Name: name}]; got.ResolvedRefs.Reason != "ResolvedRefs" {
			t.Errorf("%s: %+v, want resolved", name, got)
		}
	}
	if got := d.Policies[types.NamespacedName{Namespace: "team-b", Name: "other"}]; got.ResolvedRefs.Reason != "ResolvedRefs" {
		t.Errorf("another namespace's policy: %+v, want resolved", got)
	}
	cms := CAConfigMaps(policies)
	if len(read) != MaxCAConfigMaps+1 || read[types.NamespacedName{Namespace: "shop", Name: "ca16"}] || len(cms) != len(read) {
		t.Errorf("read %v, watched %v: want shop's first 16 and team-b's one", read, cms)
	}
	for nn := range read {
		if !cms[nn] {
			t.Errorf("%s read, not in CAConfigMaps", nn)
		}
	}
}

// A backend whose BackendTLSPolicy does not resolve (Closed) is left out
// of its rule by Program, which answers 500 without another backend: it
// fails closed, and it is no unreachable Service to warn of.
func TestProgramLeavesOutClosedBackends(t *testing.T) {
	gw := gateway(httpListener("web", 80, "", gatewayv1.NamespacesFromAll))
	closed := func(r objectref.Ref, ref gatewayv1.BackendRef) (lbmodel.Backend, gatewayv1.RouteConditionReason, string) {
		b, reason, msg := services(r, ref)
		if ref.Name == "svc-tls" {
			b.Closed = "BackendTLSPolicy p does not resolve"
		}
		return b, reason, msg
	}
	tr := HTTP(gw, []*gatewayv1.HTTPRoute{route("team-a", "shop", 0, "", nil,
		rule([]gatewayv1.HTTPRouteMatch{prefix("/mixed")}, to("svc-a", 1), to("svc-tls", 1)),
		rule([]gatewayv1.HTTPRouteMatch{prefix("/tls")}, to("svc-tls", 1)))}, labelled, closed)
	lb, _, unreachable := Program(gw, tr, nil)
	if len(unreachable) != 0 {
		t.Errorf("unreachable %v, want none", unreachable)
	}
	for _, r := range lb.Rules {
		want := map[string]int{"/mixed": 1, "/tls": 0}[r.Path]
		if len(r.Backends) != want || slices.ContainsFunc(r.Backends, func(b lbmodel.Backend) bool { return b.Closed != "" }) {
			t.Errorf("rule %s backends %+v, want %d open", r.Name, r.Backends, want)
		}
	}
}
