package webhook

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	admissionv1 "k8s.io/api/admission/v1"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/example/cloud-provider-example/internal/testcluster"
	"github.com/example/cloud-provider-example/internal/testkit"
	"github.com/example/cloud-provider-example/preview"
)

const (
	testNS        = "webhook-test"
	authorKey     = "review.example.com/author"
	testWarning   = "example-cloud-controller-manager: test warning"
	configName    = "example-ccm-test"
	servingSecret = "webhook-serving"
)

// TestAPIServer runs the webhooks behind a real kube-apiserver.
func TestAPIServer(t *testing.T) {
	c := testcluster.Start(t)
	if _, err := c.Client.CoreV1().Namespaces().Create(t.Context(),
		&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: testNS}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Run("serves, injects and rotates", func(t *testing.T) { t.Parallel(); testServeAndRotate(t, c) })
	t.Run("injects when a configuration changes, as its RBAC allows", func(t *testing.T) { t.Parallel(); testInjectOnChange(t, c) })
	t.Run("replicas race to create", func(t *testing.T) {
		t.Parallel()
		client := conflictCounting(c.Admin)
		testRaceCreate(t, client)
		if client.n.Load() == 0 {
			t.Fatal("no replica lost a race: the test raced nothing")
		}
	})
	t.Run("replicas race to renew", func(t *testing.T) {
		t.Parallel()
		client := conflictCounting(c.Admin)
		testRaceRenew(t, client)
		if client.n.Load() == 0 {
			t.Fatal("no replica lost a race: the test raced nothing")
		}
	})
}

// conflicts counts the 409 answers (AlreadyExists, Conflict) the racing
// replicas got, to show that the races happened; and holds the racers'
// first writes until each of them has read (hold), so that they race
// on any machine: a replica that read and wrote before another started
// would leave it nothing to race for.
type conflicts struct {
	kubernetes.Interface
	rt http.RoundTripper
	n  atomic.Int32

	mu    sync.Mutex
	want  int           // reads to wait for (hold)
	reads int           // reads since hold
	read  chan struct{} // closed once want reads were sent
}

func (c *conflicts) RoundTrip(r *http.Request) (*http.Response, error) {
	if r.Method == http.MethodPut || r.Method == http.MethodPost {
		c.mu.Lock()
		read := c.read
		c.mu.Unlock()
		if read != nil {
			select {
			case <-read:
			case <-time.After(10 * time.Second): // the racers read no more: the test says it raced nothing
			}
		}
	}
	resp, err := c.rt.RoundTrip(r)
	if err == nil && resp.StatusCode == http.StatusConflict {
		c.n.Add(1)
	}
	if r.Method == http.MethodGet {
		c.mu.Lock()
		if c.reads++; c.reads == c.want {
			close(c.read)
		}
		c.mu.Unlock()
	}
	return resp, err
}

// hold makes writes wait until n more reads were sent.
func (c *conflicts) hold(n int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.want, c.reads, c.read = n, 0, make(chan struct{})
}

func conflictCounting(admin *rest.Config) *conflicts {
	cfg := rest.CopyConfig(admin)
	cfg.QPS = -1
	c := &conflicts{}
	cfg.WrapTransport = func(rt http.RoundTripper) http.RoundTripper { c.rt = rt; return c }
	c.Interface = kubernetes.NewForConfigOrDie(cfg)
	return c
}

func mutate(_ context.Context, req *admissionv1.AdmissionRequest) *admissionv1.AdmissionResponse {
	var obj metav1.PartialObjectMetadata
	if err := json.Unmarshal(req.Object.Raw, &obj); err != nil {
		return &admissionv1.AdmissionResponse{Allowed: true, Warnings: []string{"undecodable object"}}
	}
	resp := &admissionv1.AdmissionResponse{Allowed: true}
	if err := SetPatch(resp, AnnotationOp(obj.Annotations, authorKey, req.UserInfo.Username)); err != nil {
		panic(err)
	}
	return resp
}

