package servicelb

import (
	"context"
	"errors"
	"strings"
	"testing"

	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	clienttesting "k8s.io/client-go/testing"

	"github.com/example/cloud-provider-example/annotations"
	"github.com/example/cloud-provider-example/records"
	"github.com/example/cloud-provider-example/simulator/simtest"
)

func tlsSecret(name string, typ v1.SecretType, crt, key string) *v1.Secret {
	s := &v1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: name}, Type: typ, Data: map[string][]byte{}}
	if crt != "" {
		s.Data[v1.TLSCertKey] = []byte(crt)
	}
	if key != "" {
		s.Data[v1.TLSPrivateKeyKey] = []byte(key)
	}
	return s
}

func tlsService(secrets string) *v1.Service {
	return &v1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "web", Annotations: map[string]string{
		string(annotations.LBHTTPSPorts): "443",
		string(annotations.LBTLSSecrets): secrets,
	}}, Spec: v1.ServiceSpec{Type: v1.ServiceTypeLoadBalancer}}
}

// The TLS source reads each Secret the Service names, as the cloud would
// check it, and refuses what cannot serve with an error that names the
// Secret and never quotes its content. Fakes (client-go's clientset): the
// e2e reads real Secrets with the controller's RBAC.
func TestTLSSecretsRead(t *testing.T) {
	good := simtest.NewCert(t, simtest.CertOptions{CommonName: "web.example.test"})
	other := simtest.NewCert(t, simtest.CertOptions{CommonName: "other.example.test"})
	weak := simtest.NewCert(t, simtest.CertOptions{RSABits: 1024})
	f := newBoardFixture(t, "")
	for _, s := range []*v1.Secret{
		tlsSecret("web-tls", v1.SecretTypeTLS, good.CertPEM, good.KeyPEM),
		tlsSecret("opaque", v1.SecretTypeOpaque, good.CertPEM, good.KeyPEM),
		tlsSecret("no-key", v1.SecretTypeTLS, good.CertPEM, ""),
		tlsSecret("no-crt", v1.SecretTypeTLS, "", good.KeyPEM),
		tlsSecret("mismatch", v1.SecretTypeTLS, good.CertPEM, other.KeyPEM),
		tlsSecret("weak", v1.SecretTypeTLS, weak.CertPEM, weak.KeyPEM),
		tlsSecret("garbage", v1.SecretTypeTLS, "not a certificate", good.KeyPEM),
		tlsSecret("words", v1.SecretTypeTLS, good.CertPEM, "team-a"),
		tlsSecret("commented", v1.SecretTypeTLS, good.CertPEM, good.KeyPEM+"# the shop's key\n"),
		tlsSecret("headers", v1.SecretTypeTLS, good.CertPEM, strings.Replace(good.KeyPEM, "-----\n", "-----\nComment: password=team-a\n\n", 1)),
		tlsSecret("conn", v1.SecretTypeTLS, good.CertPEM, "postgres://u:carol@example.com@db/x"),
	} {
		if _, err := f.client.CoreV1().Secrets("shop").Create(context.Background(), s, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	f.client.PrependReactor("get", "secrets", func(a clienttesting.Action) (bool, runtime.Object, error) {
		if a.(clienttesting.GetAction).GetName() == "locked" {
			return true, nil, apierrors.NewForbidden(schema.GroupResource{Resource: "secrets"}, "locked", errors.New("RBAC"))
		}
		return false, nil, nil
	})
	src := &TLSSecrets{cfg: f.cfg, client: f.client, redact: f.board.RedactFrom}
	// reason is the reason of the event a reconcile failing with err
	// records.
	subj := f.board.ServiceSubject(t.Context(), annotations.Read(tlsService("x")), records.KindChange)
	reason := func(err error) string {
		f.board.Failed(subj, err)
		evs := f.takeEvents()
		if len(evs) != 1 {
			t.Fatalf("events %v; want one", evs)
		}
		return evs[0].Reason
	}

	tls, err := src.Read(context.Background(), tlsService("web-tls"))
	if err != nil {
		t.Fatal(err)
	}
	if tls.Certificates["web-tls"] != good.CertPEM || tls.Keys["web-tls"] != good.KeyPEM {
		t.Fatalf("read %+v", tls.Certificates)
	}
	if tls, err := src.Read(context.Background(), &v1.Service{}); tls != nil || err != nil {
		t.Fatalf("a Service without TLS Secrets: %v %v", tls, err)
	}

	for _, c := range []struct{ secrets, want string }{
		{"missing", "TLS Secret shop/missing (annotation loadbalancer.example.com/tls-secrets) does not exist"},
		{"locked", "cannot be read by the controller: bind the ClusterRole example-ccm:tls-secrets"},
		{"opaque", `is of type "Opaque", not kubernetes.io/tls`},
		{"no-key", "has no tls.key"},
		{"no-crt", "has no tls.crt"},
		{"mismatch", "tls.key: does not match the certificate"},
		{"weak", "tls.key:"},
		{"garbage", "tls.crt:"},
		{"words", "tls.key: holds no PEM block"},
		{"commented", "tls.key: holds PEM headers or text besides its key"},
		{"headers", "tls.key: holds PEM headers or text besides its key"},
		{"conn", "tls.key: holds no PEM block"},
		{"web-tls,missing", "shop/missing"},
	} {
		t.Run(c.secrets, func(t *testing.T) {
			_, err := src.Read(context.Background(), tlsService(c.secrets))
			var cs *CertificateSecretError
			if !errors.As(err, &cs) || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("got %v, want a CertificateSecretError with %q", err, c.want)
			}
			if !strings.Contains(err.Error(), "the load balancer keeps serving") {
				t.Errorf("%v does not say the load balancer keeps serving", err)
			}
			for _, k := range []string{good.KeyPEM, other.KeyPEM, weak.KeyPEM} {
				if strings.Contains(err.Error(), strings.Split(k, "\n")[1]) {
					t.Errorf("the error quotes a private key")
				}
			}
			if r := reason(err); r != "CertificateSecretInvalid" {
				t.Errorf("event reason %s", r)
			}
		})
	}

	// Every key read is redacted from events and the audit log, even one
	// whose check failed.
	f.board.Eventf(subj, v1.EventTypeWarning, "Test", "leak %s", other.KeyPEM)
	select {
	case ev := <-f.events.Events:
		if strings.Contains(ev, strings.Split(other.KeyPEM, "\n")[1]) {
			t.Errorf("an event shows a key: %s", ev)
		}
	default:
		t.Error("no event recorded")
	}

	// Text that is no key is not redacted: mallory's tls.key would
	// otherwise blank "team-a", or carol's name, everywhere.
	f.board.Eventf(subj, v1.EventTypeWarning, "Test", "team-a/web approved by carol@example.com")
	if ev := <-f.events.Events; !strings.Contains(ev, "team-a/web approved by carol@example.com") {
		t.Errorf("a tenant's tls.key redacted other text: %s", ev)
	}

	// OpenTofu cannot take certificates: refused before reading anything.
	cfg := *f.cfg
	cfg.Terraform.Distribution = "tofu"
	tofu := &TLSSecrets{cfg: &cfg, client: f.client, redact: f.board.RedactFrom}
	_, err = tofu.Read(context.Background(), tlsService("web-tls"))
	var cu *CertificatesUnsupportedError
	if !errors.As(err, &cu) || reason(err) != "CertificatesUnsupported" || !strings.Contains(err.Error(), "Terraform 1.11") {
		t.Fatalf("on tofu: %v", err)
	}
}
