package e2e

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/example/cloud-provider-example/internal/testkit"
	"github.com/example/cloud-provider-example/simulator/simtest"
)

// A BackendTLSPolicy re-encrypts: the Gateway's load balancer reaches the
// policy's Service port over TLS, with the policy's host name as SNI,
// verifying the pods' certificate against the CA of its ConfigMap (the
// pods are example-echo serving TLS as echo-basic does, from a Secret
// volume); with the ConfigMap's CA replaced by another, the backend fails
// closed (5xx, the pods never reached in cleartext) and the policy says
// so, and the right CA brings it back.
func TestGatewayBackendTLS(t *testing.T) {
	t.Parallel()
	e, admin := gatewayEnv(t, options{traffic: true})
	ctx := testkit.Context(t)
	ca := simtest.NewCert(t, simtest.CertOptions{CommonName: "backend CA", IsCA: true})
	other := simtest.NewCert(t, simtest.CertOptions{CommonName: "another CA", IsCA: true})
	leaf := simtest.NewCert(t, simtest.CertOptions{CommonName: "secure.internal", Issuer: &ca})
	_, err := e.kube.CoreV1().Secrets("default").Create(ctx, &v1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "secure-tls"}, Type: v1.SecretTypeTLS,
		Data: map[string][]byte{"tls.crt": []byte(leaf.CertPEM), "tls.key": []byte(leaf.KeyPEM)}}, metav1.CreateOptions{})
	testkit.Must(t, err)
	e.echoDeploymentOf(t, "default", "secure", 1, func(p *v1.PodTemplateSpec) {
		p.Spec.Volumes = []v1.Volume{{Name: "tls", VolumeSource: v1.VolumeSource{Secret: &v1.SecretVolumeSource{SecretName: "secure-tls",
			Items: []v1.KeyToPath{{Key: "tls.crt", Path: "crt"}, {Key: "tls.key", Path: "key"}}}}}}
		p.Spec.Containers[0].VolumeMounts = []v1.VolumeMount{{Name: "tls", MountPath: "/etc/secret-volume"}}
		p.Spec.Containers[0].Ports = append(p.Spec.Containers[0].Ports, v1.ContainerPort{Name: "https", ContainerPort: 8443})
	}, v1.EnvVar{Name: "TLS_SERVER_CERT", Value: "/etc/secret-volume/crt"}, v1.EnvVar{Name: "TLS_SERVER_PRIVKEY", Value: "/etc/secret-volume/key"})
	_, err = e.kube.CoreV1().Services("default").Create(ctx, &v1.Service{ObjectMeta: metav1.ObjectMeta{Name: "secure"},
		Spec: v1.ServiceSpec{Selector: map[string]string{"app": "secure"},
			Ports: []v1.ServicePort{{Name: "btls", Port: 80, TargetPort: intstr.FromString("https")}}}}, metav1.CreateOptions{})
	testkit.Must(t, err)
	_, err = e.kube.CoreV1().ConfigMaps("default").Create(ctx, &v1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "secure-ca"},
		Data: map[string]string{"ca.crt": ca.CertPEM}}, metav1.CreateOptions{})
	testkit.Must(t, err)
	section := gatewayv1.SectionName("btls")
	_, err = admin.GatewayV1().BackendTLSPolicies("default").Create(ctx, &gatewayv1.BackendTLSPolicy{ObjectMeta: metav1.ObjectMeta{Name: "secure"},
		Spec: gatewayv1.BackendTLSPolicySpec{
			TargetRefs: []gatewayv1.LocalPolicyTargetReferenceWithSectionName{{LocalPolicyTargetReference: gatewayv1.LocalPolicyTargetReference{
				Kind: "Service", Name: "secure"}, SectionName: &section}},
			Validation: gatewayv1.BackendTLSPolicyValidation{Hostname: "secure.internal",
				CACertificateRefs: []gatewayv1.LocalObjectReference{{Kind: "ConfigMap", Name: "secure-ca"}}},
		}}, metav1.CreateOptions{})
	testkit.Must(t, err)
	httpGateway(ctx, t, admin)
	_, err = admin.GatewayV1().HTTPRoutes("default").Create(ctx, &gatewayv1.HTTPRoute{ObjectMeta: metav1.ObjectMeta{Name: "secure"},
		Spec: gatewayv1.HTTPRouteSpec{
			CommonRouteSpec: gatewayv1.CommonRouteSpec{ParentRefs: []gatewayv1.ParentReference{{Name: "gw"}}},
			Rules:           []gatewayv1.HTTPRouteRule{{BackendRefs: []gatewayv1.HTTPBackendRef{backend("", "secure", 1)}}},
		}}, metav1.CreateOptions{})
	testkit.Must(t, err)
	ip := e.gatewayAddress(t, admin, "default")
	policyIs := func(accepted, resolved string) func() error {
		return func() error {
			p, err := admin.GatewayV1().BackendTLSPolicies("default").Get(ctx, "secure", metav1.GetOptions{})
			if err != nil || len(p.Status.Ancestors) != 1 || p.Status.Ancestors[0].AncestorRef.Name != "gw" {
				return fmt.Errorf("%+v, %v", p.Status, err)
			}
			conds := p.Status.Ancestors[0].Conditions
			a, r := meta.FindStatusCondition(conds, "Accepted"), meta.FindStatusCondition(conds, "ResolvedRefs")
			if a == nil || r == nil || a.Reason != accepted || r.Reason != resolved || a.ObservedGeneration != p.Generation {
				return fmt.Errorf("conditions %+v, want Accepted %s, ResolvedRefs %s", conds, accepted, resolved)
			}
			if strings.Contains(a.Message+r.Message, "BEGIN CERTIFICATE") {
				t.Fatalf("the policy's status quotes a CA: %+v", conds)
			}
			return nil
		}
	}
	testkit.Eventually(t, time.Minute, "the policy accepted under the Gateway", policyIs("Accepted", "ResolvedRefs"))
	c := &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{DisableKeepAlives: true}}
	ask := func() (int, string, string) {
		res, err := c.Get("http://" + ip + "/tls")
		if err != nil {
			return 0, err.Error(), ""
		}
		defer res.Body.Close()
		if res.StatusCode != http.StatusOK {
			return res.StatusCode, "", ""
		}
		a, err := decodeAnswer(res)
		testkit.Must(t, err)
		if a.TLS == nil {
			return res.StatusCode, a.Pod, ""
		}
		return res.StatusCode, a.Pod, a.TLS.ServerName
	}
	testkit.Eventually(t, time.Minute, "the pods reached over TLS", func() error {
		if code, pod, sni := ask(); code != http.StatusOK || !strings.HasPrefix(pod, "secure-") || sni != "secure.internal" {
			return fmt.Errorf("GET /tls: %d from %q with SNI %q; want 200 from a secure pod over TLS with SNI secure.internal", code, pod, sni)
		}
		return nil
	})

	// Another CA: the pods' certificate does not verify. The policy still
	// resolves (a CA is a CA), and the backend fails closed: 502.
	setCA := func(pem string) {
		cm, err := e.kube.CoreV1().ConfigMaps("default").Get(ctx, "secure-ca", metav1.GetOptions{})
		testkit.Must(t, err)
		cm.Data["ca.crt"] = pem
		_, err = e.kube.CoreV1().ConfigMaps("default").Update(ctx, cm, metav1.UpdateOptions{})
		testkit.Must(t, err)
	}
	setCA(other.CertPEM)
	testkit.Eventually(t, time.Minute, "a wrong CA fails closed", func() error {
		if code, pod, _ := ask(); code < 500 || pod != "" {
			return fmt.Errorf("GET /tls: %d from %q; want a 5xx, no pod reached", code, pod)
		}
		return nil
	})
	// Not a CA at all: the policy says so, and the backend stays closed.
	setCA("not a certificate")
	testkit.Eventually(t, time.Minute, "a ca.crt that is no CA", policyIs("NoValidCACertificate", "InvalidCACertificateRef"))
	if code, pod, _ := ask(); code < 500 || pod != "" {
		t.Fatalf("GET /tls with no valid CA: %d from %q; want a 5xx", code, pod)
	}
	setCA(ca.CertPEM)
	testkit.Eventually(t, time.Minute, "the right CA again", func() error {
		if code, pod, sni := ask(); code != http.StatusOK || sni != "secure.internal" {
			return fmt.Errorf("GET /tls: %d from %q with SNI %q", code, pod, sni)
		}
		return policyIs("Accepted", "ResolvedRefs")()
	})
}
