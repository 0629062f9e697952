package engine_test

import (
	"archive/zip"
	"bytes"
	"context"
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	corev1 "k8s.io/api/core/v1"

	"github.com/example/cloud-provider-example/annotations"
	"github.com/example/cloud-provider-example/engine"
	"github.com/example/cloud-provider-example/exampleapi"
	"github.com/example/cloud-provider-example/internal/testkit"
	"github.com/example/cloud-provider-example/lbmodel"
	"github.com/example/cloud-provider-example/renderer"
	"github.com/example/cloud-provider-example/simulator/simtest"
	"github.com/example/cloud-provider-example/tfprovider"
)

// secrets stands in for the Kubernetes TLS Secrets (the controller's
// source reads them with client-go; the e2e covers that part).
type secrets struct {
	mu    sync.Mutex
	certs map[string]simtest.Cert
	gone  bool
}

// newTLSFixture is newFixtureWith whose engine reads its TLS Secrets from
// the returned source.
func newTLSFixture(tb testing.TB, concurrency int, o engine.Options) (*fixture, *secrets) {
	tb.Helper()
	src := &secrets{}
	o.TLS = src.read
	return newFixtureWith(tb, concurrency, o), src
}

// renew puts a new certificate (made with o) in the Secret web-tls, the
// one httpsService names, and returns it.
func (s *secrets) renew(tb testing.TB, o simtest.CertOptions) simtest.Cert {
	c := simtest.NewCert(tb, o)
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.certs == nil {
		s.certs = map[string]simtest.Cert{}
	}
	s.certs["web-tls"] = c
	return c
}

func (s *secrets) read(_ context.Context, svc *corev1.Service) (*engine.TLS, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.gone {
		return nil, errors.New("the Secrets are gone")
	}
	ann, err := annotations.Parse(svc.Annotations)
	if err != nil || len(ann.TLSSecrets) == 0 {
		return nil, nil //nolint:nilerr // as the controller's source
	}
	tls := &engine.TLS{Certificates: map[string]string{}, Keys: map[string]string{}}
	for _, n := range ann.TLSSecrets {
		tls.Certificates[n], tls.Keys[n] = s.certs[n].CertPEM, s.certs[n].KeyPEM
	}
	return tls, nil
}

func httpsService(name string) *corev1.Service {
	svc := service(name, 80, 443)
	svc.Annotations = map[string]string{
		string(annotations.LBHTTPPorts):           "80",
		string(annotations.LBHTTPSPorts):          "443",
		string(annotations.LBTLSSecrets):          "web-tls",
		string(annotations.LBRedirectHTTPToHTTPS): "true",
	}
	return svc
}

func TestTLSKeysEnvIsTheProviders(t *testing.T) {
	if renderer.TLSKeysEnv != tfprovider.EnvPrivateKeys {
		t.Fatalf("renderer.TLSKeysEnv %q, the provider reads %q", renderer.TLSKeysEnv, tfprovider.EnvPrivateKeys)
	}
}