func validate(context.Context, *admissionv1.AdmissionRequest) *admissionv1.AdmissionResponse {
	return &admissionv1.AdmissionResponse{Allowed: true, Warnings: []string{testWarning}}
}

func testServeAndRotate(t *testing.T, c *testcluster.Cluster) {
	ctx := t.Context()
	// Short lifetimes make the whole cycle happen in the test: a serving
	// certificate every ~4s, a new CA at ~10s (its serving certificate
	// from the next renewal, ~11s), the old CA gone at 15s.
	sm, err := NewSelfManaged(SelfManagedOptions{
		Client: c.Client, Namespace: testNS, SecretName: servingSecret,
		ServiceName: "example-ccm-webhook", ExtraIPs: []net.IP{net.ParseIP("127.0.0.1")},
		MutatingConfigs: []string{configName}, ValidatingConfigs: []string{configName},
		CAValidity: 15 * time.Second, CertValidity: 6 * time.Second, Resync: 200 * time.Millisecond,
	})
	if err != nil {
		t.Fatal(err)
	}
	addr, done, err := Start(ctx, Options{Addr: "127.0.0.1:0", Certificates: sm, Handlers: map[string]http.Handler{
		"/mutate": Handler("mutate", mutate), "/validate": Handler("validate", validate),
	}})
	if err != nil {
		t.Fatal(err)
	}
	runDone := make(chan error, 1)
	go func() { runDone <- sm.Run(ctx) }()
	t.Cleanup(func() {
		for name, ch := range map[string]<-chan error{"Run": runDone, "server": done} {
			if err := <-ch; err != nil {
				t.Errorf("%s: %v", name, err)
			}
		}
	})
	select {
	case <-sm.Ready():
	case <-time.After(30 * time.Second):
		t.Fatal("no certificate loaded")
	}

	// The configurations appear after the controller started.
	createConfigs(t, c.Client, configName, addr, testNS)
	testkit.EventuallyEvery(t, 45*time.Second, 100*time.Millisecond, "caBundle injection", func() error { return injected(t, c.Client, configName, sm.CABundle()) })
	ca1 := servedIssuer(t, addr, sm.CABundle())

	cfg := rest.CopyConfig(c.Admin)
	w := &preview.Collector{}
	cfg.WarningHandler = w
	client := kubernetes.NewForConfigOrDie(cfg)
	// The API server sees the new caBundle shortly after it is written.
	testkit.EventuallyEvery(t, 45*time.Second, 100*time.Millisecond, "a Service admitted by the webhooks", func() error { return createService(t, client, w) })

	// Rotation: the server, never restarted, serves a certificate from a
	// new CA while the API server keeps calling it.
	testkit.EventuallyEvery(t, 45*time.Second, 100*time.Millisecond, "a serving certificate from a new CA", func() error {
		if servedIssuer(t, addr, sm.CABundle()).Equal(ca1) {
			return errors.New("served by the old CA")
		}
		return nil
	})
	if err := createService(t, client, w); err != nil {
		t.Fatalf("after CA rotation: %v", err)
	}
	testkit.EventuallyEvery(t, 45*time.Second, 100*time.Millisecond, "the old CA to leave the bundle", func() error {
		if cas := bundleOf(t, map[string][]byte{KeyCABundle: sm.CABundle()}); slices.ContainsFunc(cas, ca1.Equal) {
			return errors.New("still in the bundle")
		}
		return nil
	})
	testkit.EventuallyEvery(t, 45*time.Second, 100*time.Millisecond, "caBundle injection", func() error { return injected(t, c.Client, configName, sm.CABundle()) })
	if err := createService(t, client, w); err != nil {
		t.Fatalf("after the old CA expired: %v", err)
	}
}

