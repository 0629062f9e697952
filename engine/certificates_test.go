package engine_test

import (
	"context"
	"slices"
	"testing"

	corev1 "k8s.io/api/core/v1"

	"github.com/example/cloud-provider-example/engine"
	"github.com/example/cloud-provider-example/exampleapi"
	"github.com/example/cloud-provider-example/renderer"
	"github.com/example/cloud-provider-example/simulator/simtest"
)

// certificateFinder lists the certificates with every owner tag that no
// load balancer uses, as the controller's FindCertificates does.
func certificateFinder(f **fixture) func(context.Context, map[string]string) ([]engine.UnusedCertificate, error) {
	return func(ctx context.Context, owner map[string]string) ([]engine.UnusedCertificate, error) {
		certs, err := (*f).api.ListCertificates(ctx, exampleapi.CertificateFilter{})
		if err != nil {
			return nil, err
		}
		used, err := (*f).api.CertificatesInUse(ctx, "")
		if err != nil {
			return nil, err
		}
		var out []engine.UnusedCertificate
		for _, c := range certs {
			if !used[c.ID] && c.Tags[renderer.TagServiceUID] == owner[renderer.TagServiceUID] && c.Tags[renderer.TagClusterID] == owner[renderer.TagClusterID] {
				out = append(out, engine.UnusedCertificate{ID: c.ID, CertificatePEM: c.CertificatePEM, CreatedAt: c.CreatedAt})
			}
		}
		return out, nil
	}
}

// uploadUnrecorded uploads c as an apply for svc that was killed before
// its state recorded the certificate.
func (f *fixture) uploadUnrecorded(t *testing.T, svc *corev1.Service, c simtest.Cert) string {
	t.Helper()
	left, err := f.api.CreateCertificate(ctxT(t), exampleapi.CreateCertificateRequest{
		Name: "cert-" + c.Fingerprint[:16], Region: region, CertificatePEM: c.CertPEM, PrivateKeyPEM: c.KeyPEM,
		Tags: renderer.OwnerTags(svc, "test"),
	})
	if err != nil {
		t.Fatal(err)
	}
	return left.ID
}

// The apply that uploaded the certificate was killed before its state
// recorded it, and the TLS Secret was renewed before the next apply: the
// next apply imports the unrecorded one and replaces it with the renewed
// certificate, so no copy of the old key stays in the cloud.
func TestTLSReplacesUnrecordedCertificateOfRenewedSecret(t *testing.T) {
	src := &secrets{}
	var f *fixture
	f = newFixtureWith(t, 1, engine.Options{TLS: src.read, FindCertificates: certificateFinder(&f)})
	nodes := []*corev1.Node{f.node(t, "node-a")}
	svc := httpsService("web")
	old, renewed := simtest.NewCert(t, simtest.CertOptions{}), simtest.NewCert(t, simtest.CertOptions{})
	left := f.uploadUnrecorded(t, svc, old)
	src.set("web-tls", renewed)

	lb, out, err := f.eng.ReconcileLoadBalancer(ctxT(t), svc, nodes, auto)
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
	src := &secrets{}
	var f *fixture
	f = newFixtureWith(t, 1, engine.Options{TLS: src.read, FindCertificates: certificateFinder(&f)})
	svc := httpsService("web")
	c := simtest.NewCert(t, simtest.CertOptions{})
	left := f.uploadUnrecorded(t, svc, c)
	src.set("web-tls", c)
	// Another Service's unused certificate is not its to destroy.
	other := service("api", 443)
	other.UID = "uid-api"
	kept := f.uploadUnrecorded(t, other, simtest.NewCert(t, simtest.CertOptions{}))

	out, err := f.eng.RemoveLoadBalancer(ctxT(t), svc, auto)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(out.RecoveredCertificates, []string{left}) {
		t.Errorf("recovered %v, want [%s]", out.RecoveredCertificates, left)
	}
	f.certificatesAre(t, kept)
}
