package engine_test

import (
	"context"
	"slices"
	"testing"

	corev1 "k8s.io/api/core/v1"

	"github.com/example/cloud-provider-example/annotations"
	"github.com/example/cloud-provider-example/engine"
	"github.com/example/cloud-provider-example/exampleapi"
	"github.com/example/cloud-provider-example/internal/testkit"
	"github.com/example/cloud-provider-example/lbmodel"
	"github.com/example/cloud-provider-example/renderer"
	"github.com/example/cloud-provider-example/simulator/simtest"
)

// certificateFinder lists the certificates of the owner that no load
// balancer serves but the owner's own, as the controller's
// FindCertificates does.
func certificateFinder(f **fixture) func(context.Context, map[string]string) ([]engine.UnusedCertificate, error) {
	return func(ctx context.Context, owner map[string]string) ([]engine.UnusedCertificate, error) {
		certs, err := (*f).api.StrayCertificates(ctx, "", owner)
		if err != nil {
			return nil, err
		}
		var out []engine.UnusedCertificate
		for _, c := range certs {
			out = append(out, engine.UnusedCertificate{ID: c.ID, CertificatePEM: c.CertificatePEM, CreatedAt: c.CreatedAt})
		}
		return out, nil
	}
}

// uploadUnrecorded uploads c as an apply for svc that was killed before
// its state recorded the certificate.
func (f *fixture) uploadUnrecorded(t *testing.T, svc *corev1.Service, c simtest.Cert) string {
	t.Helper()
	left, err := f.api.CreateCertificate(testkit.Context(t), exampleapi.CreateCertificateRequest{
		Name: "cert-" + c.Fingerprint[:16], Region: region, CertificatePEM: c.CertPEM, PrivateKeyPEM: c.KeyPEM,
		Tags: renderer.OwnerTags(svc, "test"),
	})
	if err != nil {
		t.Fatal(err)
	}
	return left.ID
}

// renewedAfterKilledUpload is a fixture whose HTTPS Service web had an
// apply killed after it uploaded the certificate left (and whatever
// killed does), and whose TLS Secret was renewed since.
func renewedAfterKilledUpload(t *testing.T, killed func(f *fixture, svc *corev1.Service, left string)) (*fixture, *corev1.Service, []*corev1.Node, string, simtest.Cert) {
	t.Helper()
	var f *fixture
	f, src := newTLSFixture(t, 1, engine.Options{FindCertificates: certificateFinder(&f)})
	nodes := []*corev1.Node{f.node(t, "node-a")}
	svc := httpsService("web")
	left := f.uploadUnrecorded(t, svc, simtest.NewCert(t, simtest.CertOptions{}))
	killed(f, svc, left)
	return f, svc, nodes, left, src.renew(t, simtest.CertOptions{})
}

// The apply that uploaded the certificate was killed before its state
// recorded it, and the TLS Secret was renewed before the next apply: the
// next apply imports the unrecorded one and replaces it with the renewed
// certificate, so no copy of the old key stays in the cloud.
func TestTLSReplacesUnrecordedCertificateOfRenewedSecret(t *testing.T) {
	f, svc, nodes, left, renewed := renewedAfterKilledUpload(t, func(*fixture, *corev1.Service, string) {})
	lb, out, err := f.eng.ReconcileLoadBalancer(testkit.Context(t), annotations.Read(svc), nodes, auto)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(out.RecoveredCertificates, []string{left}) {
		t.Errorf("recovered %v, want [%s]", out.RecoveredCertificates, left)
	}
	served := f.servedCertificate(t, lb.ID, renewed)
	if served == left {
		t.Fatalf("serves the certificate of the old text %s", left)
	}
	f.certificatesAre(t, served)
}

// The same, but the Service is deleted before any apply recorded its
// certificate: the deletion imports it and destroys it.
func TestTLSDeleteDestroysUnrecordedCertificate(t *testing.T) {
	var f *fixture
	f, src := newTLSFixture(t, 1, engine.Options{FindCertificates: certificateFinder(&f)})
	svc := httpsService("web")
	c := src.renew(t, simtest.CertOptions{})
	left := f.uploadUnrecorded(t, svc, c)
	// Another Service's unused certificate is not its to destroy.
	other := service("api", 443)
	other.UID = "uid-api"
	kept := f.uploadUnrecorded(t, other, simtest.NewCert(t, simtest.CertOptions{}))

	out, err := f.eng.RemoveLoadBalancer(testkit.Context(t), annotations.Read(svc), auto)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(out.RecoveredCertificates, []string{left}) {
		t.Errorf("recovered %v, want [%s]", out.RecoveredCertificates, left)
	}
	f.certificatesAre(t, kept)
}

// The killed apply had also created the load balancer, serving the
// unrecorded certificate, and the TLS Secret was renewed: the next apply
// adopts the load balancer, moves it to the renewed certificate and
// destroys the unrecorded one (found by the chaos run).
func TestTLSReplacesCertificateOfUnrecordedLoadBalancer(t *testing.T) {
	var orphan *exampleapi.LoadBalancer
	f, svc, nodes, left, renewed := renewedAfterKilledUpload(t, func(f *fixture, svc *corev1.Service, left string) {
		var err error
		orphan, err = f.api.CreateLoadBalancer(testkit.Context(t), exampleapi.LoadBalancerSpec{
			Name: renderer.LoadBalancerName(svc, "test"), Region: region, IPFamily: "ipv4",
			LoadBalancerSettings: exampleapi.LoadBalancerSettings{
				Type: "lb-small", Algorithm: "round_robin",
				Listeners: []exampleapi.Listener{{Protocol: "https", Port: 443, TargetPort: 30443, CertificateIDs: []string{left}}},
				Tags: map[string]string{lbmodel.TagManagedBy: "example-cloud-controller-manager", lbmodel.TagClusterID: "test",
					lbmodel.TagServiceNamespace: svc.Namespace, lbmodel.TagServiceName: svc.Name, lbmodel.TagServiceUID: string(svc.UID)},
			},
		})
		if err != nil {
			t.Fatal(err)
		}
	})
	lb, out, err := f.eng.ReconcileLoadBalancer(testkit.Context(t), annotations.Read(svc), nodes, auto)
	if err != nil {
		t.Fatal(err)
	}
	if lb.ID != orphan.ID {
		t.Errorf("load balancer %s, want the unrecorded %s adopted", lb.ID, orphan.ID)
	}
	if !slices.Equal(out.RecoveredCertificates, []string{left}) {
		t.Errorf("recovered %v, want [%s]", out.RecoveredCertificates, left)
	}
	served := f.servedCertificate(t, lb.ID, renewed)
	f.certificatesAre(t, served)
}
