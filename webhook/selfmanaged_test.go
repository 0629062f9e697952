package webhook

import (
	"bytes"
	"context"
	"errors"
	"net"
	"testing"
	"time"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"

	"github.com/example/cloud-provider-example/internal/testkit"
)

func TestNewSelfManagedValidates(t *testing.T) {
	client := fake.NewClientset()
	for name, o := range map[string]SelfManagedOptions{
		"no client":   {Namespace: "ns", SecretName: "s", ServiceName: "svc"},
		"no names":    {Client: client, Namespace: "ns", SecretName: "s"},
		"no secret":   {Client: client, Namespace: "ns", ServiceName: "svc"},
		"fraction 1":  {Client: client, Namespace: "ns", SecretName: "s", ServiceName: "svc", RenewFraction: 1},
		"negative CA": {Client: client, Namespace: "ns", SecretName: "s", ServiceName: "svc", CAValidity: -time.Hour},
	} {
		if _, err := NewSelfManaged(o); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
	s, err := NewSelfManaged(SelfManagedOptions{Client: client, Namespace: "kube-system", SecretName: "s", ServiceName: "ccm-webhook", ExtraDNSNames: []string{"x.example.com"}})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"ccm-webhook.kube-system.svc", "ccm-webhook.kube-system.svc.cluster.local", "x.example.com"}
	if !sameStrings(s.policy.dnsNames, want) || s.o.Resync != time.Minute || s.o.CAValidity != 365*24*time.Hour ||
		s.o.CertValidity != 90*24*time.Hour || s.o.RenewFraction != 2.0/3 {
		t.Fatalf("defaults: %+v %q", s.o, s.policy.dnsNames)
	}
	if _, err := s.GetCertificate(nil); err == nil {
		t.Fatal("certificate before Run")
	}
}

// TestSelfManagedFake runs the sync loop against a fake clientset: Secret
// creation, loading, injection (only where needed, missing configurations
// tolerated) and pick-up of a Secret renewed by another replica.
func TestSelfManagedFake(t *testing.T) {
	client := fake.NewClientset(
		&admissionregistrationv1.MutatingWebhookConfiguration{ObjectMeta: metav1.ObjectMeta{Name: "m"},
			Webhooks: []admissionregistrationv1.MutatingWebhook{{Name: "a.example.com"}, {Name: "b.example.com"}}},
		&admissionregistrationv1.ValidatingWebhookConfiguration{ObjectMeta: metav1.ObjectMeta{Name: "v"},
			Webhooks: []admissionregistrationv1.ValidatingWebhook{{Name: "c.example.com"}}},
	)
	now := time.Now()
	s, err := NewSelfManaged(SelfManagedOptions{
		Client: client, Namespace: "ns", SecretName: "webhook-tls", ServiceName: "svc",
		ExtraIPs:        []net.IP{net.ParseIP("127.0.0.1")},
		MutatingConfigs: []string{"m", "missing"}, ValidatingConfigs: []string{"v"},
		Resync: 10 * time.Millisecond, Now: func() time.Time { return now },
	})
	if err != nil {
		t.Fatal(err)
	}
	ctx := t.Context()
	if err := s.sync(ctx); err != nil {
		t.Fatal(err)
	}
	select {
	case <-s.Ready():
	default:
		t.Fatal("not ready after a sync")
	}
	sec, err := client.CoreV1().Secrets("ns").Get(ctx, "webhook-tls", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if sec.Type != corev1.SecretTypeTLS || !bytes.Equal(sec.Data[KeyCABundle], s.CABundle()) || len(sec.Data[KeyCAKey]) == 0 {
		t.Fatalf("secret: type %s, keys %d", sec.Type, len(sec.Data))
	}
	m, _ := client.AdmissionregistrationV1().MutatingWebhookConfigurations().Get(ctx, "m", metav1.GetOptions{})
	v, _ := client.AdmissionregistrationV1().ValidatingWebhookConfigurations().Get(ctx, "v", metav1.GetOptions{})
	for _, b := range [][]byte{m.Webhooks[0].ClientConfig.CABundle, m.Webhooks[1].ClientConfig.CABundle, v.Webhooks[0].ClientConfig.CABundle} {
		if !bytes.Equal(b, s.CABundle()) {
			t.Fatal("caBundle not injected")
		}
	}
	served, _ := s.GetCertificate(nil)

	// Nothing due: no writes at all.
	client.ClearActions()
	if err := s.sync(ctx); err != nil {
		t.Fatal(err)
	}
	for _, a := range client.Actions() {
		if a.GetVerb() != "get" {
			t.Fatalf("unexpected %s %s", a.GetVerb(), a.GetResource().Resource)
		}
	}

	// 70 days later, another replica renews the serving certificate
	// first: this one serves it after its next sync, without renewing.
	now = now.Add(70 * 24 * time.Hour)
	other, _ := NewSelfManaged(SelfManagedOptions{Client: client, Namespace: "ns", SecretName: "webhook-tls", ServiceName: "svc",
		ExtraIPs: []net.IP{net.ParseIP("127.0.0.1")}, Now: func() time.Time { return now }})
	if err := other.sync(ctx); err != nil {
		t.Fatal(err)
	}
	renewed, _ := other.GetCertificate(nil)
	if renewed.Leaf.Equal(served.Leaf) {
		t.Fatal("other replica did not renew")
	}
	runCtx, cancel := context.WithCancel(ctx)
	done := make(chan error)
	go func() { done <- s.Run(runCtx) }()
	testkit.EventuallyEvery(t, 5*time.Second, 10*time.Millisecond, "the renewed certificate picked up", func() error {
		c, _ := s.GetCertificate(nil)
		if c == served {
			return errors.New("still serving the old one")
		}
		if !c.Leaf.Equal(renewed.Leaf) {
			t.Fatal("this replica renewed again instead of serving the other's certificate")
		}
		return nil
	})
	cancel()
	if err := <-done; err != nil {
		t.Fatalf("Run: %v", err)
	}
}