// A Service's certificate from a TLS Secret: uploaded, served by its https
// listener, rotated in place (the load balancer keeps its id; the old
// certificate goes after), also through a saved plan approved later (the
// key is given again at apply), and destroyed without the Secret. The key
// is in no file the controller writes, no plan and no plan text.
func TestCertificatesFromTLSSecrets(t *testing.T) {
	f, src := newTLSFixture(t, 2, engine.Options{PlanText: true})
	nodes := []*corev1.Node{f.node(t, "node-a")}
	svc := httpsService("web")
	c1 := src.renew(t, simtest.CertOptions{CommonName: "web.example.test", RSABits: 2048})
	var texts []string
	keep := func(out *engine.Outcome) {
		if out != nil && out.Planned != nil {
			texts = append(texts, out.Planned.Text)
		}
	}

	lb, out, err := f.eng.ReconcileLoadBalancer(testkit.Context(t), annotations.Read(svc), nodes, auto)
	keep(out)
	if err != nil {
		t.Fatal(err)
	}
	cert1 := f.servedCertificate(t, lb.ID, c1)

	// The Secret is renewed: a new certificate, the load balancer updated
	// in place, the old certificate deleted.
	c2 := src.renew(t, simtest.CertOptions{CommonName: "web.example.test"})
	lb2, out, err := f.eng.ReconcileLoadBalancer(testkit.Context(t), annotations.Read(svc), nodes, auto)
	keep(out)
	if err != nil {
		t.Fatal(err)
	}
	if lb2.ID != lb.ID || out.Applied.Summary.Add != 1 || out.Applied.Summary.Change != 1 || out.Applied.Summary.Remove != 1 {
		t.Fatalf("rotation: lb %s → %s, summary %+v; want the same load balancer changed in place, one certificate replaced", lb.ID, lb2.ID, out.Applied.Summary)
	}
	cert2 := f.servedCertificate(t, lb.ID, c2)
	if cert2 == cert1 {
		t.Fatal("the rotated certificate kept its id")
	}
	f.certificatesAre(t, cert2)

	// Under manual the plan is saved and applied after approval, in
	// another call: the key, in no saved plan, is given again.
	c3 := src.renew(t, simtest.CertOptions{CommonName: "web.example.test"})
	_, out, err = f.eng.ReconcileLoadBalancer(testkit.Context(t), annotations.Read(svc), nodes, reviewed(annotations.ApplyManual))
	keep(out)
	id := awaiting(t, err)
	if _, _, err = f.eng.ReconcileLoadBalancer(testkit.Context(t), annotations.Read(svc), nodes, reviewed(annotations.ApplyManual, id)); err != nil {
		t.Fatalf("approved rotation: %v", err)
	}
	cert3 := f.servedCertificate(t, lb.ID, c3)
	f.certificatesAre(t, cert3)

	for _, c := range []simtest.Cert{c1, c2, c3} {
		needle := keyBody(c.KeyPEM)
		for i, text := range texts {
			if strings.Contains(text, needle) {
				t.Errorf("plan text %d holds a private key", i)
			}
		}
		if path := fileWith(t, f.eng.Runner().WorkDir(), needle); path != "" {
			t.Errorf("%s holds a private key", path)
		}
		if path := fileWith(t, f.stateDir, needle); path != "" {
			t.Errorf("%s holds a private key", path)
		}
	}
	// The scan finds a key where one is: the cloud keeps it.
	if fileWith(t, f.sim.DataDir, keyBody(c3.KeyPEM)) == "" {
		t.Error("the scan does not find the key the cloud stores: it proves nothing")
	}
	if len(texts) != 3 {
		t.Errorf("%d plan texts, want 3", len(texts))
	}

	// The Service goes after its Secret: the destroy reads no Secret.
	src.mu.Lock()
	src.gone = true
	src.mu.Unlock()
	if _, err := f.eng.RemoveLoadBalancer(testkit.Context(t), annotations.Read(svc), auto); err != nil {
		t.Fatal(err)
	}
	if _, err := f.api.GetLoadBalancer(testkit.Context(t), lb.ID); !exampleapi.IsNotFound(err) {
		t.Fatalf("load balancer survived: %v", err)
	}
	f.certificatesAre(t)
}

// A Secret the source cannot read fails the reconcile before anything is
// planned, and the load balancer keeps what it serves.
func TestTLSSecretUnreadableKeepsServing(t *testing.T) {
	f, src := newTLSFixture(t, 1, engine.Options{})
	nodes := []*corev1.Node{f.node(t, "node-a")}
	svc := httpsService("web")
	c1 := src.renew(t, simtest.CertOptions{})
	lb := applied(t, f.eng, svc, nodes)
	src.mu.Lock()
	src.gone = true
	src.mu.Unlock()
	procs := total(f.eng.Runner().Processes())
	svc.Spec.Ports[0].NodePort++ // something to plan, were the Secret readable
	if _, out, err := f.eng.ReconcileLoadBalancer(testkit.Context(t), annotations.Read(svc), nodes, auto); err == nil || !strings.Contains(err.Error(), "the Secrets are gone") || out.Planned != nil {
		t.Fatalf("unreadable Secret: %+v %v", out, err)
	}
	if total(f.eng.Runner().Processes()) != procs {
		t.Error("terraform ran although the Secret could not be read")
	}
	f.servedCertificate(t, lb.ID, c1)
}

// servedCertificate checks lb's https listener serves c (and its http
// listener redirects to it), and returns c's id.
func (f *fixture) servedCertificate(t *testing.T, lbID string, c simtest.Cert) string {
	t.Helper()
	lb, err := f.api.GetLoadBalancer(testkit.Context(t), lbID)
	if err != nil {
		t.Fatal(err)
	}
	var id string
	for _, l := range lb.Listeners {
		switch l.Protocol {
		case "https":
			if len(l.CertificateIDs) != 1 {
				t.Fatalf("https listener: %+v", l)
			}
			id = l.CertificateIDs[0]
		case "http":
			if l.RedirectToHTTPSPort != 443 {
				t.Errorf("http listener does not redirect to 443: %+v", l)
			}
		}
	}
	cert, err := f.api.GetCertificate(testkit.Context(t), id)
	if err != nil {
		t.Fatalf("certificate %q: %v", id, err)
	}
	if cert.Fingerprint != c.Fingerprint {
		t.Fatalf("load balancer serves %s (%s), want fingerprint %s", id, cert.Fingerprint, c.Fingerprint)
	}
	return id
}