// createConfigs creates a mutating and a validating configuration named
// name, calling addr for Services in namespace ns.
func createConfigs(t *testing.T, client kubernetes.Interface, name, addr, ns string) {
	t.Helper()
	ignore, none := admissionregistrationv1.Ignore, admissionregistrationv1.SideEffectClassNone
	timeout := int32(5)
	rules := []admissionregistrationv1.RuleWithOperations{{
		Operations: []admissionregistrationv1.OperationType{admissionregistrationv1.Create, admissionregistrationv1.Update},
		Rule:       admissionregistrationv1.Rule{APIGroups: []string{""}, APIVersions: []string{"v1"}, Resources: []string{"services"}},
	}}
	nsSelector := &metav1.LabelSelector{MatchLabels: map[string]string{"kubernetes.io/metadata.name": ns}}
	url := func(path string) *string { u := "https://" + addr + path; return &u }
	if _, err := client.AdmissionregistrationV1().MutatingWebhookConfigurations().Create(t.Context(), &admissionregistrationv1.MutatingWebhookConfiguration{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Webhooks: []admissionregistrationv1.MutatingWebhook{{
			Name: "mutate.example.com", ClientConfig: admissionregistrationv1.WebhookClientConfig{URL: url("/mutate")},
			Rules: rules, FailurePolicy: &ignore, SideEffects: &none, TimeoutSeconds: &timeout,
			AdmissionReviewVersions: []string{"v1"}, NamespaceSelector: nsSelector,
		}},
	}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := client.AdmissionregistrationV1().ValidatingWebhookConfigurations().Create(t.Context(), &admissionregistrationv1.ValidatingWebhookConfiguration{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Webhooks: []admissionregistrationv1.ValidatingWebhook{{
			Name: "validate.example.com", ClientConfig: admissionregistrationv1.WebhookClientConfig{URL: url("/validate")},
			Rules: rules, FailurePolicy: &ignore, SideEffects: &none, TimeoutSeconds: &timeout,
			AdmissionReviewVersions: []string{"v1"}, NamespaceSelector: nsSelector,
		}},
	}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
}

// injected says what is missing until both configurations called name
// carry bundle.
func injected(t *testing.T, client kubernetes.Interface, name string, bundle []byte) error {
	t.Helper()
	m, err := client.AdmissionregistrationV1().MutatingWebhookConfigurations().Get(t.Context(), name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	v, err := client.AdmissionregistrationV1().ValidatingWebhookConfigurations().Get(t.Context(), name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(m.Webhooks[0].ClientConfig.CABundle, bundle) || !bytes.Equal(v.Webhooks[0].ClientConfig.CABundle, bundle) {
		return fmt.Errorf("configurations %s lack the current bundle", name)
	}
	return nil
}

var serviceSeq int

// createService creates a Service and says what the webhooks failed to do
// to it (nil: annotated by the mutating webhook, warned by the validating
// one).
func createService(t *testing.T, client kubernetes.Interface, w *preview.Collector) error {
	t.Helper()
	serviceSeq++
	w.Take()
	svc, err := client.CoreV1().Services(testNS).Create(t.Context(), &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("probe-%d", serviceSeq)},
		Spec:       corev1.ServiceSpec{Ports: []corev1.ServicePort{{Port: 80}}},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	got := w.Take()
	if svc.Annotations[authorKey] == "" || !slices.Contains(got, testWarning) {
		return fmt.Errorf("service %s: annotations %v, warnings %q", svc.Name, svc.Annotations, got)
	}
	return nil
}

// servedIssuer dials the server trusting bundle and returns the CA that
// issued the certificate it serves.
func servedIssuer(t *testing.T, addr string, bundle []byte) *x509.Certificate {
	t.Helper()
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(bundle)
	conn, err := tls.Dial("tcp", addr, &tls.Config{RootCAs: pool})
	if err != nil {
		t.Fatalf("dial %s: %v", addr, err)
	}
	defer conn.Close()
	chain := conn.ConnectionState().VerifiedChains[0]
	return chain[len(chain)-1]
}

// racers returns n replicas sharing Secret name, with clock now.
func racers(t *testing.T, client kubernetes.Interface, name string, n int, now func() time.Time) []*SelfManaged {
	t.Helper()
	var out []*SelfManaged
	for range n {
		s, err := NewSelfManaged(SelfManagedOptions{Client: client, Namespace: testNS, SecretName: name,
			ServiceName: "example-ccm-webhook", Now: now})
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, s)
	}
	return out
}

// race runs ensureSecret on every replica at once and checks that they
// all end with the data that is in the Secret.
func race(t *testing.T, client kubernetes.Interface, name string, rs []*SelfManaged) map[string][]byte {
	t.Helper()
	if c, ok := client.(*conflicts); ok {
		c.hold(len(rs))
	}
	results := make([]map[string][]byte, len(rs))
	start := make(chan struct{})
	var wg sync.WaitGroup
	for i, s := range rs {
		wg.Go(func() {
			<-start
			data, err := s.ensureSecret(t.Context())
			if err != nil {
				t.Error(err)
			}
			results[i] = data
		})
	}
	close(start)
	wg.Wait()
	sec, err := client.CoreV1().Secrets(testNS).Get(t.Context(), name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for i, data := range results {
		if !sameData(data, sec.Data) {
			t.Fatalf("replica %d ended with other certificates than the Secret's", i)
		}
	}
	return sec.Data
}

func testRaceCreate(t *testing.T, client kubernetes.Interface) {
	t.Helper()
	for round := range 3 {
		name := fmt.Sprintf("race-create-%d", round)
		data := race(t, client, name, racers(t, client, name, 4, time.Now))
		if len(bundleOf(t, data)) != 1 {
			t.Fatal("more than one CA in a new Secret")
		}
	}
	// Run (not just ensureSecret): two replicas serve the same certificate.
	rs := racers(t, client, "race-run", 2, time.Now)
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	for _, s := range rs {
		go func() { _ = s.Run(ctx) }()
	}
	for _, s := range rs {
		select {
		case <-s.Ready():
		case <-time.After(30 * time.Second):
			t.Fatal("replica not ready")
		}
	}
	a, _ := rs[0].GetCertificate(nil)
	b, _ := rs[1].GetCertificate(nil)
	if !a.Leaf.Equal(b.Leaf) || !bytes.Equal(rs[0].CABundle(), rs[1].CABundle()) {
		t.Fatal("replicas serve different certificates")
	}
}

// testRaceRenew has four replicas find the serving certificate due at the
// same time: one renews, the others lose on the resourceVersion, re-read
// and keep its certificate.
func testRaceRenew(t *testing.T, client kubernetes.Interface) {
	const name = "race-renew"
	before := race(t, client, name, racers(t, client, name, 1, time.Now))
	sec, err := client.CoreV1().Secrets(testNS).Get(t.Context(), name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	wi, err := client.CoreV1().Secrets(testNS).Watch(t.Context(), metav1.ListOptions{
		FieldSelector: "metadata.name=" + name, ResourceVersion: sec.ResourceVersion})
	if err != nil {
		t.Fatal(err)
	}
	defer wi.Stop()

	later := time.Now().Add(70 * 24 * time.Hour) // serving certificate due at 60 days
	after := race(t, client, name, racers(t, client, name, 4, func() time.Time { return later }))
	if bytes.Equal(after[corev1.TLSCertKey], before[corev1.TLSCertKey]) {
		t.Fatal("serving certificate not renewed")
	}
	if !bytes.Equal(after[KeyCABundle], before[KeyCABundle]) || !bytes.Equal(after[KeyCAKey], before[KeyCAKey]) {
		t.Fatal("CA changed by a serving renewal")
	}
	updates := 0
	quiet := time.After(2 * time.Second)
	for {
		select {
		case ev := <-wi.ResultChan():
			if ev.Type == watch.Modified {
				updates++
			}
			continue
		case <-quiet:
		}
		break
	}
	if updates != 1 {
		t.Fatalf("%d updates of the Secret, want 1", updates)
	}
}
