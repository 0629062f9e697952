package e2e

import (
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"
	gwclient "sigs.k8s.io/gateway-api/pkg/client/clientset/versioned"

	"github.com/example/cloud-provider-example/internal/testkit"
	"github.com/example/cloud-provider-example/simulator/simtest"
)

// A team's ListenerSet (docs/gateway-api.md "ListenerSet", ADR 27), in
// its own namespace, adds an HTTPS listener with its own certificate to
// the platform's Gateway, which takes ListenerSets of the namespaces it
// selects: the team's route, attached to the ListenerSet's listener,
// answers through the load balancer's address, with the team's
// certificate for the team's host name and the platform's for the
// platform's, on the one cloud listener of 443.
func TestGatewayListenerSetTraffic(t *testing.T) {
	t.Parallel()
	e, admin := gatewayEnv(t, options{traffic: true})
	ctx := testkit.Context(t)
	for ns, labels := range map[string]map[string]string{"infra": nil, "team-a": {"gateway-listeners": "yes"}} {
		_, err := e.kube.CoreV1().Namespaces().Create(ctx, &v1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns, Labels: labels}}, metav1.CreateOptions{})
		testkit.Must(t, err)
	}
	e.echoDeployment(t, "team-a", "app", 1)
	_, err := e.kube.CoreV1().Services("team-a").Create(ctx, &v1.Service{ObjectMeta: metav1.ObjectMeta{Name: "app"},
		Spec: v1.ServiceSpec{Selector: map[string]string{"app": "app"}, Ports: []v1.ServicePort{{Port: 80, TargetPort: intstr.FromString("http")}}}},
		metav1.CreateOptions{})
	testkit.Must(t, err)
	ca := simtest.NewCert(t, simtest.CertOptions{CommonName: "test CA", IsCA: true})
	certs := map[string]simtest.Cert{
		"infra":  simtest.NewCert(t, simtest.CertOptions{CommonName: "shop.example.test", Issuer: &ca}),
		"team-a": simtest.NewCert(t, simtest.CertOptions{CommonName: "app.team-a.test", Issuer: &ca}),
	}
	for ns, c := range certs {
		e.allowTLSSecrets(t, ns)
		_, err := e.kube.CoreV1().Secrets(ns).Create(ctx, tlsSecretObject(ns, "tls", c), metav1.CreateOptions{})
		testkit.Must(t, err)
	}
	exampleGatewayClass(t, admin)
	selector := gatewayv1.NamespacesFromSelector
	_, err = admin.GatewayV1().Gateways("infra").Create(ctx, &gatewayv1.Gateway{ObjectMeta: metav1.ObjectMeta{Name: "gw"},
		Spec: gatewayv1.GatewaySpec{GatewayClassName: "example",
			AllowedListeners: &gatewayv1.AllowedListeners{Namespaces: &gatewayv1.ListenerNamespaces{From: &selector,
				Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"gateway-listeners": "yes"}}}},
			Listeners: []gatewayv1.Listener{{Name: "https", Port: 443, Protocol: gatewayv1.HTTPSProtocolType, Hostname: ptr.To(gatewayv1.Hostname("shop.example.test")),
				TLS: &gatewayv1.ListenerTLSConfig{CertificateRefs: []gatewayv1.SecretObjectReference{{Name: "tls"}}}}}}}, metav1.CreateOptions{})
	testkit.Must(t, err)
	// The team's, from its own namespace: no edit of the Gateway.
	_, err = admin.GatewayV1().ListenerSets("team-a").Create(ctx, httpsListenerSet("app-listeners", "app.team-a.test", "tls"), metav1.CreateOptions{})
	testkit.Must(t, err)
	_, err = admin.GatewayV1().HTTPRoutes("team-a").Create(ctx, &gatewayv1.HTTPRoute{ObjectMeta: metav1.ObjectMeta{Name: "app"},
		Spec: gatewayv1.HTTPRouteSpec{
			CommonRouteSpec: gatewayv1.CommonRouteSpec{ParentRefs: []gatewayv1.ParentReference{{Kind: ptr.To(gatewayv1.Kind("ListenerSet")), Name: "app-listeners",
				SectionName: ptr.To(gatewayv1.SectionName("https"))}}},
			Rules: []gatewayv1.HTTPRouteRule{{BackendRefs: []gatewayv1.HTTPBackendRef{backend("", "app", 1)}}},
		}}, metav1.CreateOptions{})
	testkit.Must(t, err)
	e.listenerSetCondition(t, admin, "team-a", "app-listeners", "Programmed", "Programmed")
	ip := e.gatewayAddress(t, admin, "infra")
	gw, err := admin.GatewayV1().Gateways("infra").Get(ctx, "gw", metav1.GetOptions{})
	testkit.Must(t, err)
	if n := gw.Status.AttachedListenerSets; n == nil || *n != 1 {
		t.Errorf("the Gateway's attachedListenerSets: %v, want 1", n)
	}

	roots := x509.NewCertPool()
	roots.AppendCertsFromPEM([]byte(ca.CertPEM))
	// served is the certificate the load balancer answers SNI name host
	// with (verified against the CA, for that name).
	served := func(host string) (string, error) {
		conn, err := tls.Dial("tcp", ip+":443", &tls.Config{ServerName: host, RootCAs: roots, MinVersion: tls.VersionTLS12})
		if err != nil {
			return "", err
		}
		defer conn.Close()
		return conn.ConnectionState().PeerCertificates[0].Subject.CommonName, nil
	}
	c := &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{DisableKeepAlives: true,
		TLSClientConfig: &tls.Config{ServerName: "app.team-a.test", RootCAs: roots, MinVersion: tls.VersionTLS12}}}
	testkit.Eventually(t, 2*time.Minute, "the team's route answers at https://"+ip+" for app.team-a.test", func() error {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, "https://"+ip+"/", nil)
		testkit.Must(t, err)
		req.Host = "app.team-a.test"
		res, err := c.Do(req)
		if err != nil {
			return err
		}
		defer res.Body.Close()
		if res.StatusCode != http.StatusOK {
			return fmt.Errorf("status %d", res.StatusCode)
		}
		a, err := decodeAnswer(res)
		if err != nil || !strings.HasPrefix(a.Pod, "app-") || a.Namespace != "team-a" {
			return fmt.Errorf("answer %+v, %v", a, err)
		}
		return nil
	})
	for host, want := range map[string]string{"app.team-a.test": "app.team-a.test", "shop.example.test": "shop.example.test"} {
		if cn, err := served(host); err != nil || cn != want {
			t.Errorf("SNI %s: certificate %q, %v; want %q", host, cn, err, want)
		}
	}
}