func (f *fixture) certificatesAre(t *testing.T, ids ...string) {
	t.Helper()
	list, err := f.api.ListCertificates(testkit.Context(t), exampleapi.CertificateFilter{})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, c := range list {
		got = append(got, c.ID)
	}
	slices.Sort(got)
	slices.Sort(ids)
	if !slices.Equal(got, ids) {
		t.Fatalf("certificates in the cloud: %v, want %v", got, ids)
	}
}

// keyBody is a line from the middle of a PEM key: what any copy of the
// key, however quoted, contains.
func keyBody(pem string) string {
	lines := strings.Split(strings.TrimSpace(pem), "\n")
	return lines[len(lines)/2]
}

// fileWith returns the first file under dir that contains needle.
func fileWith(t *testing.T, dir, needle string) string {
	t.Helper()
	var found string
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || found != "" {
			return err
		}
		if info, err := d.Info(); err != nil || !info.Mode().IsRegular() {
			return err
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		if strings.Contains(string(data), needle) {
			found = path
		}
		return nil
	})
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		t.Fatal(err)
	}
	return found
}

// A TLS Service's plan held for approval is kept as the record keeps it
// (its saved plan file), holding no key; a restarted controller applies it
// once approved, the key read again from the Secret.
func TestTLSPendingPlanSurvivesRestart(t *testing.T) {
	store := newMemStore()
	f, src := newTLSFixture(t, 2, engine.Options{Plans: store})
	nodes := []*corev1.Node{f.node(t, "node-a")}
	svc := httpsService("held")
	c := src.renew(t, simtest.CertOptions{})
	manual := annotations.ApplyManual
	id, out := planned(t, f.eng, svc, nodes)
	store.keep(t, string(svc.UID), out)
	entries := zipEntries(t, store.kept[out.Workspace].Pending.Data)
	if len(entries) < 3 || !strings.Contains(strings.Join(entries, ""), c.CertPEM[30:80]) {
		t.Fatalf("the saved plan's %d entries do not show the certificate: the search would prove nothing", len(entries))
	}
	for _, e := range entries {
		if strings.Contains(e, keyBody(c.KeyPEM)) {
			t.Fatal("the saved plan holds the private key")
		}
	}

	next := f.engine(t, 2, engine.Options{Plans: store, TLS: src.read})
	lb, out, err := next.ReconcileLoadBalancer(testkit.Context(t), annotations.Read(svc), nodes, reviewed(manual, id))
	if err != nil || out.Applied == nil || out.Applied.ID != id || out.Planned != nil || lb == nil {
		t.Fatalf("approved after restart: %+v %v", out, err)
	}
	f.servedCertificate(t, lb.ID, c)
}

// zipEntries are the inflated entries of a saved plan (a zip archive).
func zipEntries(t *testing.T, data []byte) []string {
	t.Helper()
	r, err := zip.NewReader(bytes.NewReader(data), int64(len(data)))
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, f := range r.File {
		rc, err := f.Open()
		if err != nil {
			t.Fatal(err)
		}
		b, err := io.ReadAll(rc)
		_ = rc.Close()
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, string(b))
	}
	return out
}

// An apply killed after it uploaded a certificate, before its state
// recorded it, leaves the certificate (and a copy of the key) in the
// cloud: the next reconcile takes it over instead of uploading another.
func TestTLSAdoptsUnrecordedCertificate(t *testing.T) {
	f, src := newTLSFixture(t, 1, engine.Options{})
	nodes := []*corev1.Node{f.node(t, "node-a")}
	svc := httpsService("web")
	c := src.renew(t, simtest.CertOptions{})
	left, err := f.api.CreateCertificate(testkit.Context(t), exampleapi.CreateCertificateRequest{
		Name: "cert-" + c.Fingerprint[:16], Region: region, CertificatePEM: c.CertPEM, PrivateKeyPEM: c.KeyPEM,
		Tags: map[string]string{
			lbmodel.TagManagedBy: "example-cloud-controller-manager", lbmodel.TagClusterID: "test",
			lbmodel.TagServiceNamespace: "default", lbmodel.TagServiceName: "web", lbmodel.TagServiceUID: "uid-web",
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	lb := applied(t, f.eng, svc, nodes)
	if id := f.servedCertificate(t, lb.ID, c); id != left.ID {
		t.Errorf("serves %s, want %s, the certificate the interrupted apply left", id, left.ID)
	}
	f.certificatesAre(t, left.ID)
}