// httpsListenerSet is a ListenerSet of Gateway infra/gw with one HTTPS
// listener, https on 443 for host, terminating TLS with Secret secret of
// its namespace.
func httpsListenerSet(name, host, secret string) *gatewayv1.ListenerSet {
	return &gatewayv1.ListenerSet{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: gatewayv1.ListenerSetSpec{
		ParentRef: gatewayv1.ParentGatewayReference{Namespace: ptr.To(gatewayv1.Namespace("infra")), Name: "gw"},
		Listeners: []gatewayv1.ListenerEntry{{Name: "https", Port: 443, Protocol: gatewayv1.HTTPSProtocolType, Hostname: ptr.To(gatewayv1.Hostname(host)),
			TLS: &gatewayv1.ListenerTLSConfig{CertificateRefs: []gatewayv1.SecretObjectReference{{Name: gatewayv1.ObjectName(secret)}}}}},
	}}
}

// listenerSetCondition waits until ListenerSet ns/name has condition typ
// with reason at its generation, and returns the ListenerSet.
func (e *env) listenerSetCondition(t testing.TB, admin gwclient.Interface, ns, name, typ, reason string) *gatewayv1.ListenerSet {
	t.Helper()
	var out *gatewayv1.ListenerSet
	testkit.Eventually(t, 90*time.Second, fmt.Sprintf("ListenerSet %s/%s %s %s", ns, name, typ, reason), func() error {
		s, err := admin.GatewayV1().ListenerSets(ns).Get(testkit.Context(t), name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		c := meta.FindStatusCondition(s.Status.Conditions, typ)
		if c == nil || c.Reason != reason || c.ObservedGeneration != s.Generation {
			return fmt.Errorf("status %+v", s.Status)
		}
		out = s
		return nil
	})
	return out
}
